//! A search index that finds Chinese.
//!
//! mdBook's index splits words on spaces, so a Chinese sentence is one long
//! "word" (and dropped past 80 bytes): nothing Chinese can be found. An
//! edition's index is rebuilt here from the same documents with [`tokens`]:
//! words as mdBook makes them, and every run of CJK characters as its
//! overlapping pairs of characters (管道 -> 管道; 零拷贝 -> 零拷, 拷贝), the usual way
//! to index Chinese without a dictionary. The page splits the query the same way
//! (`searchcjk.js`; both read `book/tests/fixtures/cjk-tokens.json` in their tests).
//! The index has no pipeline: elasticlunr's trimmer and stemmer are for English
//! and would erase Chinese.

use std::path::Path;

use elasticlunr::{Index, Language, Pipeline};

use super::super::error::BookError;
use super::anchors::Moved;

/// Longest token kept, as mdBook keeps them.
const MAX_TOKEN_BYTES: usize = 80;

/// How a character takes part in a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CharClass {
    /// A letter of Han, kana or Hangul: indexed as pairs.
    Cjk,
    /// Punctuation of CJK text (general punctuation, CJK symbols and punctuation,
    /// vertical, compatibility and full-width forms): between tokens.
    Punctuation,
    /// Anything else: part of a word, as mdBook keeps words.
    Word,
}

fn class(c: char) -> CharClass {
    use unicode_script::{Script, UnicodeScript};
    if matches!(
        c.script(),
        Script::Han | Script::Hiragana | Script::Katakana | Script::Hangul
    ) {
        return CharClass::Cjk;
    }
    match c {
        '\u{2000}'..='\u{206f}'
        | '\u{3000}'..='\u{303f}'
        | '\u{fe10}'..='\u{fe1f}'
        | '\u{fe30}'..='\u{fe4f}'
        | '\u{ff00}'..='\u{ff0f}'
        | '\u{ff1a}'..='\u{ff20}'
        | '\u{ff3b}'..='\u{ff40}'
        | '\u{ff5b}'..='\u{ff65}' => CharClass::Punctuation,
        _ => CharClass::Word,
    }
}

/// The tokens of `text`, in order: lowercased, split on whitespace and '-', each
/// maximal run of CJK letters as its overlapping pairs (a run of one letter is
/// itself), CJK punctuation between tokens, other words trimmed of punctuation at
/// their ends (as elasticlunr's trimmer did) and dropped when nothing is left.
/// The page's `cjkTokens` (searchcjk) is the same rule.
pub(crate) fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let lower = text.to_lowercase();
    for word in lower.split(|c: char| c.is_whitespace() || c == '-') {
        let mut run: Vec<char> = Vec::new();
        let mut other = String::new();
        for c in word.chars() {
            match class(c) {
                CharClass::Cjk => {
                    flush_word(&mut other, &mut out);
                    run.push(c);
                }
                CharClass::Punctuation => {
                    flush_word(&mut other, &mut out);
                    flush_run(&mut run, &mut out);
                }
                CharClass::Word => {
                    flush_run(&mut run, &mut out);
                    other.push(c);
                }
            }
        }
        flush_word(&mut other, &mut out);
        flush_run(&mut run, &mut out);
    }
    out
}

fn flush_word(word: &mut String, out: &mut Vec<String>) {
    let edge = |c: char| !(c.is_alphabetic() || c.is_numeric() || c == '_');
    let trimmed = word.trim_matches(edge);
    if !trimmed.is_empty() && trimmed.len() <= MAX_TOKEN_BYTES {
        out.push(trimmed.to_string());
    }
    word.clear();
}

fn flush_run(run: &mut Vec<char>, out: &mut Vec<String>) {
    match run.len() {
        0 => {}
        1 => out.push(run[0].to_string()),
        _ => out.extend(run.windows(2).map(|w| w.iter().collect::<String>())),
    }
    run.clear();
}

/// Words and CJK pairs, no pipeline.
struct Cjk;

impl Language for Cjk {
    fn name(&self) -> String {
        "CJK".into()
    }
    fn code(&self) -> String {
        "cjk".into()
    }
    fn tokenize(&self, text: &str) -> Vec<String> {
        tokens(text)
    }
    fn make_pipeline(&self) -> Pipeline {
        Pipeline { queue: Vec::new() }
    }
}

/// The fields mdBook indexes, in its order.
const FIELDS: [&str; 3] = ["title", "body", "breadcrumbs"];

/// Rebuilds the search index of the edition built in `root` with [`tokens`], its
/// section addresses renamed as `moved` says.
pub(crate) fn reindex(root: &Path, moved: &Moved) -> Result<(), BookError> {
    let fail = |message: String| BookError::Translation {
        edition: root.display().to_string(),
        message: format!("search index: {message}"),
    };
    let file = std::fs::read_dir(root)
        .map_err(|e| fail(e.to_string()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("searchindex") && n.ends_with(".js"))
        })
        .ok_or_else(|| fail("mdBook wrote no searchindex*.js".into()))?;
    let script = std::fs::read_to_string(&file).map_err(|e| fail(e.to_string()))?;
    let (prefix, suffix) = (
        "window.search = Object.assign(window.search, JSON.parse('",
        "'));",
    );
    let quoted = script
        .trim_end()
        .strip_prefix(prefix)
        .and_then(|s| s.strip_suffix(suffix))
        .ok_or_else(|| fail("searchindex.js is not in the form mdBook 0.5 writes".into()))?;
    let json = unquote(quoted);
    let mut search: serde_json::Value =
        serde_json::from_str(&json).map_err(|e| fail(e.to_string()))?;
    let docs = search["index"]["documentStore"]["docs"]
        .as_object()
        .ok_or_else(|| fail("the index stores no documents".into()))?;
    let mut refs: Vec<(usize, &serde_json::Value)> = docs
        .iter()
        .filter_map(|(k, v)| Some((k.parse().ok()?, v)))
        .collect();
    refs.sort_by_key(|(k, _)| *k);
    let mut index = Index::with_language(Box::new(Cjk), &FIELDS);
    for (key, doc) in refs {
        let field = |name: &str| doc[name].as_str().unwrap_or_default().to_string();
        index.add_doc(&key.to_string(), FIELDS.map(field));
    }
    search["index"] = serde_json::from_str(&index.to_json()).map_err(|e| fail(e.to_string()))?;
    if let Some(urls) = search["doc_urls"].as_array_mut() {
        for url in urls {
            if let Some(renamed) = url.as_str().and_then(|u| rename_url(u, moved)) {
                *url = renamed.into();
            }
        }
    }
    let json = serde_json::to_string(&search).map_err(|e| fail(e.to_string()))?;
    let script = format!(
        "{prefix}{}{suffix}",
        json.replace('\\', "\\\\").replace('\'', "\\'")
    );
    std::fs::write(&file, script).map_err(|e| fail(e.to_string()))
}

/// Undoes the quoting mdBook applies to put the JSON in a '...' string.
fn unquote(quoted: &str) -> String {
    let mut out = String::with_capacity(quoted.len());
    let mut chars = quoted.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(next) = chars.next() {
                out.push(next);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// `page.html#id` with the id the English page uses, when it was renamed.
fn rename_url(url: &str, moved: &Moved) -> Option<String> {
    let (page, id) = url.split_once('#')?;
    let pairs = moved.get(Path::new(page))?;
    let (_, new) = pairs.iter().find(|(old, _)| old == id)?;
    Some(format!("{page}#{new}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chinese_runs_become_pairs_and_words_stay_words() {
        assert_eq!(tokens("零拷贝"), ["零拷", "拷贝"]);
        assert_eq!(tokens("管道"), ["管道"]);
        assert_eq!(tokens("页"), ["页"]);
        assert_eq!(
            tokens("用 vmsplice 把页交给管道，Pipe-Buffer"),
            ["用", "vmsplice", "把页", "页交", "交给", "给管", "管道", "pipe", "buffer"]
        );
        assert_eq!(
            tokens("vmsplice() 与 “零拷贝”"),
            ["vmsplice", "与", "零拷", "拷贝"]
        );
    }

    #[test]
    fn agrees_with_the_fixture_the_page_tests_read() {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../book/tests/fixtures/cjk-tokens.json");
        let text = std::fs::read_to_string(&path).unwrap();
        let cases: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
        assert!(cases.len() >= 10);
        for case in cases {
            let text = case["text"].as_str().unwrap();
            let expected: Vec<String> = serde_json::from_value(case["tokens"].clone()).unwrap();
            assert_eq!(tokens(text), expected, "{text}");
        }
    }
}
