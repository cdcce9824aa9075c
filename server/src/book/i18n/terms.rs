//! The fixed term pairs (`po/terms.tsv`): the words a Chinese reader knows these
//! ideas by, used the same way everywhere, listed on a page (`{{#terms}}`) and
//! checked against the translation by a test.

/// `po/terms.tsv` as this binary was built with it.
const TERMS_TSV: &str = include_str!("../../../../po/terms.tsv");

/// One fixed pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Term {
    /// The English term, lower case.
    pub(crate) english: String,
    /// Its Chinese.
    pub(crate) chinese: String,
    /// Whether every translation of a paragraph that uses the term must use this word
    /// (no for a word that mostly names a system call, as `splice`).
    pub(crate) checked: bool,
}

/// Every pair, in the file's order.
pub(crate) fn all() -> Vec<Term> {
    TERMS_TSV
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|line| {
            let mut cells = line.split('\t');
            Some(Term {
                english: cells.next()?.trim().to_lowercase(),
                chinese: cells.next()?.trim().to_string(),
                checked: cells.next().is_some_and(|c| c.trim() == "yes"),
            })
        })
        .collect()
}

/// Whether `msgid`'s prose (outside code, link targets and directives) uses
/// `term` as a word (plural and -ing forms included).
#[cfg(test)]
pub(crate) fn prose_mentions(msgid: &str, term: &str) -> bool {
    let mut prose = String::new();
    for (i, piece) in msgid.split('`').enumerate() {
        if i % 2 == 0 {
            prose.push_str(piece);
            prose.push(' ');
        }
    }
    let prose = prose.to_lowercase();
    let bytes = prose.as_bytes();
    let mut from = 0;
    while let Some(found) = prose[from..].find(term) {
        let (start, end) = (from + found, from + found + term.len());
        from = end;
        let before = start.checked_sub(1).map(|i| bytes[i]);
        let rest = &prose[end..];
        // A term joined to more by '-' (`pipe-rw`, "memory-backed") is a name or another word.
        let word_char =
            |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'/' || b == b'.' || b == b'-';
        let suffix = ["", "s", "es", "ing", "ed"].iter().rev().find(|s| {
            rest.starts_with(*s) && !rest[s.len()..].bytes().next().is_some_and(word_char)
        });
        let in_link_target = prose[..start]
            .rfind("](")
            .is_some_and(|open| !prose[open..start].contains(')'));
        if !before.is_some_and(word_char) && suffix.is_some() && !in_link_target {
            return true;
        }
    }
    false
}

/// The `{{#terms}}` table: English and Chinese side by side.
pub(crate) fn table() -> String {
    let rows: String = all()
        .iter()
        .map(|t| {
            format!(
                "<tr><td lang=\"en\">{}</td><td lang=\"zh-CN\">{}</td></tr>",
                crate::html::escape(&t.english),
                crate::html::escape(&t.chinese)
            )
        })
        .collect();
    format!(
        "<table class=\"pipebook-terms\"><thead><tr><th scope=\"col\">English</th><th scope=\"col\" lang=\"zh-CN\">简体中文</th></tr></thead><tbody>{rows}</tbody></table>"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_term_is_found_as_a_word_in_prose_only() {
        assert!(prose_mentions("Two huge pages hold it.", "huge page"));
        assert!(prose_mentions("The pipe is full.", "pipe"));
        assert!(!prose_mentions(
            "Run `pipe` here, see [x](pipe.md).",
            "pipe"
        ));
        assert!(!prose_mentions("pipebench and pipelines.", "pipe"));
        assert!(prose_mentions(
            "While busy looping, the reader spins.",
            "busy loop"
        ));
        assert!(!prose_mentions("pipe-rw moved it; memory-backed.", "pipe"));
    }

    #[test]
    fn the_pairs_are_read_whole() {
        let terms = all();
        assert!(terms
            .iter()
            .any(|t| t.english == "huge page" && t.chinese == "大页" && t.checked));
        assert!(terms.iter().any(|t| t.english == "splice" && !t.checked));
    }
}
