//! Gives an edition's headings the English headings' ids.
//!
//! mdBook makes a heading's id from its text, so a translated heading would get a
//! new id, and every link to a section (`vmsplice.md#the-catch`, written in the
//! English and kept by translators) would break. The translation keeps the
//! headings in the same order, so the i-th heading of a page takes the id of the
//! i-th heading of the same English page; a section is then one address in every
//! edition, and the picker can keep the reader's place.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::super::error::BookError;
use super::super::links::html_files;

/// For each page (path relative to the edition's root), the ids that changed:
/// (the edition's own, the English one).
pub(crate) type Moved = BTreeMap<PathBuf, Vec<(String, String)>>;

/// Rewrites the heading ids of every page under `edition` to those of the page
/// with the same path under `english`.
pub(crate) fn align(english: &Path, edition: &Path) -> Result<Moved, BookError> {
    let mut moved = Moved::new();
    for page in html_files(edition)? {
        let relative = page.strip_prefix(edition).unwrap_or(&page).to_path_buf();
        let Ok(original) = std::fs::read_to_string(english.join(&relative)) else {
            continue;
        };
        let html = std::fs::read_to_string(&page).map_err(|source| BookError::Read {
            path: page.clone(),
            source,
        })?;
        let (theirs, ours) = (heading_ids(&original), heading_ids(&html));
        if theirs.len() != ours.len() {
            continue;
        }
        let pairs: Vec<(String, String)> = ours
            .into_iter()
            .zip(theirs)
            .filter(|(a, b)| a != b)
            .collect();
        if pairs.is_empty() {
            continue;
        }
        let rewritten = rename_ids(&html, &pairs);
        std::fs::write(&page, rewritten).map_err(|source| BookError::Read {
            path: page.clone(),
            source,
        })?;
        moved.insert(relative, pairs);
    }
    Ok(moved)
}

/// The ids of the page's headings (`<h1>` to `<h6>`), in order.
pub(crate) fn heading_ids(html: &str) -> Vec<String> {
    let mut ids = Vec::new();
    let mut rest = html;
    while let Some(at) = rest.find("<h") {
        rest = &rest[at + 2..];
        let level = rest.as_bytes().first().copied().unwrap_or(0);
        if !(b'1'..=b'6').contains(&level) || !rest[1..].starts_with(" id=\"") {
            continue;
        }
        let value = &rest[6..];
        if let Some(end) = value.find('"') {
            ids.push(value[..end].to_string());
        }
    }
    ids
}

/// `html` with each heading id and each same-page link to it renamed.
fn rename_ids(html: &str, pairs: &[(String, String)]) -> String {
    let mut out = html.to_string();
    // Longest first, so an id that begins another is not renamed inside it.
    let mut pairs: Vec<&(String, String)> = pairs.iter().collect();
    pairs.sort_by_key(|(old, _)| std::cmp::Reverse(old.len()));
    for (old, new) in pairs {
        out = out.replace(&format!(" id=\"{old}\""), &format!(" id=\"{new}\""));
        out = out.replace(&format!("href=\"#{old}\""), &format!("href=\"#{new}\""));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_translated_heading_takes_the_english_id() {
        let english = r##"<h1 id="the-pipe"><a class="header" href="#the-pipe">The pipe</a></h1><p>x</p><h2 id="slots"><a href="#slots">Slots</a></h2>"##;
        let chinese = r##"<h1 id="管道"><a class="header" href="#管道">管道</a></h1><p>x</p><h2 id="槽"><a href="#槽">槽</a></h2>"##;
        assert_eq!(heading_ids(english), ["the-pipe", "slots"]);
        let pairs: Vec<_> = heading_ids(chinese)
            .into_iter()
            .zip(heading_ids(english))
            .collect();
        let out = rename_ids(chinese, &pairs);
        assert_eq!(heading_ids(&out), ["the-pipe", "slots"]);
        assert!(out.contains(r##"href="#the-pipe">管道"##), "{out}");
    }
}
