//! The template every translation follows (`po/messages.pot`): the book's prose
//! as mdbook-i18n-helpers extracts it, the labs' texts, and the page's own words.
//!
//! The template is written without dates or line numbers, so it changes only when
//! the English does: a test regenerates it and fails when the one in `po/` is stale.

use std::collections::BTreeMap;
use std::path::Path;

use mdbook_driver::MDBook;
use mdbook_i18n_helpers::renderers::Xgettext;
use mdbook_renderer::RenderContext;
use polib::catalog::Catalog;
use polib::message::Message;
use polib::metadata::CatalogMetadata;

use super::super::error::BookError;
use super::page_words;

/// Where the page's modules are, relative to the book's root: their `t("...")`
/// calls are the page's words.
pub(crate) const PAGE_MODULES: &str = "book/theme/pipebook";

/// Where the cards' static sentences are written (their templates and the
/// catalog names they show), as the template names their source: the
/// directives module (its `texts` part holds them), so the catalogues' source
/// lines stay as they were.
pub(crate) const DIRECTIVES_FILE: &str = "server/src/book/directives.rs";

/// Where the runner's fixed sentences the page shows come from (the kernel
/// probes' lines and what to expect), as the template names their source.
pub(crate) const RUNNER_SENTENCES: &str = "bench/src/machine/behaviour/mod.rs";

/// Where the labs are defined, relative to the book's root.
pub(crate) const LABS_FILE: &str = "book/labs/labs.json";

/// The keys of `labs.json` whose strings a reader reads (the rest are ids,
/// step names, metrics and numbers).
const LAB_TEXT_KEYS: [&str; 6] = ["title", "goal", "question", "explain", "try", "unit"];

/// Every message of the book, the labs and the page, each with where it comes from.
pub(crate) fn catalog(book_root: &Path) -> Result<Catalog, BookError> {
    let mut book = MDBook::load(book_root).map_err(|e| fail(format!("loading the book: {e:#}")))?;
    // No line numbers: a message's place is its file, so editing one paragraph
    // does not move every message after it.
    book.config
        .set("output.xgettext.granularity", 0)
        .map_err(|e| fail(e.to_string()))?;
    let (mut preprocessed, _) = book
        .preprocess_book(&Xgettext)
        .map_err(|e| fail(format!("{e:#}")))?;
    preprocessed.for_each_chapter_mut(|chapter| chapter.content = without_code(&chapter.content));
    let ctx = RenderContext::new(
        book.root.clone(),
        preprocessed,
        book.config.clone(),
        book.root.join("po"),
    );
    let catalogs = mdbook_i18n_helpers::xgettext::create_catalogs(&ctx, std::fs::read_to_string)
        .map_err(|e| fail(format!("{e:#}")))?;
    let mut messages = PoMessages::default();
    messages.add_html_words(&ctx, &book.config.book.src);
    // One template (depth 0): the summary's catalogue first, then the chapters'.
    let mut parts: Vec<_> = catalogs.into_iter().collect();
    parts.sort_by(|a, b| a.0.cmp(&b.0));
    for (_, part) in &parts {
        for message in part.messages() {
            if !worth_translating(message.msgid()) {
                continue;
            }
            messages.add(message.msgid(), message.source());
        }
    }
    let title = &book.config.book.title;
    if let Some(title) = title {
        messages.add(title, "book.toml");
    }
    if let Some(description) = &book.config.book.description {
        messages.add(description, "book.toml");
    }
    messages.add_words_outside_chapters(book_root)?;
    Ok(messages.into_template(title.clone().unwrap_or_default()))
}

/// The template's error, saying what went wrong.
fn fail(message: String) -> BookError {
    BookError::Translation {
        edition: "the template".into(),
        message,
    }
}

/// The template's messages as they are gathered: each with its sources, in the
/// order they were first seen.
#[derive(Default)]
struct PoMessages {
    sources: BTreeMap<String, Vec<String>>,
    order: Vec<String>,
}

impl PoMessages {
    /// Records `msgid` from `source`, keeping the first place it was seen as its order.
    fn add(&mut self, msgid: &str, source: &str) {
        let sources = self.sources.entry(msgid.to_string()).or_insert_with(|| {
            self.order.push(msgid.to_string());
            Vec::new()
        });
        for line in source.lines() {
            if !sources.iter().any(|s| s == line) {
                sources.push(line.to_string());
            }
        }
    }

    /// The chapters' words inside HTML, which mdbook-i18n-helpers skips: the
    /// titles of fold-outs, and diagrams whose labels are prose.
    fn add_html_words(&mut self, ctx: &RenderContext, src: &Path) {
        for item in ctx.book.iter() {
            if let mdbook_preprocessor::book::BookItem::Chapter(chapter) = item {
                let Some(path) = &chapter.source_path else {
                    continue;
                };
                let source = src.join(path).display().to_string();
                for (_, title) in super::translate::summaries(&chapter.content) {
                    if worth_translating(title) {
                        self.add(title, &source);
                    }
                }
                // Diagrams whose labels are prose but that gettext's extraction skips.
                for (_, diagram) in super::translate::plain_diagrams(&chapter.content) {
                    self.add(diagram, &source);
                }
            }
        }
    }

    /// The words the page shows that are not in a chapter: the labs', the page
    /// modules', the cards', the runner's and the theme's.
    fn add_words_outside_chapters(&mut self, book_root: &Path) -> Result<(), BookError> {
        // A book without labs or page modules (a small test book) has none of their words.
        if let Ok(labs) = std::fs::read_to_string(book_root.join(LABS_FILE)) {
            for text in lab_texts(&labs).map_err(|e| fail(format!("{LABS_FILE}: {e}")))? {
                self.add(&text, LABS_FILE);
            }
        }
        let page = book_root.join(PAGE_MODULES);
        if page.is_dir() {
            for (file, msgid) in page_words::in_folder(&page).map_err(|e| fail(e.to_string()))? {
                self.add(&msgid, &format!("{PAGE_MODULES}/{file}"));
            }
        }
        // What the cards write before the page mounts them (and in print).
        for text in super::super::directives::texts::texts() {
            self.add(&text, DIRECTIVES_FILE);
        }
        // The runner's fixed sentences that the page shows (what each kernel probe
        // answer means): the page words them from its catalogue.
        for probe in pipebench::machine::behaviour::every_outcome("") {
            for text in [&probe.line, &probe.expect] {
                if worth_translating(text) {
                    self.add(text, RUNNER_SENTENCES);
                }
            }
        }
        for text in super::theme::THEME_WORDS {
            self.add(text, super::theme::THEME_FILE);
        }
        Ok(())
    }

    /// The template: the messages in order, each with its sources, under the
    /// book's `title`.
    fn into_template(self, title: String) -> Catalog {
        let mut metadata = CatalogMetadata::new();
        metadata.project_id_version = title;
        metadata.language = "en".into();
        metadata.mime_version = "1.0".into();
        metadata.content_type = "text/plain; charset=UTF-8".into();
        metadata.content_transfer_encoding = "8bit".into();
        let mut catalog = Catalog::new(metadata);
        for msgid in self.order {
            let sources = &self.sources[&msgid];
            catalog.append_or_update(
                Message::build_singular()
                    .with_source(sources.join("\n"))
                    .with_msgid(msgid)
                    .done(),
            );
        }
        catalog
    }
}

/// `content` without its code blocks, Mermaid diagrams excepted: code, commands
/// and listings stay as they are in every edition, so their comments and strings
/// are not put to translators (mdbook-i18n-helpers would offer them); a diagram's
/// labels are prose.
pub(crate) fn without_code(content: &str) -> String {
    use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag};
    let mut out = String::with_capacity(content.len());
    let mut kept = 0;
    for (event, range) in Parser::new(content).into_offset_iter() {
        if let Event::Start(Tag::CodeBlock(kind)) = event {
            let diagram = matches!(&kind, CodeBlockKind::Fenced(info) if info.split_whitespace().next() == Some("mermaid"));
            if !diagram && range.start >= kept {
                out.push_str(&content[kept..range.start]);
                kept = range.end;
            }
        }
    }
    out.push_str(&content[kept..]);
    out
}

/// Whether a message holds words to translate: a line that is only a `{{#...}}`
/// directive, a number, a command in backticks or punctuation stays as it is in
/// every edition, so it is not put to translators.
pub(crate) fn worth_translating(msgid: &str) -> bool {
    let mut rest = msgid.to_string();
    while let (Some(start), Some(end)) = (rest.find("{{#"), rest.find("}}")) {
        if end < start {
            break;
        }
        rest.replace_range(start..end + 2, " ");
    }
    let mut words = String::new();
    for (i, part) in rest.split('`').enumerate() {
        if i % 2 == 0 {
            words.push_str(part);
        }
    }
    words.chars().filter(|c| c.is_alphabetic()).count() >= 2
}

/// Whether a `labs.json` key holds text a reader reads.
pub(crate) fn is_lab_text_key(key: &str) -> bool {
    LAB_TEXT_KEYS.contains(&key)
}

/// The strings a reader reads in `labs.json`, in the file's order.
pub(crate) fn lab_texts(json: &str) -> Result<Vec<String>, serde_json::Error> {
    let value: serde_json::Value = serde_json::from_str(json)?;
    let mut out = Vec::new();
    collect_lab_texts(&value, &mut out);
    Ok(out)
}

fn collect_lab_texts(value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, value) in map {
                match value {
                    serde_json::Value::String(text)
                        if LAB_TEXT_KEYS.contains(&key.as_str()) && worth_translating(text) =>
                    {
                        out.push(text.clone());
                    }
                    _ => collect_lab_texts(value, out),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| collect_lab_texts(v, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directive_or_a_command_alone_is_not_put_to_translators() {
        assert!(!worth_translating("{{#run write-read}}"));
        assert!(!worth_translating("`pipebench run vmsplice --bytes 1GiB`"));
        assert!(!worth_translating("3.5 -> 65"));
        assert!(worth_translating(
            "The pipe holds {{#kernel vmsplice}} pages."
        ));
        assert!(worth_translating("Run `cat` on it."));
    }

    #[test]
    fn code_is_not_offered_but_a_diagram_is() {
        let chapter = "Prose.\n\n```rust\n// a comment\nlet s = \"x\";\n```\n\n```mermaid\nA[\"Writer\"]\n```\n\nMore.\n";
        let kept = without_code(chapter);
        assert!(!kept.contains("a comment"), "{kept}");
        assert!(kept.contains("Writer") && kept.contains("Prose.") && kept.contains("More."));
    }

    #[test]
    fn the_labs_texts_are_the_ones_a_reader_reads() {
        let json = r#"{"labs":[{"id":"x","title":"A title","step":"write-read",
            "prediction":{"question":"How many?","unit":"s"},
            "checks":[{"id":"c","explain":"Because.","try":"Try again."}]}]}"#;
        let mut texts = lab_texts(json).unwrap();
        texts.sort();
        assert_eq!(texts, ["A title", "Because.", "How many?", "Try again."]);
    }
}
