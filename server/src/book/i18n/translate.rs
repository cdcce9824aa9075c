//! Applies an edition's catalogue to the English chapters (the preprocessor that
//! runs before our directives, as mdbook-i18n-helpers' `Gettext` does), marking
//! what is not translated yet or older than the English.

use mdbook_preprocessor::book::Book;
use mdbook_preprocessor::{Preprocessor, PreprocessorContext};
use polib::catalog::Catalog;
use polib::message::Message;

use super::Edition;

/// The words an edition's reader sees on a paragraph still in English, and on one
/// whose translation is older than the English, in that edition's language.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Markers {
    /// "Not translated yet".
    pub(crate) untranslated: &'static str,
    /// "This translation is older than the English".
    pub(crate) stale: &'static str,
}

/// The markers of each edition.
pub(crate) fn markers(edition: &Edition) -> Markers {
    match edition.tag {
        "zh-CN" => Markers {
            untranslated: "尚未翻译",
            stale: "译文早于英文原文，待更新",
        },
        _ => Markers {
            untranslated: "not translated yet",
            stale: "older than the English",
        },
    }
}

/// The translating preprocessor of one edition.
pub(crate) struct Translate {
    catalog: Catalog,
}

impl Translate {
    /// Prepares `catalogue` (the edition's `.po`) against `template` (the English
    /// as it is now): every message of a chapter gets the text this edition shows.
    pub(crate) fn new(edition: &Edition, template: &Catalog, catalogue: &Catalog) -> Self {
        let markers = markers(edition);
        let mut catalog = Catalog::new(polib::metadata::CatalogMetadata::new());
        for message in template.messages() {
            let msgid = message.msgid();
            let chapter = message
                .source()
                .split_whitespace()
                .any(|s| s.ends_with(".md") && !s.ends_with("SUMMARY.md"));
            let found = catalogue
                .find_message(None, msgid, None)
                .filter(|m| m.is_translated())
                .and_then(|m| Some((m.flags().is_fuzzy(), m.msgstr().ok()?.to_string())));
            let shown = match found {
                Some((false, msgstr)) => msgstr,
                // A diagram or a title keeps the one text it has: a marker inside a
                // Mermaid block or the sidebar would break them.
                _ if !chapter || msgid.starts_with("```") => match found {
                    Some((_, msgstr)) => msgstr,
                    None => continue,
                },
                Some((true, msgstr)) => format!(
                    r#"<span class="i18n-stale"><span class="i18n-badge">{}</span> {msgstr}</span>"#,
                    markers.stale
                ),
                None => format!(
                    r#"<span lang="en" class="i18n-untranslated"><span class="i18n-badge" lang="{}">{}</span> {msgid}</span>"#,
                    edition.tag, markers.untranslated
                ),
            };
            catalog.append_or_update(
                Message::build_singular()
                    .with_msgid(msgid.to_string())
                    .with_msgstr(shown)
                    .done(),
            );
        }
        // The summary's titles reach preprocessors without their formatting.
        for message in catalogue.messages() {
            if message.source().contains("SUMMARY.md") && message.is_translated() {
                let fuzzy = message.flags().is_fuzzy();
                if let (false, Ok(msgstr)) = (fuzzy, message.msgstr()) {
                    catalog.append_or_update(
                        Message::build_singular()
                            .with_source(message.source().to_string())
                            .with_msgid(message.msgid().to_string())
                            .with_msgstr(msgstr.to_string())
                            .done(),
                    );
                }
            }
        }
        mdbook_i18n_helpers::gettext::add_stripped_summary_translations(&mut catalog);
        Translate { catalog }
    }

    /// The current translations (no markers): the words our directives use.
    pub(crate) fn words(&self) -> super::Words {
        let map = self
            .catalog
            .messages()
            .filter_map(|m| Some((m.msgid().to_string(), m.msgstr().ok()?.to_string())))
            .filter(|(_, msgstr)| !msgstr.contains("class=\"i18n-"))
            .collect();
        super::Words(Some(std::sync::Arc::new(map)))
    }

    /// This edition's text for an English message, if it has one.
    pub(crate) fn lookup(&self, msgid: &str) -> Option<&str> {
        self.catalog
            .find_message(None, msgid, None)
            .and_then(|m| m.msgstr().ok())
    }
}

impl Preprocessor for Translate {
    fn name(&self) -> &str {
        "pipebook-translate"
    }

    fn run(&self, _ctx: &PreprocessorContext, mut book: Book) -> anyhow::Result<Book> {
        mdbook_i18n_helpers::gettext::translate_book(&self.catalog, &mut book)?;
        book.for_each_chapter_mut(|chapter| {
            let content = self.fold_out_titles(&admonitions(&chapter.content));
            chapter.content = self.diagrams(&content);
            // The names of the chapters above (search results' breadcrumbs) were
            // read from the summary before any preprocessor ran.
            for name in &mut chapter.parent_names {
                if let Some(translated) = self.lookup(name).filter(|t| !t.contains("i18n-")) {
                    *name = translated.to_string();
                }
            }
        });
        Ok(book)
    }
}

impl Translate {
    /// `content` with each fold-out's title (`<summary>...</summary>`, inside an HTML
    /// block that gettext's extraction skips) in this edition's words.
    fn fold_out_titles(&self, content: &str) -> String {
        let mut out = String::with_capacity(content.len());
        let mut copied = 0;
        for (range, title) in summaries(content) {
            out.push_str(&content[copied..range.start]);
            out.push_str(self.lookup(title).unwrap_or(title));
            copied = range.end;
        }
        out.push_str(&content[copied..]);
        out
    }
}

impl Translate {
    /// `content` with each Mermaid diagram that gettext's extraction skips (one
    /// without quotes or `//`, which mdbook-i18n-helpers takes for code) in this
    /// edition's words, when the catalogue has them: their labels are prose.
    fn diagrams(&self, content: &str) -> String {
        let mut out = String::with_capacity(content.len());
        let mut copied = 0;
        for (range, text) in plain_diagrams(content) {
            let Some(translated) = self.lookup(text).filter(|t| !t.contains("i18n-")) else {
                continue;
            };
            out.push_str(&content[copied..range.start]);
            out.push_str(translated);
            if !translated.ends_with('\n') {
                out.push('\n');
            }
            copied = range.end;
        }
        out.push_str(&content[copied..]);
        out
    }
}

/// Each Mermaid diagram of `content` that mdbook-i18n-helpers does not offer
/// (no `"` and no `//` in it): where its text is, and the text.
pub(crate) fn plain_diagrams(content: &str) -> Vec<(std::ops::Range<usize>, &str)> {
    use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};
    let mut out = Vec::new();
    let mut inside: Option<std::ops::Range<usize>> = None;
    let mut in_diagram = false;
    for (event, range) in Parser::new(content).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) => {
                in_diagram = info.split_whitespace().next() == Some("mermaid");
                inside = None;
            }
            Event::Text(_) if in_diagram => {
                inside = Some(match inside {
                    Some(r) => r.start..range.end,
                    None => range,
                });
            }
            Event::End(TagEnd::CodeBlock) => {
                if let (true, Some(r)) = (in_diagram, inside.take()) {
                    let text = &content[r.clone()];
                    if !text.contains('"') && !text.contains("//") {
                        out.push((r, text));
                    }
                }
                in_diagram = false;
            }
            _ => {}
        }
    }
    out
}

/// Each fold-out title in `content`: where its text is, and the text.
pub(crate) fn summaries(content: &str) -> Vec<(std::ops::Range<usize>, &str)> {
    let (open, close) = ("<summary>", "</summary>");
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(found) = content[from..].find(open) {
        let start = from + found + open.len();
        let Some(len) = content[start..].find(close) else {
            break;
        };
        let text = &content[start..start + len];
        if !text.contains('\n') {
            out.push((start..start + len, text));
        }
        from = start + len + close.len();
    }
    out
}

/// Undoes the escaping mdbook-i18n-helpers 0.4 applies to GitHub-style
/// admonitions when it writes a translated chapter back (`> \[!NOTE\]`), so
/// they render as notes in every edition, as in the English.
pub(crate) fn admonitions(content: &str) -> String {
    let mut out = content.to_string();
    for kind in ["NOTE", "TIP", "IMPORTANT", "WARNING", "CAUTION"] {
        for escaped in [format!("\\[!{kind}\\]"), format!("\\[\\!{kind}\\]")] {
            out = out.replace(&escaped, &format!("[!{kind}]"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use polib::metadata::CatalogMetadata;

    fn catalog(entries: &[(&str, &str, &str, bool)]) -> Catalog {
        let mut catalog = Catalog::new(CatalogMetadata::new());
        for (source, msgid, msgstr, fuzzy) in entries {
            let mut builder = Message::build_singular();
            builder
                .with_source(source.to_string())
                .with_msgid(msgid.to_string())
                .with_msgstr(msgstr.to_string());
            if *fuzzy {
                builder.with_flags("fuzzy".parse().unwrap());
            }
            catalog.append_or_update(builder.done());
        }
        catalog
    }

    #[test]
    fn a_current_translation_is_used_an_older_one_is_marked_and_a_missing_one_stays_english() {
        let src = "book/src/pipe.md";
        let template = catalog(&[
            (src, "The pipe.", "", false),
            (src, "Changed paragraph.", "", false),
            (src, "New paragraph.", "", false),
        ]);
        let po = catalog(&[
            (src, "The pipe.", "管道。", false),
            (src, "Changed paragraph.", "旧的译文。", true),
        ]);
        let edition = super::super::EDITIONS[0];
        let translate = Translate::new(&edition, &template, &po);
        assert_eq!(translate.lookup("The pipe."), Some("管道。"));
        let stale = translate.lookup("Changed paragraph.").unwrap();
        assert!(
            stale.contains("i18n-stale") && stale.contains("旧的译文。"),
            "{stale}"
        );
        let missing = translate.lookup("New paragraph.").unwrap();
        assert!(
            missing.contains(r#"lang="en""#)
                && missing.contains("i18n-untranslated")
                && missing.contains("New paragraph."),
            "{missing}"
        );
    }

    #[test]
    fn fold_out_titles_are_found_on_their_line() {
        let content = "<details>\n<summary>Why <code>x</code>?</summary>\n\nBody.\n</details>";
        let found = summaries(content);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].1, "Why <code>x</code>?");
        assert_eq!(&content[found[0].0.clone()], "Why <code>x</code>?");
    }

    #[test]
    fn a_plain_diagram_is_found_whole_and_a_quoted_one_is_left_to_gettext() {
        let content = "Text.\n\n```mermaid\nsequenceDiagram\n    participant W as Writer\n```\n\n```mermaid\nA[\"x\"]\n```\n";
        let found = plain_diagrams(content);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].1, "sequenceDiagram\n    participant W as Writer\n");
    }

    #[test]
    fn admonitions_survive_translation() {
        assert_eq!(
            admonitions("> \\[!NOTE\\]\n> 注意。"),
            "> [!NOTE]\n> 注意。"
        );
    }
}
