//! ```` ```mermaid ```` blocks become `<pre class="mermaid">` elements that the
//! vendored Mermaid script (loaded by the theme) turns into diagrams.

use super::markdown::fenced_blocks;
use crate::html::escape;

/// Replaces every fenced `mermaid` block of `content`.
pub(super) fn expand(content: &str) -> String {
    let mut out = String::with_capacity(content.len());
    let mut copied = 0;
    for block in fenced_blocks(content, "mermaid") {
        out.push_str(&content[copied..block.range.start]);
        // Newlines as character references keep the element on one line, so it
        // stays a single HTML block even inside a list item or a block quote.
        let source = escape(block.code.trim_end()).replace('\n', "&#10;");
        out.push_str(&format!(r#"<pre class="mermaid">{source}</pre>"#));
        if content[block.range.clone()].ends_with('\n') {
            out.push('\n');
        }
        copied = block.range.end;
    }
    out.push_str(&content[copied..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mermaid_blocks_become_escaped_pre_elements() {
        let md =
            "Before\n\n```mermaid\ngraph LR\n  W[writer] -->|\"pages\"| R<reader>\n```\n\nAfter\n";
        let out = expand(md);
        assert_eq!(
            out,
            "Before\n\n<pre class=\"mermaid\">graph LR&#10;  W[writer] --&gt;|&quot;pages&quot;| R&lt;reader&gt;</pre>\n\nAfter\n"
        );
    }

    #[test]
    fn other_code_is_untouched() {
        let md = "```rust\nlet a = 1 < 2;\n```\n";
        assert_eq!(expand(md), md);
    }
}
