//! The one rule for the names and ids a lab report carries (the student's
//! name, lab and task ids, a choice predicted), checked the same way when a
//! report is exported and when `pipebook report` merges it; and how text from
//! a report is shown in a message, so that a crafted report cannot write
//! escape sequences to an instructor's terminal.

/// Longest name or id, in characters.
pub(crate) const MAX_NAME: usize = 64;

/// Most characters of a foreign string quoted in a message.
const MAX_QUOTED: usize = 80;

/// A name or id that breaks the rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{what} {shown} must be 1 to {MAX_NAME} characters without control or invisible \
     formatting characters"
)]
pub struct BadName {
    /// What it is ("student name", "lab id", ...).
    pub what: &'static str,
    /// The value, quoted safely (escaped, shortened).
    pub shown: String,
}

/// Checks `text` against the rule: 1 to [`MAX_NAME`] characters, none of them
/// a control character (nor a bidirectional override, which can make a name
/// read as another).
pub(crate) fn check_name(what: &'static str, text: &str) -> Result<(), BadName> {
    let chars = text.chars().count();
    if chars == 0 || chars > MAX_NAME || text.chars().any(is_hidden) {
        return Err(BadName {
            what,
            shown: quote(text),
        });
    }
    Ok(())
}

/// Control characters (C0, DEL, C1) and every format character (Unicode's
/// general category Cf): the invisible ones that reorder or hide text
/// (bidirectional marks, overrides and isolates such as U+061C, zero-width
/// joiners, tags), and a few with no glyph of their own.
fn is_hidden(c: char) -> bool {
    c.is_control() || is_format(c)
}

/// Unicode's general category Cf (format characters), as of Unicode 15.1.
fn is_format(c: char) -> bool {
    matches!(
        c,
        '\u{ad}'
            | '\u{600}'..='\u{605}'
            | '\u{61c}'
            | '\u{6dd}'
            | '\u{70f}'
            | '\u{890}'..='\u{891}'
            | '\u{8e2}'
            | '\u{180e}'
            | '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{206f}'
            | '\u{feff}'
            | '\u{fff9}'..='\u{fffb}'
            | '\u{110bd}'
            | '\u{110cd}'
            | '\u{13430}'..='\u{1343f}'
            | '\u{1bca0}'..='\u{1bca3}'
            | '\u{1d173}'..='\u{1d17a}'
            | '\u{e0001}'
            | '\u{e0020}'..='\u{e007f}'
    )
}

/// `text` with every control or hidden character written as `\u{XX}`, so that
/// printing it cannot move a terminal's cursor, recolour it or retitle it.
pub(crate) fn escape_controls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if is_hidden(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// `text` as a message quotes it: escaped, in double quotes, and shortened to
/// [`MAX_QUOTED`] characters with the full length said.
pub(crate) fn quote(text: &str) -> String {
    shown(text, '"')
}

/// `text` between two `mark`s, escaped and shortened like [`quote`].
pub(crate) fn shown(text: &str, mark: char) -> String {
    let chars = text.chars().count();
    if chars <= MAX_QUOTED {
        return format!("{mark}{}{mark}", escape_controls(text));
    }
    let head: String = text.chars().take(MAX_QUOTED).collect();
    format!(
        "{mark}{}{mark}… ({chars} characters)",
        escape_controls(&head)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_one_to_64_visible_characters() {
        assert!(check_name("student name", "Ada Lovelace").is_ok());
        assert!(check_name("student name", &"é".repeat(64)).is_ok());
        for bad in [
            "",
            "a\nb",
            "nul\0",
            "\u{1b}[31mred",
            "\u{9b}31m",
            "abc\u{202e}fdp.exe",
        ] {
            let err = check_name("student name", bad).unwrap_err();
            assert!(!err.to_string().chars().any(char::is_control), "{err}");
        }
        let long = check_name("task id", &"x".repeat(10_000)).unwrap_err();
        assert!(long.to_string().contains("(10000 characters)"), "{long}");
        assert!(long.to_string().len() < 300, "{long}");
    }

    #[test]
    fn escapes_leave_nothing_a_terminal_acts_on() {
        assert_eq!(
            escape_controls("a\u{1b}]0;owned\u{7}b"),
            "a\\u{1b}]0;owned\\u{7}b"
        );
        assert_eq!(escape_controls("tab\there"), "tab\\u{9}here");
        assert_eq!(quote("plain"), "\"plain\"");
    }
}
