//! The built book, as the server hands it out.
//!
//! HTML pages are read once at start-up, get the per-start token injected into
//! their `<head>` and their Content-Security-Policy computed, and stay in memory
//! (the whole book is a few hundred KiB). Everything else (CSS, fonts, the vendored
//! Mermaid) is read from disk per request, so large files never sit in memory.
//! `--watch` swaps in a rebuilt book ([`Site::replace`]) while requests go on.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, RwLock};

use axum::body::Bytes;
use axum::http::HeaderValue;

use crate::html::{find_ascii_ci, head_content_start, inline_scripts, percent_decode};
use crate::http::security::{content_security_policy, Token};

/// Why the built book could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum SiteError {
    /// A directory or page could not be read.
    #[error("cannot read the built book at {path}")]
    Read {
        /// What failed.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A page has no `<head>` to carry the token.
    #[error("{0} has no <head> element to carry the runner's token")]
    NoHead(PathBuf),
}

/// A page ready to send.
#[derive(Debug, Clone)]
pub(crate) struct Page {
    /// The HTML, token included.
    pub(crate) body: Bytes,
    /// Its Content-Security-Policy header.
    pub(crate) csp: HeaderValue,
}

/// What a request path maps to.
#[derive(Debug)]
pub(crate) enum Resolved {
    /// A cached HTML page.
    Page(Page),
    /// Any other file, to be read from disk.
    File(PathBuf),
    /// A directory asked for without its trailing slash.
    Redirect(String),
    /// Nothing there.
    NotFound,
}

/// The built book.
#[derive(Debug)]
pub(crate) struct Site {
    current: RwLock<Arc<Loaded>>,
}

/// One build of the book, as loaded.
#[derive(Debug)]
struct Loaded {
    root: PathBuf,
    /// `root` with every link resolved: a file served must be right below it.
    real_root: PathBuf,
    pages: HashMap<String, Page>,
    /// The folder the files are served from, when it must live as long as they are
    /// served (the book carried in the binary, unpacked at start-up).
    _holds: Option<Arc<pipebench::process::rundir::RunDir>>,
}

/// Whether `path` (below the book's folder `real_root`, as `rel`) is a regular
/// file of this server's user reached through no symbolic link. The build
/// folder is the server's own output (mdBook writes it, `assets` copies into
/// it): a link or another user's file there was put there by someone else,
/// and serving it on loopback would hand them whatever it points at.
fn is_own_file(real_root: &Path, rel: &str) -> bool {
    use std::os::unix::fs::MetadataExt;
    let expected = real_root.join(rel);
    match (
        expected.canonicalize(),
        std::fs::symlink_metadata(&expected),
    ) {
        (Ok(real), Ok(meta)) => {
            real == expected
                && meta.file_type().is_file()
                && meta.uid() == rustix::process::geteuid().as_raw()
        }
        _ => false,
    }
}

impl Site {
    /// Loads every HTML page under `root`, injecting `token`.
    #[cfg(test)]
    pub(crate) fn load(root: &Path, token: &Token) -> Result<Site, SiteError> {
        Site::load_holding(root, token, None)
    }

    /// Loads every HTML page under `root`, injecting `token`, keeping `folder` (where the files are) alive for as
    /// long as this build is served.
    pub(crate) fn load_holding(
        root: &Path,
        token: &Token,
        folder: Option<Arc<pipebench::process::rundir::RunDir>>,
    ) -> Result<Site, SiteError> {
        let real_root = root.canonicalize().map_err(|source| SiteError::Read {
            path: root.to_path_buf(),
            source,
        })?;
        let mut pages = HashMap::new();
        let mut dirs = vec![root.to_path_buf()];
        while let Some(dir) = dirs.pop() {
            let read_error = |source| SiteError::Read {
                path: dir.clone(),
                source,
            };
            for entry in std::fs::read_dir(&dir).map_err(read_error)? {
                let entry = entry.map_err(read_error)?;
                let path = entry.path();
                // Not through links: the walk stays inside the book.
                let kind = entry.file_type().map_err(read_error)?;
                if kind.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "html") {
                    let rel = path.strip_prefix(root).unwrap_or(&path);
                    if !is_own_file(&real_root, &rel.to_string_lossy()) {
                        tracing::warn!(
                            "{} is not a regular file of this user in the built book: not served",
                            path.display()
                        );
                        continue;
                    }
                    let html =
                        std::fs::read_to_string(&path).map_err(|source| SiteError::Read {
                            path: path.clone(),
                            source,
                        })?;
                    let rel = path.strip_prefix(root).unwrap_or(&path);
                    let key = rel.to_string_lossy().replace('\\', "/");
                    let framed = key == "toc.html";
                    let page_dir = path.parent().unwrap_or(root);
                    let html = inline_stylesheets(&html, |href| {
                        let file = page_dir.join(href);
                        // Only the book's own files, never anything outside it.
                        let inside = std::fs::canonicalize(&file)
                            .ok()
                            .zip(std::fs::canonicalize(root).ok())
                            .is_some_and(|(file, root)| file.starts_with(root));
                        if inside {
                            std::fs::read_to_string(file).ok()
                        } else {
                            None
                        }
                    });
                    let page = prepare_page(&html, token, framed)
                        .ok_or_else(|| SiteError::NoHead(path.clone()))?;
                    pages.insert(key, page);
                }
            }
        }
        Ok(Site {
            current: RwLock::new(Arc::new(Loaded {
                root: root.to_path_buf(),
                real_root,
                pages,
                _holds: folder,
            })),
        })
    }

    /// Serves `other`'s build from now on (a rebuilt book); requests under way
    /// finish with the build they started with.
    pub(crate) fn replace(&self, other: Site) {
        let next = other.loaded();
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = next;
    }

    fn loaded(&self) -> Arc<Loaded> {
        Arc::clone(&self.current.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// Number of HTML pages.
    pub(crate) fn page_count(&self) -> usize {
        self.loaded().pages.len()
    }

    /// mdBook's 404 page, if the book has one.
    pub(crate) fn not_found_page(&self) -> Option<Page> {
        self.loaded().pages.get("404.html").cloned()
    }

    /// Maps a URL path (as received, percent-encoded) to what to send.
    pub(crate) fn resolve(&self, url_path: &str) -> Resolved {
        let loaded = self.loaded();
        let decoded = percent_decode(url_path);
        let Some(rel) = safe_relative(&decoded) else {
            return Resolved::NotFound;
        };
        let key = if rel.is_empty() || decoded.ends_with('/') {
            format!("{rel}{}index.html", if rel.is_empty() { "" } else { "/" })
        } else {
            rel.clone()
        };
        if let Some(page) = loaded.pages.get(&key) {
            return Resolved::Page(page.clone());
        }
        let path = loaded.root.join(&key);
        if path.is_file() && is_own_file(&loaded.real_root, &key) {
            Resolved::File(path)
        } else if !decoded.ends_with('/') && loaded.root.join(&rel).is_dir() {
            // Built from the checked path, never echoed: `//evil.example` must not
            // become a protocol-relative redirect.
            Resolved::Redirect(format!("/{rel}/"))
        } else {
            Resolved::NotFound
        }
    }
}

/// The path below the book root, or `None` for anything that could leave it
/// (`..`, absolute parts, backslashes, NUL).
fn safe_relative(decoded: &str) -> Option<String> {
    if decoded.contains(['\\', '\0']) {
        return None;
    }
    let mut parts = Vec::new();
    for component in Path::new(decoded.trim_start_matches('/')).components() {
        match component {
            Component::Normal(part) => parts.push(part.to_str()?),
            Component::CurDir => {}
            _ => return None,
        }
    }
    Some(parts.join("/"))
}

/// Replaces each `<link rel="stylesheet" href="…">` for the screen with a `<style>`
/// holding the file's text, as `read(href)` gives it (a link it gives nothing for
/// stays). A phone on a slow link then paints the page after one request instead of
/// a round of eight stylesheets. The element keeps its `id` (mdBook switches its
/// highlight themes by id); print-only sheets stay links.
fn inline_stylesheets(html: &str, read: impl Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(html.len() * 2);
    let mut rest = html;
    while let Some(at) = rest.find("<link ") {
        let Some(len) = rest[at..].find('>') else {
            break;
        };
        let tag = &rest[at..at + len + 1];
        out.push_str(&rest[..at]);
        rest = &rest[at + len + 1..];
        let attribute = |name: &str| {
            let key = format!(" {name}=\"");
            tag.find(&key).and_then(|start| {
                let value = &tag[start + key.len()..];
                value.find('"').map(|end| &value[..end])
            })
        };
        let inlined = match (attribute("rel"), attribute("href"), attribute("media")) {
            (Some("stylesheet"), Some(href), None | Some("all" | "screen"))
                if !href.contains("://") && !href.starts_with('/') =>
            {
                read(&crate::html::unescape_attribute(href))
            }
            _ => None,
        };
        match inlined {
            // `</style` cannot occur in CSS we wrote or mdBook ships; refuse it anyway.
            Some(css) if !css.to_ascii_lowercase().contains("</style") => {
                out.push_str("<style");
                if let Some(id) = attribute("id") {
                    out.push_str(&format!(" id=\"{id}\""));
                }
                out.push('>');
                out.push_str(&css);
                out.push_str("</style>");
            }
            _ => out.push_str(tag),
        }
    }
    out.push_str(rest);
    out
}

/// Injects the token right at the start of `<head>` (before any script that may
/// read it) and computes the page's CSP from the scripts it will actually run.
fn prepare_page(html: &str, token: &Token, framed: bool) -> Option<Page> {
    let at = head_content_start(html)?;
    let meta = format!(
        r#"<meta name="pipebook-token" content="{}">"#,
        token.as_str()
    );
    let mut body = String::with_capacity(html.len() + meta.len());
    body.push_str(&html[..at]);
    body.push_str(&meta);
    body.push_str(&html[at..]);
    let has_base = find_ascii_ci(body.as_bytes(), b"<base ").is_some();
    let csp = content_security_policy(&inline_scripts(&body), has_base, framed);
    Some(Page {
        body: Bytes::from(body),
        csp: HeaderValue::from_str(&csp).ok()?,
    })
}

/// The Content-Type for a file, by extension. `nosniff` is set on every response,
/// so scripts and styles must be labelled right or the browser refuses them.
pub(crate) fn content_type(path: &Path) -> &'static str {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default()
        .to_ascii_lowercase();
    match ext.as_str() {
        "html" => "text/html; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "json" | "map" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "ico" => "image/x-icon",
        "woff" => "font/woff",
        "woff2" => "font/woff2",
        "ttf" => "font/ttf",
        "otf" => "font/otf",
        "eot" => "application/vnd.ms-fontobject",
        "txt" | "md" => "text/plain; charset=utf-8",
        "wasm" => "application/wasm",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site() -> (tempfile::TempDir, Site, Token) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("ch")).unwrap();
        std::fs::write(
            dir.path().join("index.html"),
            "<html><head><title>i</title><script>boot()</script></head></html>",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("ch/index.html"),
            "<html><head></head></html>",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("404.html"),
            "<html><head><base href=\"/\"></head></html>",
        )
        .unwrap();
        std::fs::write(dir.path().join("a.css"), "x").unwrap();
        let token = Token::generate();
        let site = Site::load(dir.path(), &token).unwrap();
        (dir, site, token)
    }

    #[test]
    fn pages_carry_the_token_and_their_script_hashes() {
        let (_dir, site, token) = site();
        let Resolved::Page(page) = site.resolve("/") else {
            panic!()
        };
        let body = std::str::from_utf8(&page.body).unwrap();
        assert!(body.starts_with(&format!(
            "<html><head><meta name=\"pipebook-token\" content=\"{}\"><title>",
            token.as_str()
        )));
        let csp = page.csp.to_str().unwrap();
        assert!(
            csp.contains("'sha256-") && csp.contains("base-uri 'none'"),
            "{csp}"
        );
        let page_404 = site.not_found_page().unwrap();
        let csp_404 = page_404.csp.to_str().unwrap();
        assert!(csp_404.contains("base-uri 'self'"), "{csp_404}");
        assert_eq!(site.page_count(), 3);
    }

    #[test]
    fn a_rebuilt_book_replaces_the_old_one() {
        let (_dir, site, token) = site();
        let other = tempfile::tempdir().unwrap();
        std::fs::write(
            other.path().join("index.html"),
            "<html><head><title>new</title></head></html>",
        )
        .unwrap();
        site.replace(Site::load(other.path(), &token).unwrap());
        let Resolved::Page(page) = site.resolve("/") else {
            panic!()
        };
        assert!(std::str::from_utf8(&page.body)
            .unwrap()
            .contains("<title>new</title>"));
        assert!(matches!(site.resolve("/ch/"), Resolved::NotFound));
        assert_eq!(site.page_count(), 1);
    }

    #[test]
    fn screen_stylesheets_are_inlined_with_their_ids() {
        let html = r#"<head><link rel="stylesheet" href="css/a.css"><link rel="stylesheet" href="p.css" media="print"><link rel="stylesheet" id="hl" href="b.css"><link rel="icon" href="f.svg"><link rel="stylesheet" href="gone.css"></head>"#;
        let out = inline_stylesheets(html, |href| match href {
            "css/a.css" => Some("a{}".into()),
            "b.css" => Some("b{}".into()),
            "p.css" => Some("p{}".into()),
            _ => None,
        });
        assert_eq!(
            out,
            r#"<head><style>a{}</style><link rel="stylesheet" href="p.css" media="print"><style id="hl">b{}</style><link rel="icon" href="f.svg"><link rel="stylesheet" href="gone.css"></head>"#
        );
        // CSS that would close the element early is left as a link.
        let evil = inline_stylesheets(r#"<link rel="stylesheet" href="x.css">"#, |_| {
            Some("</STYLE><script>".into())
        });
        assert_eq!(evil, r#"<link rel="stylesheet" href="x.css">"#);
    }

    #[test]
    fn paths_resolve_safely() {
        let (dir, site, _) = site();
        assert!(matches!(site.resolve("/ch/"), Resolved::Page(_)));
        assert!(matches!(site.resolve("/ch/index.html"), Resolved::Page(_)));
        assert!(matches!(site.resolve("/ch"), Resolved::Redirect(r) if r == "/ch/"));
        assert!(
            matches!(site.resolve("/a.css"), Resolved::File(p) if p == dir.path().join("a.css"))
        );
        for bad in [
            "/../etc/passwd",
            "/ch/../../x",
            "/%2e%2e/x",
            "/a%5c..",
            "/nope.html",
            "/a.css/",
        ] {
            assert!(matches!(site.resolve(bad), Resolved::NotFound), "{bad}");
        }
    }

    #[test]
    fn links_and_other_users_files_in_the_book_are_not_served() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "hunter2").unwrap();
        std::fs::write(
            outside.path().join("page.html"),
            "<html><head></head>hunter2</html>",
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let book = dir.path();
        std::fs::write(book.join("index.html"), "<html><head></head></html>").unwrap();
        std::fs::write(book.join("own.css"), "x").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), book.join("secret.css")).unwrap();
        std::os::unix::fs::symlink(outside.path(), book.join("linked")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("page.html"), book.join("page.html"))
            .unwrap();
        std::fs::write(book.join("theirs.css"), "x").unwrap();
        // The suite runs as root, which may give a file away.
        let nobody = rustix::process::Uid::from_raw(65534);
        rustix::fs::chown(book.join("theirs.css"), Some(nobody), None).unwrap();
        let site = Site::load(book, &Token::generate()).unwrap();
        assert_eq!(site.page_count(), 1, "a linked page is not loaded");
        assert!(matches!(site.resolve("/own.css"), Resolved::File(_)));
        for planted in [
            "/secret.css",
            "/linked/secret",
            "/linked/page.html",
            "/page.html",
        ] {
            assert!(
                matches!(site.resolve(planted), Resolved::NotFound),
                "{planted}"
            );
        }
        assert!(matches!(site.resolve("/theirs.css"), Resolved::NotFound));
    }

    #[test]
    fn scripts_and_styles_are_labelled() {
        assert_eq!(
            content_type(Path::new("x/book.js")),
            "text/javascript; charset=utf-8"
        );
        assert_eq!(content_type(Path::new("a.CSS")), "text/css; charset=utf-8");
        assert_eq!(content_type(Path::new("f.woff2")), "font/woff2");
    }
}
