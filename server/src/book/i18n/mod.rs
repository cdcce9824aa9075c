//! The book in other languages: gettext, as mdbook-i18n-helpers does it.
//!
//! English is the source. `po/messages.pot` is extracted from it ([`extract`]);
//! each edition's `po/TAG.po` holds its translations, applied to the same
//! sources before our directives run, so one build makes every edition. What is
//! not translated yet stays English and says so (`lang="en"`), and a paragraph
//! whose English changed since its translation says that its translation is older.

mod anchors;
pub(crate) mod edition;
pub(crate) mod extract;
pub(crate) mod page_words;
mod search;
pub(crate) mod terms;
#[cfg(test)]
mod tests;
mod theme;
pub(crate) mod translate;

use std::path::{Path, PathBuf};

use polib::catalog::Catalog;

use super::error::BookError;

/// A language the book is translated into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Edition {
    /// Its language tag: the folder it is served under (`/zh-CN/`) and its `po/` file.
    pub tag: &'static str,
    /// Its name, in its own language, as the picker shows it.
    pub name: &'static str,
}

/// Every edition besides the English one.
pub(crate) const EDITIONS: [Edition; 1] = [Edition {
    tag: "zh-CN",
    name: "简体中文",
}];

/// The folder of the catalogues, relative to the book's root.
pub(crate) const PO_DIR: &str = "po";

/// The template's path under the book's root.
pub(crate) fn template_path(book_root: &Path) -> PathBuf {
    book_root.join(PO_DIR).join("messages.pot")
}

/// An edition's catalogue path under the book's root.
pub(crate) fn catalogue_path(book_root: &Path, edition: &Edition) -> PathBuf {
    book_root.join(PO_DIR).join(format!("{}.po", edition.tag))
}

/// Reads an edition's catalogue.
pub(crate) fn load(book_root: &Path, edition: &Edition) -> Result<Catalog, BookError> {
    let path = catalogue_path(book_root, edition);
    let fail = |message: String| BookError::Translation {
        edition: edition.tag.into(),
        message: format!("cannot read {}: {message}", path.display()),
    };
    // polib 0.2 stops the program on a header without these; say which instead.
    let text = std::fs::read_to_string(&path).map_err(|e| fail(e.to_string()))?;
    let header = text
        .split("\n\n")
        .find(|b| b.contains("msgid \"\""))
        .unwrap_or("");
    let missing: Vec<&str> = HEADER_FIELDS
        .into_iter()
        .filter(|field| !header.contains(&format!("\"{field}:")))
        .collect();
    if !missing.is_empty() {
        return Err(fail(format!(
            "its header lacks {} (msginit writes them all)",
            missing.join(", ")
        )));
    }
    polib::po_file::parse(&path).map_err(|e| fail(e.to_string()))
}

/// The header fields gettext writes and polib needs.
const HEADER_FIELDS: [&str; 9] = [
    "Project-Id-Version",
    "POT-Creation-Date",
    "PO-Revision-Date",
    "Language-Team",
    "MIME-Version",
    "Content-Type",
    "Content-Transfer-Encoding",
    "Language",
    "Plural-Forms",
];

/// How far an edition's catalogue covers the current English.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Messages of the template translated and current.
    pub translated: usize,
    /// Translated, but the English changed since (gettext's "fuzzy").
    pub stale: Vec<String>,
    /// Not translated at all (missing from the catalogue or empty there).
    pub untranslated: Vec<String>,
    /// In the catalogue but no longer in the English.
    pub obsolete: Vec<String>,
}

impl Coverage {
    /// Every message of the English has a current translation and nothing is left over.
    pub fn is_complete(&self) -> bool {
        self.stale.is_empty() && self.untranslated.is_empty() && self.obsolete.is_empty()
    }
}

/// What `edition`'s catalogue covers of `template`.
pub(crate) fn coverage(template: &Catalog, catalogue: &Catalog) -> Coverage {
    let mut out = Coverage::default();
    for message in template.messages() {
        let msgid = message.msgid();
        match catalogue.find_message(None, msgid, None) {
            Some(m) if m.is_translated() && m.flags().is_fuzzy() => {
                out.stale.push(msgid.to_string())
            }
            Some(m) if m.is_translated() => out.translated += 1,
            _ => out.untranslated.push(msgid.to_string()),
        }
    }
    for message in catalogue.messages() {
        if template.find_message(None, message.msgid(), None).is_none() {
            out.obsolete.push(message.msgid().to_string());
        }
    }
    out
}

/// Writes `po/messages.pot` from the English of the book at `book_root` and
/// measures each edition against it: what `pipebook translations` does.
pub fn update_template(book_root: &Path) -> Result<Vec<(Edition, Coverage)>, BookError> {
    let template = extract::catalog(book_root)?;
    let path = template_path(book_root);
    replace_file(&path, &template).map_err(|e| BookError::Translation {
        edition: "the template".into(),
        message: format!("cannot write {}: {e}", path.display()),
    })?;
    let mut out = Vec::new();
    for edition in EDITIONS {
        let catalogue = load(book_root, &edition)?;
        out.push((edition, coverage(&template, &catalogue)));
    }
    Ok(out)
}

/// Puts `catalog` at `path` in one rename from a fresh file made beside it
/// (created exclusively, so nothing another user placed there is written through).
fn replace_file(path: &Path, catalog: &Catalog) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let temp = dir.join(format!(
        ".{}.{:016x}",
        path.file_name().unwrap_or_default().to_string_lossy(),
        rand::random::<u64>()
    ));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temp)?;
    let written = polib::po_file::write(catalog, &temp);
    match written.and_then(|()| std::fs::rename(&temp, path)) {
        Ok(()) => Ok(()),
        Err(err) => {
            let _ = std::fs::remove_file(&temp);
            Err(err)
        }
    }
}

/// An edition's words for the text our directives write (the labs' definitions,
/// the cards' static text); the default is the English itself.
#[derive(Debug, Clone, Default)]
pub(crate) struct Words(Option<std::sync::Arc<std::collections::HashMap<String, String>>>);

impl Words {
    /// `english` in this edition's language, or as written when it has no
    /// current translation.
    pub(crate) fn t<'a>(&'a self, english: &'a str) -> &'a str {
        self.0
            .as_ref()
            .and_then(|map| map.get(english))
            .map_or(english, String::as_str)
    }

    /// `template` in this edition's words, each `{name}` replaced by its value
    /// (values are written as given: escape them first where they are text).
    pub(crate) fn fill(&self, template: &str, values: &[(&str, String)]) -> String {
        let mut out = self.t(template).to_string();
        for (name, value) in values {
            out = out.replace(&format!("{{{name}}}"), value);
        }
        out
    }

    /// A lab's definition as JSON, its texts in this edition's words (the English
    /// keeps the definition's own field order).
    pub(crate) fn lab(&self, lab: &impl serde::Serialize) -> String {
        if self.0.is_none() {
            return serde_json::to_string(lab).expect("lab definitions serialise");
        }
        let mut value = serde_json::to_value(lab).expect("lab definitions serialise");
        self.translate_texts(&mut value);
        value.to_string()
    }

    fn translate_texts(&self, value: &mut serde_json::Value) {
        match value {
            serde_json::Value::Object(map) => {
                for (key, value) in map.iter_mut() {
                    match value {
                        serde_json::Value::String(text) if extract::is_lab_text_key(key) => {
                            *text = self.t(text).to_string();
                        }
                        _ => self.translate_texts(value),
                    }
                }
            }
            serde_json::Value::Array(items) => {
                items.iter_mut().for_each(|v| self.translate_texts(v))
            }
            _ => {}
        }
    }
}
