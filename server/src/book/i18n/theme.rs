//! The theme's own words (`book/theme/index.hbs`): the menu bar's and the search
//! box's labels, which mdBook's template writes in English in every edition. An
//! edition's pages get them in its language after rendering.

use std::path::Path;

use super::super::error::BookError;
use super::super::links::html_files;
use super::Words;

/// The attribute values of the theme a reader hears or sees (labels, tooltips,
/// the search box's placeholder), and the help's lines.
pub(crate) const THEME_WORDS: [&str; 20] = [
    "Change theme",
    "Next chapter",
    "Page navigation",
    "Previous chapter",
    "Print this book",
    "Suggest an edit",
    "Table of contents",
    "Themes",
    "Toggle Searchbar",
    "Search this book ...",
    "Search (`/`)",
    "Toggle Table of Contents",
    "Git repository",
    "Keyboard shortcuts",
    "Auto",
    "Light",
    "Press <kbd>←</kbd> or <kbd>→</kbd> to navigate between chapters",
    "Press <kbd>S</kbd> or <kbd>/</kbd> to search in the book",
    "Press <kbd>?</kbd> to show this help",
    "Press <kbd>Esc</kbd> to hide this help",
];

/// The theme's file, as the template names the source of these words.
pub(crate) const THEME_FILE: &str = "book/theme/index.hbs";

/// Puts `words`' translations of [`THEME_WORDS`] into every page under `root`.
pub(crate) fn translate(root: &Path, words: &Words) -> Result<(), BookError> {
    let pairs: Vec<(&str, &str)> = THEME_WORDS
        .iter()
        .map(|english| (*english, words.t(english)))
        .filter(|(english, translated)| english != translated)
        .collect();
    if pairs.is_empty() {
        return Ok(());
    }
    for page in html_files(root)? {
        let html = std::fs::read_to_string(&page).map_err(|source| BookError::Read {
            path: page.clone(),
            source,
        })?;
        let mut out = html.clone();
        for (english, translated) in &pairs {
            for attribute in ["aria-label", "title", "placeholder"] {
                out = out.replace(
                    &format!("{attribute}=\"{english}\""),
                    &format!("{attribute}=\"{translated}\""),
                );
            }
            // The help's lines and the theme menu's names are text between tags.
            out = out.replace(&format!(">{english}<"), &format!(">{translated}<"));
        }
        if out != html {
            std::fs::write(&page, out).map_err(|source| BookError::Read {
                path: page.clone(),
                source,
            })?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_theme_word_is_in_the_theme() {
        let theme = include_str!("../../../../book/theme/index.hbs");
        for word in super::THEME_WORDS {
            assert!(theme.contains(word), "{word} is no longer in index.hbs");
        }
    }
}
