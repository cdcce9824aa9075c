//! Building books with the server's preprocessors: real mdBook, temporary books.

mod common;

use std::path::Path;

use pipebook::book::{build, BookError};

fn tiny_book() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    common::write_tiny_book(dir.path());
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
