//! Where a chapter's code is: directives and diagrams are only expanded outside it.

use std::ops::Range;

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};

/// The Markdown extensions mdBook enables, so our parse agrees with its parse.
fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_HEADING_ATTRIBUTES
}

/// Byte ranges of code blocks and inline code spans in `content`.
pub(super) fn code_ranges(content: &str) -> Vec<Range<usize>> {
    Parser::new_ext(content, options())
        .into_offset_iter()
        .filter_map(|(event, range)| match event {
            Event::Start(Tag::CodeBlock(_)) | Event::Code(_) => Some(range),
            _ => None,
        })
        .collect()
}

/// A fenced code block whose info string starts with a given language.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct FencedBlock {
    /// The whole block, fences included.
    pub range: Range<usize>,
    /// The code inside, as Markdown unindents it.
    pub code: String,
}

/// Every fenced block whose language (first word of the info string) is `language`.
pub(super) fn fenced_blocks(content: &str, language: &str) -> Vec<FencedBlock> {
    let mut blocks = Vec::new();
    let mut current: Option<FencedBlock> = None;
    for (event, range) in Parser::new_ext(content, options()).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info)))
                if info.split_whitespace().next() == Some(language) =>
            {
                current = Some(FencedBlock {
                    range,
                    code: String::new(),
                });
            }
            Event::Text(text) => {
                if let Some(block) = current.as_mut() {
                    block.code.push_str(&text);
                }
            }
            Event::End(TagEnd::CodeBlock) => blocks.extend(current.take()),
            _ => {}
        }
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_code_blocks_and_spans() {
        let md = "a `b` c\n\n```rust\nx\n```\n\nd\n";
        let ranges = code_ranges(md);
        assert_eq!(ranges.len(), 2);
        assert_eq!(&md[ranges[0].clone()], "`b`");
        assert!(md[ranges[1].clone()].starts_with("```rust"));
    }

    #[test]
    fn finds_fenced_blocks_by_language() {
        let md = "```mermaid\ngraph LR\n  A --> B\n```\n\n```rust\nfn main() {}\n```\n";
        let blocks = fenced_blocks(md, "mermaid");
        assert_eq!(blocks.len(), 1);
        assert_eq!(blocks[0].code, "graph LR\n  A --> B\n");
        assert!(md[blocks[0].range.clone()].starts_with("```mermaid"));
    }
}
