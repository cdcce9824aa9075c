//! Checks that every local link and resource of the built book exists.
//!
//! mdBook checks neither hand-written links between chapters nor the files the
//! theme loads, and a broken one would only show as a 404 in a reader's browser.

use std::path::{Component, Path, PathBuf};

use super::error::BookError;
use crate::html::{percent_decode, unescape_attribute};

/// Lists of broken links longer than this are cut, the count still says how many.
const MAX_REPORTED: usize = 50;

/// Checks all HTML pages under `root`; the error lists `page: link` pairs.
pub(super) fn check(root: &Path) -> Result<(), BookError> {
    check_with_root(root, "/")
}

/// [`check`] for a book served under `site_root` (e.g. `/zh-CN/` for an edition):
/// a `<base href>` there is read relative to it.
pub(crate) fn check_with_root(root: &Path, site_root: &str) -> Result<(), BookError> {
    let mut broken = Vec::new();
    for page in html_files(root)? {
        let html = std::fs::read_to_string(&page).map_err(|source| BookError::Read {
            path: page.clone(),
            source,
        })?;
        let page_rel = page.strip_prefix(root).unwrap_or(&page);
        let page_dir = page_rel.parent().unwrap_or(Path::new(""));
        let attributes = link_attributes(&html);
        // A `<base href="/">` (mdBook's 404 page) makes links root-relative.
        let base = attributes
            .iter()
            .find(|(tag, _, _)| tag == "base")
            .and_then(|(_, _, href)| {
                href.strip_prefix(site_root)
                    .or_else(|| href.strip_prefix('/'))
            })
            .map(PathBuf::from);
        for (tag, _, link) in &attributes {
            if tag == "base" {
                continue;
            }
            let from = base.as_deref().unwrap_or(page_dir);
            if let Some(target) = local_target(from, link) {
                if !exists(root, target.as_deref()) {
                    broken.push(format!("{}: {link}", page_rel.display()));
                }
            }
        }
    }
    broken.sort();
    broken.dedup();
    if broken.is_empty() {
        return Ok(());
    }
    let total = broken.len();
    if total > MAX_REPORTED {
        broken.truncate(MAX_REPORTED);
        broken.push(format!("... and {} more", total - MAX_REPORTED));
    }
    Err(BookError::BrokenLinks(broken))
}

/// Every HTML page under `root`, sorted.
pub(super) fn html_files(root: &Path) -> Result<Vec<PathBuf>, BookError> {
    let mut files = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|source| BookError::Read {
            path: dir.clone(),
            source,
        })?;
        for entry in entries {
            let path = entry
                .map_err(|source| BookError::Read {
                    path: dir.clone(),
                    source,
                })?
                .path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "html") {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

/// Whether a resolved target exists; `None` means the link climbed out of the book.
fn exists(root: &Path, target: Option<&Path>) -> bool {
    let Some(target) = target else {
        return false;
    };
    let path = root.join(target);
    path.is_file() || (path.is_dir() && path.join("index.html").is_file())
}

/// Where a link points inside the book: `None` for links that are not local files
/// (other sites, anchors, `data:`), `Some(None)` for links that leave the book.
fn local_target(page_dir: &Path, link: &str) -> Option<Option<PathBuf>> {
    let link = link.trim();
    if link.is_empty() || link.starts_with('#') || link.starts_with("//") || has_scheme(link) {
        return None;
    }
    let path = link.split(['#', '?']).next().unwrap_or_default();
    if path.is_empty() {
        return None;
    }
    let decoded = percent_decode(path);
    let (start, rest) = match decoded.strip_prefix('/') {
        Some(rest) => (PathBuf::new(), rest.to_string()),
        None => (page_dir.to_path_buf(), decoded),
    };
    Some(normalize(&start.join(rest)))
}

fn has_scheme(link: &str) -> bool {
    match link.find(':') {
        Some(colon) => {
            let scheme = &link[..colon];
            !scheme.is_empty()
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        }
        None => false,
    }
}

/// Resolves `.` and `..` without touching the disk; `None` if it climbs above the root.
fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Normal(part) => out.push(part),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

/// `(tag, attribute, value)` for every `href` and `src` attribute in `html`,
/// skipping comments and the insides of `<script>` and `<style>`.
fn link_attributes(html: &str) -> Vec<(String, String, String)> {
    let mut found = Vec::new();
    let bytes = html.as_bytes();
    let mut i = 0;
    while let Some(lt) = html[i..].find('<') {
        i += lt;
        if html[i..].starts_with("<!--") {
            i = html[i..].find("-->").map_or(html.len(), |end| i + end + 3);
            continue;
        }
        let name_start = i + 1;
        let name_len = bytes[name_start..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric())
            .count();
        if name_len == 0 {
            i += 1;
            continue;
        }
        let tag = html[name_start..name_start + name_len].to_ascii_lowercase();
        let (attributes, tag_end) = parse_attributes(html, name_start + name_len);
        for (name, value) in attributes {
            if name == "href" || name == "src" {
                found.push((tag.clone(), name, unescape_attribute(&value)));
            }
        }
        i = tag_end;
        if tag == "script" || tag == "style" {
            let close = format!("</{tag}");
            i = crate::html::find_ascii_ci(&bytes[i..], close.as_bytes())
                .map_or(html.len(), |p| i + p);
        }
    }
    found
}

/// Attributes from `at` (just after the tag name) to the closing `>`, and where
/// the tag ends.
fn parse_attributes(html: &str, mut at: usize) -> (Vec<(String, String)>, usize) {
    let bytes = html.as_bytes();
    let mut attributes = Vec::new();
    loop {
        while at < bytes.len() && (bytes[at].is_ascii_whitespace() || bytes[at] == b'/') {
            at += 1;
        }
        if at >= bytes.len() {
            return (attributes, bytes.len());
        }
        if bytes[at] == b'>' {
            return (attributes, at + 1);
        }
        let name_start = at;
        while at < bytes.len()
            && !matches!(bytes[at], b'=' | b'>' | b' ' | b'\t' | b'\n' | b'\r' | b'/')
        {
            at += 1;
        }
        let name = html[name_start..at].to_ascii_lowercase();
        while at < bytes.len() && bytes[at].is_ascii_whitespace() {
            at += 1;
        }
        if at >= bytes.len() || bytes[at] != b'=' {
            attributes.push((name, String::new()));
            continue;
        }
        at += 1;
        while at < bytes.len() && bytes[at].is_ascii_whitespace() {
            at += 1;
        }
        let value = match bytes.get(at) {
            Some(&quote @ (b'"' | b'\'')) => {
                let start = at + 1;
                let end = html[start..]
                    .find(quote as char)
                    .map_or(html.len(), |p| start + p);
                at = (end + 1).min(html.len());
                &html[start..end]
            }
            _ => {
                let start = at;
                while at < bytes.len() && !bytes[at].is_ascii_whitespace() && bytes[at] != b'>' {
                    at += 1;
                }
                &html[start..at]
            }
        };
        attributes.push((name, value.to_string()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_links_but_not_in_scripts_or_comments() {
        let html = r#"<a href="a.html#x">a</a><!-- <a href="c.html"> --><script>x='<img src="d.png">'</script><img alt='q' src=e.png><link rel=stylesheet href='f.css?v=1&amp;w=2'>"#;
        let links: Vec<_> = link_attributes(html)
            .into_iter()
            .map(|(_, _, v)| v)
            .collect();
        assert_eq!(links, ["a.html#x", "e.png", "f.css?v=1&w=2"]);
    }

    #[test]
    fn resolves_local_targets() {
        let dir = Path::new("ch");
        assert_eq!(local_target(dir, "https://x.org/a"), None);
        assert_eq!(local_target(dir, "mailto:a@b"), None);
        assert_eq!(local_target(dir, "#top"), None);
        assert_eq!(local_target(dir, "data:image/png;base64,xx"), None);
        assert_eq!(
            local_target(dir, "../a%20b.html#x"),
            Some(Some(PathBuf::from("a b.html")))
        );
        assert_eq!(
            local_target(dir, "/css/x.css?v=2"),
            Some(Some(PathBuf::from("css/x.css")))
        );
        assert_eq!(local_target(dir, "../../etc/passwd"), Some(None));
    }

    #[test]
    fn reports_broken_links_with_their_page() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(
            dir.path().join("index.html"),
            r#"<a href="sub/">s</a><a href="sub/b.html">b</a>"#,
        )
        .unwrap();
        std::fs::write(
            dir.path().join("sub/index.html"),
            r#"<a href="../index.html">i</a><script src="../missing.js"></script>"#,
        )
        .unwrap();
        let err = check(dir.path()).unwrap_err().to_string();
        assert!(err.contains("index.html: sub/b.html"), "{err}");
        assert!(err.contains("sub/index.html: ../missing.js"), "{err}");
        assert!(
            !err.contains("sub/\n") && !err.contains("../index.html\n"),
            "{err}"
        );
        std::fs::write(dir.path().join("sub/b.html"), "").unwrap();
        std::fs::write(dir.path().join("missing.js"), "").unwrap();
        check(dir.path()).unwrap();
    }
}
