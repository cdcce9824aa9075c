//! Checks that the built pages hold only the widget placeholders our directives
//! write.
//!
//! The page's code (`book/theme/pipebook/main.js`) mounts a widget wherever it
//! finds one of the directives' placeholder classes, and nothing anywhere else. A
//! `<div class="pipebook-...">` typed into a chapter by hand, or a misspelt class,
//! is therefore an empty box on the page that no build step and no browser console
//! reports; this check turns it into a build failure that names the page and the
//! class.

use std::path::Path;

use super::error::BookError;
use super::links::html_files;

/// The class of each directive's placeholder `<div>`, the one `main.js` looks for.
pub const PLACEHOLDER_CLASSES: &[&str] = &[
    "pipebook-run",
    "pipebook-sweep",
    "pipebook-lab",
    "pipebook-ipc",
    "pipebook-ipc-matrix",
    "pipebook-pages",
    "pipebook-walk",
    "pipebook-results",
    "pipebook-system",
    "pipebook-latency",
    "pipebook-latency-matrix",
    "pipebook-tune",
    "pipebook-tool",
    "pipebook-shared-pipe",
    "pipebook-compare",
    "pipebook-kernel",
    "pipebook-aa",
];

/// Classes a directive writes inside its placeholder: the static text a reader
/// sees until (or unless) the widget is mounted.
pub(crate) const INNER_CLASSES: &[&str] = &["pipebook-run-static", "pipebook-kernel-text"];

/// Classes of what a directive writes whole at build time, never mounted: the
/// term pairs' table (`{{#terms}}`).
pub(crate) const STATIC_CLASSES: &[&str] = &["pipebook-terms"];

/// Classes a chapter writes by hand around prose the page shows, marks or hides
/// by what the runner measured (`div.pipebook-kernel-branch[data-probe]
/// [data-answer]`, drawn by `kernel.js`): never mounted on their own.
pub(crate) const PROSE_CLASSES: &[&str] = &["pipebook-kernel-branch"];

/// Classes the theme's own templates (`book/theme/*.hbs`) write: styles, not
/// widgets, never mounted.
pub(crate) const THEME_CLASSES: &[&str] = &["pipebook-visually-hidden"];

/// Lists of unknown classes longer than this are cut; the count still says how many.
const MAX_REPORTED: usize = 50;

/// Checks every HTML page under `root`; the error lists `page: class` pairs.
pub(super) fn check(root: &Path) -> Result<(), BookError> {
    let mut unknown = Vec::new();
    for page in html_files(root)? {
        let html = std::fs::read_to_string(&page).map_err(|source| BookError::Read {
            path: page.clone(),
            source,
        })?;
        let page_rel = page.strip_prefix(root).unwrap_or(&page);
        for class in pipebook_classes(&html) {
            if !is_known(class) {
                unknown.push(format!("{}: {class}", page_rel.display()));
            }
        }
    }
    unknown.sort();
    unknown.dedup();
    if unknown.is_empty() {
        return Ok(());
    }
    let total = unknown.len();
    if total > MAX_REPORTED {
        unknown.truncate(MAX_REPORTED);
        unknown.push(format!("... and {} more", total - MAX_REPORTED));
    }
    Err(BookError::UnknownWidgets(unknown))
}

fn is_known(class: &str) -> bool {
    PLACEHOLDER_CLASSES.contains(&class)
        || INNER_CLASSES.contains(&class)
        || THEME_CLASSES.contains(&class)
        || STATIC_CLASSES.contains(&class)
        || PROSE_CLASSES.contains(&class)
}

/// Every `pipebook-` class named in a `class` attribute of `html`, in order.
/// Markup shown inside a code block has its `<` escaped (`&lt;div class="..."`), so
/// it stands outside any tag and is not counted.
pub(crate) fn pipebook_classes(html: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = html;
    let mut offset = 0;
    while let Some(at) = rest.find("class=") {
        let before = &html[..offset + at];
        rest = &rest[at + "class=".len()..];
        offset += at + "class=".len();
        // `data-class=` or `subclass=` is another attribute.
        let other_attribute = before
            .chars()
            .last()
            .is_some_and(|c| c.is_alphanumeric() || c == '-' || c == '_');
        let in_a_tag = before.rfind('<') > before.rfind('>');
        if other_attribute || !in_a_tag {
            continue;
        }
        let Some(quote) = rest.chars().next().filter(|c| *c == '"' || *c == '\'') else {
            continue;
        };
        let value = &rest[1..];
        let end = value.find(quote).unwrap_or(value.len());
        found.extend(
            value[..end]
                .split_whitespace()
                .filter(|class| class.starts_with("pipebook-")),
        );
        rest = &value[end..];
        offset += 1 + end;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_are_read_from_class_attributes_only() {
        let html = r#"<div class="pipebook-run x" data-class="pipebook-no"><p class='y pipebook-run-static'>
            <code>&lt;div class="pipebook-escaped"&gt;</code><span class="plain"></span></div>"#;
        assert_eq!(
            pipebook_classes(html),
            ["pipebook-run", "pipebook-run-static"]
        );
    }

    #[test]
    fn every_class_the_theme_templates_write_is_listed() {
        let theme = Path::new(env!("CARGO_MANIFEST_DIR")).join("../book/theme");
        for entry in std::fs::read_dir(&theme).unwrap().flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "hbs") {
                let text = std::fs::read_to_string(&path).unwrap();
                for class in pipebook_classes(&text) {
                    assert!(
                        THEME_CLASSES.contains(&class),
                        "{}: {class} is not in THEME_CLASSES",
                        path.display()
                    );
                }
            }
        }
    }

    #[test]
    fn a_hand_written_placeholder_is_unknown() {
        assert!(is_known("pipebook-pages") && is_known("pipebook-run-static"));
        assert!(!is_known("pipebook-page-inspector-slot"));
        assert!(!is_known("pipebook-rn"));
    }
}
