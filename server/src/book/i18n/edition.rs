//! Builds one edition beside the English: the same sources, translated before our
//! directives run, rendered into its own folder under the English book.

use std::path::{Path, PathBuf};

use mdbook_driver::MDBook;
use polib::catalog::Catalog;

use super::super::error::BookError;
use super::super::{assets, links, preprocess, widgets};
use super::translate::Translate;
use super::{anchors, page_words, search, Edition};

/// Builds `edition` of the book at `book_root` (whose English is already built in
/// `english`) in `staging`, checks it, and moves it to `english/TAG`.
pub(crate) fn build(
    book_root: &Path,
    edition: &Edition,
    template: &Catalog,
    staging: &Path,
    english: &Path,
) -> Result<PathBuf, BookError> {
    let fail = |message: String| BookError::Translation {
        edition: edition.tag.into(),
        message,
    };
    let catalogue = super::load(book_root, edition)?;
    let translate = Translate::new(edition, template, &catalogue);
    let words = translate.words();
    let theme_words = words.clone();
    let mut book = MDBook::load(book_root).map_err(|e| fail(format!("{e:#}")))?;
    book.config.book.language = Some(edition.tag.into());
    for field in ["title", "description"] {
        let english = match field {
            "title" => book.config.book.title.clone(),
            _ => book.config.book.description.clone(),
        };
        let translated = english.and_then(|t| translate.lookup(&t).map(str::to_string));
        if let Some(text) = translated.filter(|t| !t.contains("i18n-")) {
            match field {
                "title" => book.config.book.title = Some(text),
                _ => book.config.book.description = Some(text),
            }
        }
    }
    // The 404 page's links start from the edition's own root.
    book.config
        .set("output.html.site-url", format!("/{}/", edition.tag))
        .map_err(|e| fail(e.to_string()))?;
    let build_dir = staging.join(format!("edition-{}", edition.tag));
    book.config.build.build_dir = build_dir;
    book.with_preprocessor(translate)
        .with_preprocessor(preprocess::Widgets::with_words(words))
        .with_preprocessor(preprocess::Mermaid);
    book.build()
        .map_err(|e| BookError::Build(format!("{e:#}")))?;
    let staged = book.build_dir_for("html");
    assets::copy(&book.theme_dir(), &staged)?;
    write_page_catalogue(&staged, &catalogue)?;
    super::theme::translate(&staged, &theme_words)?;
    let moved = anchors::align(english, &staged)?;
    search::reindex(&staged, &moved)?;
    links::check_with_root(&staged, &format!("/{}/", edition.tag))?;
    widgets::check(&staged)?;
    let target = english.join(edition.tag);
    std::fs::rename(&staged, &target).map_err(|e| {
        fail(format!(
            "moving {} to {}: {e}",
            staged.display(),
            target.display()
        ))
    })?;
    Ok(target)
}

/// Writes the page's words in this edition's language over the English (empty)
/// `pipebook/catalogue.js`: every translated message the page's modules use, and
/// the runner's fixed sentences the page shows.
fn write_page_catalogue(staged: &Path, catalogue: &Catalog) -> Result<(), BookError> {
    if !staged.join("pipebook").is_dir() {
        // A book without the page's modules (a small test book): no words to give them.
        return Ok(());
    }
    let mut words = serde_json::Map::new();
    for message in catalogue.messages() {
        let from_page = message.source().split_whitespace().any(|s| {
            s.starts_with(super::extract::PAGE_MODULES) || s == super::extract::RUNNER_SENTENCES
        });
        if !from_page || !message.is_translated() || message.flags().is_fuzzy() {
            continue;
        }
        if let Ok(msgstr) = message.msgstr() {
            words.insert(message.msgid().to_string(), msgstr.into());
        }
    }
    let path = staged.join("pipebook").join(page_words::CATALOGUE_MODULE);
    let text = format!(
        "// The page's words in this edition's language, written by the build from its po file.\n\
         export const messages = {};\n",
        serde_json::to_string_pretty(&words).expect("strings serialise")
    );
    std::fs::write(&path, text).map_err(|source| BookError::Copy {
        from: PathBuf::from("the edition's catalogue"),
        to: path.clone(),
        source,
    })
}
