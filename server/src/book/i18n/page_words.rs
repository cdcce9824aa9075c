//! The page's own words: every `t("...")` call in the page's modules.
//!
//! The rule the modules keep (a node test holds them to it): the first argument
//! of `t(` is one double-quoted literal on one line, escapes only `\"`, `\\` and
//! `\n`, placeholders written `{name}`. So the words can be read without running
//! or parsing JavaScript.

use std::path::Path;

/// The module that holds a language's translations of the page's words: the
/// sources ship it empty and each other edition's build writes its own.
pub(crate) const CATALOGUE_MODULE: &str = "catalogue.js";

/// Every `(file name, msgid)` of the `.js` modules in `dir` and its folders (a
/// card's folder: `lab/lab.js`), files in name order, calls in the order they are written.
pub(crate) fn in_folder(dir: &Path) -> std::io::Result<Vec<(String, String)>> {
    let mut files = Vec::new();
    modules(dir, "", &mut files)?;
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let source = std::fs::read_to_string(dir.join(&file))?;
        out.extend(in_source(&source).into_iter().map(|m| (file.clone(), m)));
    }
    Ok(out)
}

/// The `.js` modules under `dir`, as paths below it that start with `prefix`.
fn modules(dir: &Path, prefix: &str, out: &mut Vec<String>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        if entry.file_type()?.is_dir() {
            modules(&entry.path(), &format!("{prefix}{name}/"), out)?;
        } else if name.ends_with(".js") && !(prefix.is_empty() && name == CATALOGUE_MODULE) {
            out.push(format!("{prefix}{name}"));
        }
    }
    Ok(())
}

/// The msgids of the `t("...")` calls in one module's source, each once, in the
/// order of its first call; lines that are comments (`//`, `/*`, `*`) are skipped.
pub(crate) fn in_source(source: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in source.lines() {
        let code = line.trim_start();
        if code.starts_with("//") || code.starts_with("/*") || code.starts_with('*') {
            continue;
        }
        for msgid in in_line(line) {
            if !out.contains(&msgid) {
                out.push(msgid);
            }
        }
    }
    out
}

/// The msgids of the calls on one line.
fn in_line(line: &str) -> Vec<String> {
    let bytes = line.as_bytes();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(found) = line[from..].find("t(\"") {
        let at = from + found;
        from = at + 3;
        // `t(` as a call of its own, not the end of another name (`split(`, `x.t(`).
        let before = at.checked_sub(1).map(|i| bytes[i]);
        if before.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b == b'.')
        {
            continue;
        }
        if let Some((msgid, end)) = literal(&line[from..]) {
            out.push(msgid);
            from += end;
        }
    }
    out
}

/// The string literal whose body starts `text` (after its opening quote), and how
/// many bytes it took; `None` when it runs past the line.
fn literal(text: &str) -> Option<(String, usize)> {
    let mut out = String::new();
    let mut chars = text.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((out, i + 1)),
            '\n' => return None,
            '\\' => match chars.next()?.1 {
                'n' => out.push('\n'),
                other => out.push(other),
            },
            c => out.push(c),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_literal_of_each_call_and_nothing_else() {
        let source = r#"
            h("p", null, t("Run this step"));
            status.textContent = t("{n} pairs cannot resolve at {level}", { n, level });
            const parts = text.split("x"); obj.t("not ours"); format("no");
            t("a \"quoted\" word\\ and\na line");
        "#;
        assert_eq!(
            in_source(source),
            [
                "Run this step",
                "{n} pairs cannot resolve at {level}",
                "a \"quoted\" word\\ and\na line",
            ]
        );
    }

    #[test]
    fn reads_the_modules_in_a_cards_folder_too_and_never_the_catalogue() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("lab")).unwrap();
        std::fs::write(dir.path().join("main.js"), r#"t("Top");"#).unwrap();
        std::fs::write(dir.path().join("lab/lab.js"), r#"t("In a folder");"#).unwrap();
        std::fs::write(dir.path().join(CATALOGUE_MODULE), r#"t("Not ours");"#).unwrap();
        assert_eq!(
            in_folder(dir.path()).unwrap(),
            [
                ("lab/lab.js".to_string(), "In a folder".to_string()),
                ("main.js".to_string(), "Top".to_string()),
            ]
        );
    }

    #[test]
    fn agrees_with_the_fixture_the_page_tests_read() {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../book/tests/fixtures/i18n-extract.json");
        let text = std::fs::read_to_string(&path).unwrap();
        let fixture: serde_json::Value = serde_json::from_str(&text).unwrap();
        let cases = fixture["samples"].as_array().unwrap();
        assert!(cases.len() >= 3);
        for case in cases {
            let source = case["source"].as_str().unwrap();
            let expected: Vec<String> = serde_json::from_value(case["msgids"].clone()).unwrap();
            assert_eq!(in_source(source), expected, "{source}");
        }
    }
}
