//! Small HTML and URL helpers shared by the book preprocessors, the page cache and
//! the HTTP layer.

/// Escapes `text` for use inside an element or a double-quoted attribute value.
///
/// One function for both contexts: escaping quotes in text is harmless, and a
/// single helper means no call site picks the wrong one.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Reverses the entity escapes mdBook and [`escape`] write into attribute values,
/// so a link such as `a.html?x=1&amp;y=2` can be checked as the browser sees it.
pub(crate) fn unescape_attribute(value: &str) -> String {
    value
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&#x27;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// Where the `<head>` element's content starts: just after `<head ...>`.
pub(crate) fn head_content_start(html: &str) -> Option<usize> {
    let bytes = html.as_bytes();
    let mut from = 0;
    while let Some(pos) = find_ascii_ci(&bytes[from..], b"<head") {
        let start = from + pos;
        let after = start + 5;
        // `<header>` also starts with `<head`: the next byte decides.
        match bytes.get(after) {
            Some(b'>') => return Some(after + 1),
            Some(c) if c.is_ascii_whitespace() => {
                return html[after..].find('>').map(|end| after + end + 1);
            }
            _ => from = after,
        }
    }
    None
}

/// Case-insensitive search for an ASCII needle.
pub(crate) fn find_ascii_ci(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || haystack.len() < needle.len() {
        return None;
    }
    (0..=haystack.len() - needle.len())
        .find(|&i| haystack[i..i + needle.len()].eq_ignore_ascii_case(needle))
}

/// The inline `<script>` elements of a page (those without `src`), as their
/// exact text content: what a CSP `'sha256-…'` source must hash.
pub(crate) fn inline_scripts(html: &str) -> Vec<&str> {
    let bytes = html.as_bytes();
    let mut scripts = Vec::new();
    let mut from = 0;
    while let Some(pos) = find_ascii_ci(&bytes[from..], b"<script") {
        let tag_start = from + pos;
        let Some(tag_len) = html[tag_start..].find('>') else {
            break;
        };
        let content_start = tag_start + tag_len + 1;
        let tag = &html[tag_start..content_start];
        let Some(close) = find_ascii_ci(&bytes[content_start..], b"</script") else {
            break;
        };
        let content_end = content_start + close;
        let has_src = tag
            .to_ascii_lowercase()
            .split(|c: char| c.is_ascii_whitespace() || c == '>')
            .skip(1)
            .any(|attr| attr == "src" || attr.starts_with("src="));
        if !has_src {
            scripts.push(&html[content_start..content_end]);
        }
        from = content_end;
    }
    scripts
}

/// Decodes `%XX` escapes; malformed ones are kept as written.
pub(crate) fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_unescapes() {
        let raw = r#"<a href="x">&'</a>"#;
        let escaped = escape(raw);
        assert_eq!(escaped, "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
        assert_eq!(unescape_attribute(&escaped), raw);
    }

    #[test]
    fn finds_the_head_but_not_the_header() {
        let html = "<html><header></header><HEAD lang=en><title>t</title></head>";
        let at = head_content_start(html).unwrap();
        assert!(html[at..].starts_with("<title>"));
        assert_eq!(head_content_start("<body></body>"), None);
    }

    #[test]
    fn lists_only_inline_scripts() {
        let html = r#"<script src="a.js"></script><script>one()</script><SCRIPT type="module">two()</SCRIPT>"#;
        assert_eq!(inline_scripts(html), ["one()", "two()"]);
    }
}
