//! The book's other editions: built from a catalogue beside the English, with
//! its language, its untranslated paragraphs marked, the English section
//! addresses, and a search index that finds Chinese.

use std::path::Path;

use pipebook::book::build;

/// A tiny book with a Chinese catalogue that translates the heading and one
/// paragraph of its chapter and leaves the other paragraph untranslated.
fn tiny_book_with_chinese() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    crate::common::write_tiny_book(dir.path());
    std::fs::write(
        dir.path().join("src/chapter.md"),
        "# Chapter\n\n## The ring of slots\n\nA pipe is a ring of slots.\n\nThis paragraph waits for its translation.\n\nSee [the ring](#the-ring-of-slots).\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.path().join("po")).unwrap();
    std::fs::write(
        dir.path().join("po/zh-CN.po"),
        r#"msgid ""
msgstr ""
"Project-Id-Version: tiny\n"
"POT-Creation-Date: \n"
"PO-Revision-Date: \n"
"Language-Team: \n"
"MIME-Version: 1.0\n"
"Content-Type: text/plain; charset=UTF-8\n"
"Content-Transfer-Encoding: 8bit\n"
"Language: zh-CN\n"
"Plural-Forms: nplurals=1; plural=0;\n"

#: src/chapter.md
msgid "The ring of slots"
msgstr "槽位组成的环"

#: src/chapter.md
msgid "A pipe is a ring of slots."
msgstr "管道是由槽位组成的环形缓冲区，零拷贝从这里开始。"

#: src/chapter.md
msgid "See [the ring](#the-ring-of-slots)."
msgstr "见[上面的环](#the-ring-of-slots)。"
"#,
    )
    .unwrap();
    dir
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn a_catalogue_builds_its_edition_under_its_tag_in_its_language() {
    let book = tiny_book_with_chinese();
    let built = build(book.path(), None).unwrap();
    let english = read(&built.dir.join("chapter.html"));
    let chinese = read(&built.dir.join("zh-CN/chapter.html"));
    assert!(
        english.contains(r#"<html lang="en""#),
        "English page keeps its language"
    );
    assert!(chinese.contains(r#"<html lang="zh-CN""#), "{chinese:.300}");
    assert!(
        chinese.contains("管道是由槽位组成的环形缓冲区"),
        "{chinese}"
    );
    assert!(!chinese.contains("A pipe is a ring of slots."));
    // The untranslated paragraph stays English, says so, and is marked as English.
    let at = chinese
        .find("This paragraph waits for its translation.")
        .expect("the untranslated paragraph is shown in English");
    let before = &chinese[..at];
    let open = before
        .rfind("<span lang=\"en\" class=\"i18n-untranslated\">")
        .expect("marked");
    assert!(before[open..].contains("尚未翻译"), "{}", &before[open..]);
    // The translated heading keeps the English section address, and the link to it works.
    assert!(chinese.contains(r#"id="the-ring-of-slots""#), "{chinese}");
    assert!(chinese.contains("槽位组成的环"));
}

#[test]
fn the_chinese_search_index_finds_chinese_words_and_the_english_one_is_unchanged() {
    let book = tiny_book_with_chinese();
    let built = build(book.path(), None).unwrap();
    let index = |dir: &Path| -> serde_json::Value {
        let file = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.path())
            .find(|p| {
                p.file_name()
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .starts_with("searchindex")
            })
            .expect("a search index");
        let script = read(&file);
        let quoted = script
            .trim_end()
            .strip_prefix("window.search = Object.assign(window.search, JSON.parse('")
            .and_then(|s| s.strip_suffix("'));"))
            .expect("mdBook's form");
        let json = quoted.replace("\\'", "'").replace("\\\\", "\\");
        serde_json::from_str(&json).unwrap()
    };
    let chinese = index(&built.dir.join("zh-CN"));
    let words = chinese["index"]["index"]["body"]["root"]
        .as_object()
        .unwrap();
    // Chinese is indexed as pairs of characters, found from their first character.
    for pair in ["管道", "零拷", "拷贝"] {
        let first = pair.chars().next().unwrap().to_string();
        let second = pair.chars().nth(1).unwrap().to_string();
        assert!(
            words.get(&first).and_then(|n| n.get(&second)).is_some(),
            "{pair} is not in the Chinese index"
        );
    }
    assert_eq!(chinese["index"]["pipeline"], serde_json::json!([]));
    let urls = chinese["doc_urls"].as_array().unwrap();
    assert!(
        urls.iter().any(|u| u == "chapter.html#the-ring-of-slots"),
        "search results lead to the English section address: {urls:?}"
    );
    let english = index(&built.dir);
    assert_eq!(
        english["index"]["pipeline"],
        serde_json::json!(["trimmer", "stopWordFilter", "stemmer"])
    );
    assert!(english["index"]["index"]["body"]["root"]["p"].is_object());
}

#[test]
fn a_catalogue_without_the_header_gettext_writes_is_refused_by_name() {
    let book = tiny_book_with_chinese();
    std::fs::write(
        book.path().join("po/zh-CN.po"),
        "msgid \"\"\nmsgstr \"\"\n\"Language: zh-CN\\n\"\n",
    )
    .unwrap();
    let err = build(book.path(), None).unwrap_err().to_string();
    assert!(
        err.contains("zh-CN") && err.contains("Project-Id-Version"),
        "{err}"
    );
}

#[test]
fn a_book_without_catalogues_builds_the_english_only() {
    let dir = tempfile::tempdir().unwrap();
    crate::common::write_tiny_book(dir.path());
    let built = build(dir.path(), None).unwrap();
    assert!(built.dir.join("chapter.html").is_file());
    assert!(!built.dir.join("zh-CN").exists());
}

/// What `<main>` of a built page holds.
fn main_of(html: &str) -> &str {
    let start = html.find("<main>").unwrap_or(0);
    let end = html[start..]
        .find("</main>")
        .map_or(html.len(), |e| start + e);
    &html[start..end]
}

/// The text of `html` outside tags, code and preformatted blocks.
fn prose(html: &str) -> String {
    let mut out = String::new();
    let mut rest = html;
    let mut depth_code = 0usize;
    while let Some(open) = rest.find('<') {
        if depth_code == 0 {
            out.push_str(&rest[..open]);
        }
        let Some(close) = rest[open..].find('>') else {
            break;
        };
        let tag = &rest[open + 1..open + close];
        if tag.starts_with("code") || tag.starts_with("pre") {
            depth_code += 1;
        } else if (tag.starts_with("/code") || tag.starts_with("/pre")) && depth_code > 0 {
            depth_code -= 1;
        }
        rest = &rest[open + close + 1..];
    }
    out
}

#[test]
fn every_chinese_page_is_in_chinese_complete_and_keeps_the_english_pages_markup() {
    let out = tempfile::tempdir().unwrap();
    let built = build(
        &crate::browser::workspace_root(),
        Some(&out.path().join("book")),
    )
    .unwrap();
    let mut pages: Vec<_> = std::fs::read_dir(&built.dir)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name().into_string().unwrap())
        // print.html gathers the chapters; toc.html and 404.html are mdBook's own pages.
        .filter(|n| {
            n.ends_with(".html") && !["print.html", "toc.html", "404.html"].contains(&n.as_str())
        })
        .collect();
    pages.sort();
    assert!(pages.len() > 30, "{pages:?}");
    let mut problems = Vec::new();
    for page in &pages {
        let english = read(&built.dir.join(page));
        let chinese = read(&built.dir.join("zh-CN").join(page));
        let (en, zh) = (main_of(&english), main_of(&chinese));
        if !chinese.contains(r#"<html lang="zh-CN""#) {
            problems.push(format!("{page}: not lang=zh-CN"));
        }
        for marker in ["i18n-untranslated", "i18n-stale"] {
            if zh.contains(marker) {
                problems.push(format!("{page}: a paragraph is {marker}"));
            }
        }
        // The same emphasis, code, links and cards: a translation that broke a
        // marker (emphasis pressed against Chinese punctuation does not render) shows here.
        for tag in ["<strong>", "<em>", "<code", "<a ", "class=\"pipebook-"] {
            let (a, b) = (en.matches(tag).count(), zh.matches(tag).count());
            if a != b {
                problems.push(format!("{page}: {tag} {a} in English, {b} in Chinese"));
            }
        }
        let text = prose(zh);
        let cjk = text
            .chars()
            .filter(|c| ('\u{4e00}'..='\u{9fff}').contains(c))
            .count();
        let latin = text.chars().filter(|c| c.is_ascii_alphabetic()).count();
        if cjk < latin {
            problems.push(format!(
                "{page}: prose has {cjk} Chinese characters and {latin} Latin letters"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "{} problems: {problems:#?}",
        problems.len()
    );
}
