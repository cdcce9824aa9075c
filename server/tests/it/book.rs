//! Building books with the server's preprocessors: real mdBook, temporary books.

use std::path::{Path, PathBuf};

use pipebook::book::{build, BookError};

fn tiny_book() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    crate::common::write_tiny_book(dir.path());
    dir
}

fn write(root: &Path, file: &str, content: &str) {
    std::fs::write(root.join("src").join(file), content).unwrap();
}

#[test]
fn run_widgets_and_diagrams_expand() {
    let book = tiny_book();
    let built = build(book.path(), None).unwrap();
    assert_eq!(built.dir, book.path().join("out"));
    let chapter = std::fs::read_to_string(built.dir.join("chapter.html")).unwrap();
    assert!(
        chapter.contains(
            r#"<div class="pipebook-run" data-step="vmsplice-splice" data-title="vmsplice, then splice""#
        ),
        "{chapter}"
    );
    assert!(chapter.contains(r#"data-kind="article" data-article="32.8" data-reference="3.1-4">"#));
    assert!(chapter.contains(
        r#"<p class="pipebook-run-static"><strong>Run this step: vmsplice, then splice.</strong>"#
    ));
    assert!(chapter.contains("<code>cargo run --release</code>"));
    assert!(chapter.contains(r#"<div class="pipebook-results"></div>"#));
    let mermaid_start = chapter
        .find(r#"<pre class="mermaid">"#)
        .expect("mermaid block");
    let mermaid =
        &chapter[mermaid_start..chapter[mermaid_start..].find("</pre>").unwrap() + mermaid_start];
    assert!(mermaid.contains("W[writer] --&gt; R[reader]"), "{mermaid}");
    assert!(!chapter.contains("language-mermaid"));
    let index = std::fs::read_to_string(built.dir.join("index.html")).unwrap();
    assert!(index.contains(r#"<div class="pipebook-system"></div>"#));
}

#[test]
fn an_unknown_step_fails_the_build_naming_chapter_and_id() {
    let book = tiny_book();
    write(
        book.path(),
        "chapter.md",
        "# Chapter\n\nText.\n\n{{#run warp-speed}}\n",
    );
    let err = build(book.path(), None).unwrap_err();
    let text = format!("{err}");
    assert!(text.contains("src/chapter.md"), "{text}");
    assert!(text.contains("warp-speed"), "{text}");
    assert!(
        text.contains("write-read") && text.contains("busy-loop"),
        "{text}"
    );
}

#[test]
fn an_unknown_ipc_mechanism_fails_the_build_naming_chapter_and_id() {
    let book = tiny_book();
    write(
        book.path(),
        "chapter.md",
        "# Chapter\n\n{{#ipc posix-shm}}\n\n{{#ipc carrier-pigeon}}\n",
    );
    let text = build(book.path(), None).unwrap_err().to_string();
    assert!(text.contains("src/chapter.md"), "{text}");
    assert!(
        text.contains("unknown IPC mechanism `carrier-pigeon`"),
        "{text}"
    );
    assert!(
        text.contains("posix-shm") && text.contains("memfd-scm"),
        "{text}"
    );
}

#[test]
fn a_broken_link_fails_the_build_naming_page_and_link() {
    let book = tiny_book();
    write(book.path(), "chapter.md", "# Chapter\n\n[gone](missing.md) and ![fig](figs/none.svg) and [ok](index.md) and [web](https://example.org/x)\n");
    let err = build(book.path(), None).unwrap_err();
    let BookError::BrokenLinks(links) = &err else {
        panic!("{err}");
    };
    assert!(
        links.iter().any(|l| l == "chapter.html: missing.html"),
        "{links:?}"
    );
    assert!(
        links.iter().any(|l| l == "chapter.html: figs/none.svg"),
        "{links:?}"
    );
    // The same two links again on the print page, and nothing else.
    assert!(
        links
            .iter()
            .all(|l| l.ends_with(": missing.html") || l.ends_with(": figs/none.svg")),
        "{links:?}"
    );
}

/// A widget typed in as raw HTML is an empty box on the page: nothing mounts it.
/// The build refuses it, and a misspelt class, naming the page and the class.
#[test]
fn a_raw_widget_placeholder_fails_the_build_naming_page_and_class() {
    let book = tiny_book();
    write(
        book.path(),
        "chapter.md",
        "# Chapter\n\n<div class=\"pipebook-page-inspector-slot\" data-step=\"busy-loop\"></div>\n\n\
         <p class=\"note pipebook-rn\">typo</p>\n\n{{#pages busy-loop}}\n\n\
         ```html\n<div class=\"pipebook-shown-as-code\"></div>\n```\n",
    );
    let err = build(book.path(), None).unwrap_err();
    let BookError::UnknownWidgets(found) = &err else {
        panic!("{err}");
    };
    assert!(
        found
            .iter()
            .any(|f| f == "chapter.html: pipebook-page-inspector-slot"),
        "{found:?}"
    );
    assert!(
        found.iter().any(|f| f == "chapter.html: pipebook-rn"),
        "{found:?}"
    );
    // The directive's own placeholder, and markup shown as code, are fine.
    assert!(
        found
            .iter()
            .all(|f| f.ends_with(": pipebook-page-inspector-slot") || f.ends_with(": pipebook-rn")),
        "{found:?}"
    );
    assert!(err.to_string().contains("{{#pages ...}}"), "{err}");
}

/// Every placeholder a directive writes is one the page's code looks for: a
/// directive whose widget `main.js` does not mount would also be an empty box.
#[test]
fn every_placeholder_a_directive_writes_is_mounted_by_the_page() {
    let main_js = Path::new(env!("CARGO_MANIFEST_DIR")).join("../book/theme/pipebook/main.js");
    let main_js = std::fs::read_to_string(&main_js).unwrap();
    let mounted: Vec<&str> = main_js
        .split("selector: \"")
        .skip(1)
        .filter_map(|rest| rest.split(['"', '[', ' ', ',']).next())
        .collect();
    assert!(
        !mounted.is_empty(),
        "main.js names placeholders in its KINDS table"
    );
    for class in pipebook::book::PLACEHOLDER_CLASSES {
        assert!(
            mounted.contains(&format!(".{class}").as_str()),
            "main.js mounts nothing at .{class}; it queries {mounted:?}"
        );
    }
}

#[test]
fn theme_assets_are_copied_and_checked() {
    let book = tiny_book();
    let theme = book.path().join("theme");
    std::fs::create_dir_all(theme.join("pipebook")).unwrap();
    std::fs::create_dir_all(theme.join("vendor")).unwrap();
    std::fs::write(theme.join("pipebook/main.js"), "export {};\n").unwrap();
    std::fs::write(theme.join("vendor/mermaid.min.js"), "/* stub */\n").unwrap();
    std::fs::write(
        theme.join("head.hbs"),
        "<script type=\"module\" src=\"{{ path_to_root }}pipebook/main.js\"></script>\n<script src=\"{{ path_to_root }}vendor/mermaid.min.js\"></script>\n",
    )
    .unwrap();
    let toml = std::fs::read_to_string(book.path().join("book.toml")).unwrap();
    std::fs::write(
        book.path().join("book.toml"),
        toml.replace("[output.html]\n", "[output.html]\ntheme = \"theme\"\n"),
    )
    .unwrap();
    let built = build(book.path(), None).unwrap();
    assert!(built.dir.join("pipebook/main.js").is_file());
    assert!(built.dir.join("vendor/mermaid.min.js").is_file());
    // A head.hbs that loads a file the theme lacks is a broken link.
    std::fs::remove_file(theme.join("vendor/mermaid.min.js")).unwrap();
    let err = build(book.path(), None).unwrap_err().to_string();
    assert!(err.contains("vendor/mermaid.min.js"), "{err}");
}

#[test]
fn a_build_dir_can_be_given() {
    let book = tiny_book();
    let out = tempfile::tempdir().unwrap();
    let built = build(book.path(), Some(out.path())).unwrap();
    assert_eq!(built.dir, out.path());
    assert!(out.path().join("chapter.html").is_file());
    assert!(!book.path().join("out").exists());
}

#[test]
fn a_missing_book_toml_says_what_to_pass() {
    let dir = tempfile::tempdir().unwrap();
    let err = build(dir.path(), None).unwrap_err().to_string();
    assert!(
        err.contains("book.toml") && err.contains("--book-root"),
        "{err}"
    );
}

/// The project's own book builds: every `{{#run}}` id exists and no link is broken.
#[test]
fn the_real_book_builds() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let out = tempfile::tempdir().unwrap();
    let built = build(root, Some(out.path())).unwrap_or_else(|e| panic!("{e}"));
    assert!(built.dir.join("index.html").is_file());
}

/// The page's modules have unit tests of their own, run with Node's built-in
/// runner (`node --test`); this makes them part of `cargo test`.
#[test]
fn page_modules_pass_their_node_tests() {
    crate::setup::need("node", "nodejs");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let output = std::process::Command::new("node")
        .arg("--test")
        .arg("book/tests/js/")
        .current_dir(&root)
        .output()
        .expect("node runs (Node.js 18 or later is needed for the page's unit tests)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "node --test failed:\n{stdout}\n{stderr}"
    );
    let passed = stdout
        .lines()
        .find_map(|l| l.strip_prefix("# pass "))
        .and_then(|n| n.trim().parse::<u32>().ok())
        .unwrap_or(0);
    assert!(passed >= 10, "too few page tests ran:\n{stdout}");
}

/// One `{{#include}}` or `{{#rustdoc_include}}` found in a chapter.
struct Include {
    chapter: String,
    /// The path as the chapter writes it, relative to `book/src`.
    file: String,
    selector: Option<String>,
}

/// The book's sources: `book/src` of this workspace.
fn book_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .join("book/src")
}

/// Every chapter's Markdown file, in name order.
fn chapters() -> Vec<PathBuf> {
    let mut chapters: Vec<_> = std::fs::read_dir(book_src())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    chapters.sort();
    chapters
}

/// Every include directive in the book's chapters, in file order.
fn includes(src: &Path) -> Vec<Include> {
    let mut chapters: Vec<_> = std::fs::read_dir(src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    chapters.sort();
    let mut found = Vec::new();
    for chapter in chapters {
        let text = std::fs::read_to_string(&chapter).unwrap();
        for opener in ["{{#include ", "{{#rustdoc_include "] {
            let mut rest = text.as_str();
            while let Some(at) = rest.find(opener) {
                rest = &rest[at + opener.len()..];
                let end = rest.find("}}").expect("an include closes with }}");
                let target = rest[..end].trim();
                let (file, selector) = match target.split_once(':') {
                    Some((file, selector)) => (file, Some(selector.to_string())),
                    None => (target, None),
                };
                found.push(Include {
                    chapter: chapter.file_name().unwrap().to_string_lossy().into_owned(),
                    file: file.to_string(),
                    selector,
                });
            }
        }
    }
    found
}

/// The text of an `ANCHOR:` marker's name on this line, if it has one; mdBook matches
/// `ANCHOR:\s*name` anywhere in the line, and `ANCHOR_END:` the same way.
fn marker<'a>(line: &'a str, keyword: &str) -> Option<&'a str> {
    let at = line.find(keyword)?;
    let name = line[at + keyword.len()..].trim_start();
    let len = name
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
        .unwrap_or(name.len());
    (len > 0).then(|| &name[..len])
}

/// The lines mdBook includes: for an anchor, the lines between `ANCHOR: name` and
/// `ANCHOR_END: name` with every other marker line dropped; for `N:M`, a line range.
fn included_text(source: &str, selector: Option<&str>) -> String {
    let Some(selector) = selector else {
        return source.to_string();
    };
    if selector.chars().next().is_some_and(|c| c.is_ascii_digit()) {
        let mut bounds = selector.split(':');
        let start: usize = bounds.next().unwrap().parse().unwrap();
        let end: Option<usize> = bounds.next().and_then(|e| e.parse().ok());
        return source
            .lines()
            .skip(start.saturating_sub(1))
            .take(end.map_or(usize::MAX, |e| e + 1 - start.max(1)))
            .collect::<Vec<_>>()
            .join("\n");
    }
    let mut kept = Vec::new();
    let mut inside = false;
    for line in source.lines() {
        if inside {
            if let Some(name) = marker(line, "ANCHOR_END:") {
                if name == selector {
                    break;
                }
            } else if marker(line, "ANCHOR:").is_none() {
                kept.push(line);
            }
        } else if marker(line, "ANCHOR:") == Some(selector) {
            inside = true;
        }
    }
    kept.join("\n")
}

/// The code of `code` with comments, string literals and char literals taken out,
/// so that only brackets the compiler sees are left (Rust or C; a Rust lifetime is
/// told apart from a char literal by the missing closing quote).
fn code_only(code: &str) -> String {
    let chars: Vec<char> = code.chars().collect();
    let mut kept = String::new();
    let mut i = 0usize;
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < chars.len() {
        match (chars[i], at(i + 1)) {
            ('/', '/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            ('/', '*') => {
                i += 2;
                while i < chars.len() && !(chars[i] == '*' && at(i + 1) == '/') {
                    i += 1;
                }
                i += 2;
            }
            ('r', '"') | ('r', '#') if i == 0 || !chars[i - 1].is_alphanumeric() => {
                let mut hashes = 0;
                let mut j = i + 1;
                while at(j) == '#' {
                    hashes += 1;
                    j += 1;
                }
                if at(j) != '"' {
                    kept.push(chars[i]);
                    i += 1;
                    continue;
                }
                j += 1;
                while j < chars.len() {
                    if chars[j] == '"' && (1..=hashes).all(|k| at(j + k) == '#') {
                        j += 1 + hashes;
                        break;
                    }
                    j += 1;
                }
                i = j;
            }
            ('"', _) => {
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    i += if chars[i] == '\\' { 2 } else { 1 };
                }
                i += 1;
            }
            ('\'', '\\') => {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            }
            ('\'', _) if at(i + 2) == '\'' => i += 3,
            (c, _) => {
                kept.push(c);
                i += 1;
            }
        }
    }
    kept
}

/// Why the brackets of `code` do not pair up (every `(`, `[` and `{` closed, in
/// order, by its own kind), or `None` when they do.
fn bracket_problem(code: &str) -> Option<String> {
    let mut open = Vec::new();
    for c in code_only(code).chars() {
        match c {
            '(' | '[' | '{' => open.push(c),
            ')' | ']' | '}' => {
                let wanted = match c {
                    ')' => '(',
                    ']' => '[',
                    _ => '{',
                };
                match open.pop() {
                    Some(o) if o == wanted => {}
                    Some(o) => return Some(format!("`{o}` closed by `{c}`")),
                    None => return Some(format!("`{c}` closes nothing shown")),
                }
            }
            _ => {}
        }
    }
    (!open.is_empty()).then(|| {
        let left: String = open.iter().collect();
        format!("`{left}` never closed")
    })
}

/// Whether a Rust listing starts with a whole item (after its doc comments and
/// attributes), at its own outermost indentation, rather than somewhere inside a
/// function body.
fn starts_with_an_item(code: &str) -> bool {
    let lines: Vec<&str> = code.lines().filter(|l| !l.trim().is_empty()).collect();
    let indent = |l: &str| l.len() - l.trim_start().len();
    let outermost = lines.iter().map(|l| indent(l)).min().unwrap_or(0);
    let Some(first) = lines
        .iter()
        .find(|l| !l.trim_start().starts_with("//") && !l.trim_start().starts_with("#["))
    else {
        return false;
    };
    // Past the visibility and the qualifiers, the item's own keyword.
    let mut rest = first.trim_start();
    if let Some(after) = rest.strip_prefix("pub") {
        rest = match after.strip_prefix('(') {
            Some(scoped) => scoped.split_once(')').map_or("", |(_, r)| r),
            None => after,
        }
        .trim_start();
    }
    for qualifier in ["const fn", "async fn", "unsafe fn", "extern \"C\" fn"] {
        if rest.starts_with(qualifier) {
            rest = "fn";
        }
    }
    let item = [
        "fn", "struct", "enum", "impl", "trait", "type", "const", "static", "mod",
    ]
    .iter()
    .any(|k| {
        rest.starts_with(k)
            && !rest[k.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
    });
    indent(first) == outermost && item
}

#[test]
fn the_bracket_check_skips_literals_and_comments() {
    assert_eq!(bracket_problem("fn f() { let s = \"{\"; }"), None);
    assert_eq!(bracket_problem("let c = '{'; // }\n/* { */ x"), None);
    assert_eq!(bracket_problem("fn f<'a>(x: &'a str) { r#\"}\"#; }"), None);
    assert_eq!(bracket_problem("if (c == '(') { a[0] = \")\"; }"), None);
    assert_eq!(
        bracket_problem("if ok {\n    go();").as_deref(),
        Some("`{` never closed")
    );
    assert_eq!(
        bracket_problem("    }\n}").as_deref(),
        Some("`}` closes nothing shown")
    );
    assert_eq!(
        bracket_problem("Ok(Walk {\n    a,\n)}").as_deref(),
        Some("`{` closed by `)`")
    );
}

#[test]
fn a_listing_must_start_with_an_item() {
    assert!(starts_with_an_item(
        "/// Doc.\n#[inline]\npub(crate) fn f(\n    x: u8,\n) -> u8 {\n    x\n}"
    ));
    assert!(starts_with_an_item("    pub unsafe fn g() {}\n"));
    assert!(starts_with_an_item("const N: usize = 3;"));
    assert!(!starts_with_an_item(
        "    if !ok {\n        return;\n    }\n    Ok(Walk {\n        a,\n    })"
    ));
    assert!(!starts_with_an_item("let x = 1;\nfn f() {}"));
}

/// Every listing the book pulls from the sources is a whole unit: it starts at an
/// item, not inside a function, and its brackets pair up, so no page shows an
/// `if {` that never closes or a `})` that closes nothing shown.
#[test]
fn included_listings_are_whole() {
    let src = book_src();
    let found = includes(&src);
    assert!(!found.is_empty(), "the book includes listings");
    let mut broken = Vec::new();
    for include in &found {
        let source = std::fs::read_to_string(src.join(&include.file))
            .unwrap_or_else(|e| panic!("{}: {}: {e}", include.chapter, include.file));
        let text = included_text(&source, include.selector.as_deref());
        let name = format!(
            "{}: {} anchor {}",
            include.chapter,
            include.file,
            include.selector.as_deref().unwrap_or("(whole file)")
        );
        assert!(!text.trim().is_empty(), "{name} includes nothing");
        if let Some(problem) = bracket_problem(&text) {
            broken.push(format!("{name}: {problem}"));
        }
        if include.file.ends_with(".rs") && !starts_with_an_item(&text) {
            broken.push(format!("{name}: starts inside an item, not at one"));
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

/// The code the chapters quote (the kernel's C, abridged with `/* ... */` where
/// lines are left out) pairs its brackets too: an abridged excerpt still shows
/// where each block ends.
#[test]
fn quoted_excerpts_pair_their_brackets() {
    let chapters = chapters();
    let (mut checked, mut broken) = (0, Vec::new());
    for chapter in chapters {
        let text = std::fs::read_to_string(&chapter).unwrap();
        let mut lines = text.lines().enumerate();
        while let Some((number, line)) = lines.next() {
            let Some(info) = line.strip_prefix("```") else {
                continue;
            };
            let block: Vec<&str> = lines
                .by_ref()
                .map(|(_, l)| l)
                .take_while(|l| !l.starts_with("```"))
                .collect();
            let language = info.split(',').next().unwrap_or_default();
            let block = block.join("\n");
            if !matches!(language, "c" | "rust") || block.contains("{{#") {
                continue;
            }
            checked += 1;
            if let Some(problem) = bracket_problem(&block) {
                broken.push(format!(
                    "{}:{}: {problem}",
                    chapter.file_name().unwrap().to_string_lossy(),
                    number + 1
                ));
            }
        }
    }
    assert!(checked >= 10, "too few excerpts found: {checked}");
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

/// The widest code line that fits the book's text column without a sideways
/// scroll, at the default theme and font size.
const LISTING_WIDTH: usize = 84;

/// No listing pulled from the sources runs off the page.
#[test]
fn included_listings_fit_the_page() {
    let src = book_src();
    let mut too_wide = Vec::new();
    for include in includes(&src) {
        let source = std::fs::read_to_string(src.join(&include.file)).unwrap();
        let text = included_text(&source, include.selector.as_deref());
        for line in text.lines().filter(|l| l.chars().count() > LISTING_WIDTH) {
            too_wide.push(format!(
                "{}: {} anchor {}: {} characters: {line}",
                include.chapter,
                include.file,
                include.selector.as_deref().unwrap_or("(whole file)"),
                line.chars().count()
            ));
        }
    }
    assert!(too_wide.is_empty(), "{}", too_wide.join("\n"));
}

/// The figures a paragraph states: a number followed by GiB/s, ns or %.
fn figures(paragraph: &str) -> Vec<String> {
    let bytes = paragraph.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts = bytes[i].is_ascii_digit() && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric());
        if !starts {
            i += 1;
            continue;
        }
        let mut end = i;
        while end < bytes.len() && (bytes[end].is_ascii_digit() || bytes[end] == b'.') {
            end += 1;
        }
        let rest = paragraph[end..].trim_start_matches(' ');
        if ["GiB/s", "ns", "%"].iter().any(|unit| {
            rest.starts_with(unit)
                && !rest[unit.len()..]
                    .chars()
                    .next()
                    .is_some_and(char::is_alphanumeric)
        }) {
            found.push(paragraph[i..end].to_string());
        }
        i = end.max(i + 1);
    }
    found
}

#[test]
fn figures_are_found_with_their_units_only() {
    assert_eq!(
        figures("from 21.1 GiB/s to 55.6GiB/s, about 69 ns, 6 to 28% more; 4096 bytes, 2 MiB, 0.3 s, 64 nsec"),
        ["21.1", "55.6", "69", "28"]
    );
}

/// "Past the article" states figures only where it says whose they are: a
/// paragraph with a figure (GiB/s, ns, %) names the project's reference machine
/// or links its source; the reader's own figures come from the cards, not the
/// text.
#[test]
fn past_the_article_cites_every_figure_it_states() {
    let root = book_src().join("past-the-article.md");
    let text = std::fs::read_to_string(&root).unwrap();
    let mut stated = 0;
    for paragraph in text.split("\n\n") {
        let found = figures(paragraph);
        if found.is_empty() {
            continue;
        }
        stated += found.len();
        let cited = paragraph.contains("](http") || paragraph.contains("reference machine");
        assert!(
            cited,
            "figures {found:?} with no machine or source named:\n{paragraph}"
        );
    }
    // The chapter does cite the sweeps it starts from.
    assert!(
        stated >= 5,
        "{stated} figures found: has the chapter changed?"
    );
}

/// Every chapter with a card that compares (two steps head to head, a sweep's
/// best against its worst, one IPC mechanism against another) says in its own
/// prose that the comparison takes quiet runs, and why: watching costs a run.
#[test]
fn chapters_that_compare_say_why_their_runs_are_quiet() {
    let chapters = chapters();
    let (mut comparing, mut silent) = (0, Vec::new());
    for chapter in chapters {
        let text = std::fs::read_to_string(&chapter).unwrap();
        if !["{{#compare", "{{#sweep", "{{#ipc-matrix"]
            .iter()
            .any(|d| text.contains(d))
        {
            continue;
        }
        comparing += 1;
        let prose = text.to_lowercase();
        if !(prose.contains("quiet") && prose.contains("watch")) {
            silent.push(chapter.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    assert!(
        comparing >= 3,
        "too few comparing chapters found: {comparing}"
    );
    assert!(
        silent.is_empty(),
        "chapters that compare without saying their runs are quiet and why: {silent:?}"
    );
}

/// Every chapter that explains a per-page or per-call mechanism (the five
/// steps, the ring buffer, paging, the zero-copy families) shows the reader's
/// own counts beside the explanation: it holds a card whose result the page
/// lays out as "What the kernel did" (a run card's `KernelCounts`, an IPC
/// card's counts table), and its text points at that table. That the page
/// fills the table after a run is the browser's `counts` test.
#[test]
fn every_mechanism_chapter_shows_the_readers_counts_beside_its_explanation() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let theme = root.join("book/theme/pipebook");
    let read = |path: &Path| std::fs::read_to_string(path).unwrap();
    // The cards that lay a result's counts out, and the module doing it.
    let cards = [
        (
            "{{#run ",
            read(&theme.join("widget.js")),
            "new KernelCounts()",
        ),
        (
            "{{#ipc ",
            read(&theme.join("ipc/card.js")),
            "countsTable(r)",
        ),
    ];
    for (directive, module, fills) in &cards {
        assert!(
            module.contains(fills),
            "the module behind {directive}}}}} no longer lays out the counts ({fills})"
        );
    }
    let out = tempfile::tempdir().unwrap();
    let built = build(&root, Some(out.path())).unwrap_or_else(|e| panic!("{e}"));
    for chapter in [
        "baseline",
        "inside-a-pipe",
        "vmsplice",
        "splice",
        "huge-pages",
        "busy-loop",
        "paging",
        "zero-copy-pipes",
        "zero-copy-sockets",
        "zero-copy-shared",
        "zero-copy-files",
    ] {
        let source = read(&root.join(format!("book/src/{chapter}.md")));
        assert!(
            cards.iter().any(|(d, _, _)| source.contains(d)),
            "{chapter} has no card that shows the reader's counts"
        );
        // The text points at the counts: the table's own title, or the cards'
        // "what the kernel did" (wrapped lines read as one).
        let words = source.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            words.to_lowercase().contains("what the kernel did"),
            "{chapter}'s explanation does not point at the counts table"
        );
        // The card is on the built page, where the page mounts it.
        let html = read(&built.dir.join(format!("{chapter}.html")));
        assert!(
            html.contains(r#"class="pipebook-run" data-step="#)
                || html.contains(r#"class="pipebook-ipc" data-mechanism="#),
            "{chapter}.html holds no card"
        );
    }
}
