//! Builds the book with mdBook as a library.
//!
//! The build runs mdBook's own preprocessors (`{{#include}}` and friends) and then
//! ours ([`preprocess::Widgets`], [`preprocess::Mermaid`]), renders HTML, copies the
//! widget's files in, checks every local link of the result and that every
//! `pipebook-` class on a page is a placeholder a directive wrote. The binary
//! carries the book's sources ([`build_embedded`]), so it needs no checkout
//! beside it.

mod assets;
mod directives;
mod embedded;
mod error;
pub mod i18n;
mod links;
mod markdown;
mod mermaid;
mod preprocess;
mod widgets;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mdbook_driver::MDBook;
use pipebench::process::rundir::{Base, RunDir};

pub use error::BookError;
pub use widgets::PLACEHOLDER_CLASSES;

/// A finished build.
#[derive(Debug, Clone)]
pub struct BuiltBook {
    /// Where the HTML is.
    pub dir: PathBuf,
    /// How long the build took.
    pub elapsed: Duration,
    /// For the book carried in the binary: the private temporary folder it was
    /// unpacked and built in. The built files are served from there, so whoever
    /// serves them holds this; the folder is removed when the last holder drops it.
    pub unpacked: Option<Arc<RunDir>>,
}

/// Builds the book carried inside this binary (see `build.rs`): unpacks its sources
/// into a fresh private folder (mode 0700, random name) and builds them there with
/// this binary's catalog, into `build_dir` if given, else inside that folder.
pub(crate) fn build_embedded(build_dir: Option<&Path>) -> Result<BuiltBook, BookError> {
    let started = Instant::now();
    // A private run folder (0700, random name, locked while this server lives):
    // the sources are built there and the files served from it, and one a killed
    // server leaves is removed at the next start, like every run folder.
    let temp = Base::runtime()
        .and_then(|base| RunDir::create(&base))
        .map_err(|err| BookError::Unpack {
            path: PathBuf::from("the runtime folder"),
            source: std::io::Error::other(err.to_string()),
        })?;
    embedded::unpack(temp.path())?;
    let mut built = build(temp.path(), build_dir)?;
    built.elapsed = started.elapsed();
    built.unpacked = Some(Arc::new(temp));
    Ok(built)
}

/// Builds the book whose `book.toml` is in `book_root`, into `build_dir` if given
/// (else where book.toml says).
///
/// The build never writes where another user could have put a link: it is made
/// in a fresh private folder (`rundir::RunDir`: mode 0700, random name, made
/// exclusively) beside the build folder, in a parent no other user can
/// rearrange (`Base`), checked there, and only then put in place in one rename
/// (`RunDir::publish`), the old build removed by descriptor. A build folder
/// that is a link or another user's is refused; a failed build leaves the last
/// good one in place.
pub fn build(book_root: &Path, build_dir: Option<&Path>) -> Result<BuiltBook, BookError> {
    let started = Instant::now();
    let load_error = |message: String| BookError::Load {
        root: book_root.to_path_buf(),
        message,
    };
    if !book_root.join("book.toml").is_file() {
        return Err(load_error(
            "there is no book.toml here; pass the directory that holds it with --book-root".into(),
        ));
    }
    let mut book = MDBook::load(book_root).map_err(|e| load_error(format!("{e:#}")))?;
    let destination = match build_dir {
        Some(dir) => std::path::absolute(dir).unwrap_or_else(|_| dir.into()),
        None => book.root.join(&book.config.build.build_dir),
    };
    let staging = staging_beside(&destination)?;
    book.config.build.build_dir = staging.path().to_path_buf();
    book.with_preprocessor(preprocess::Widgets::default())
        .with_preprocessor(preprocess::Mermaid);
    book.build()
        .map_err(|e| BookError::Build(format!("{e:#}")))?;
    let staged = book.build_dir_for("html");
    assets::copy(&book.theme_dir(), &staged)?;
    links::check(&staged)?;
    widgets::check(&staged)?;
    // Every other edition whose catalogue this book has, from the same sources,
    // under the English (`/zh-CN/`).
    let editions: Vec<_> = i18n::EDITIONS
        .into_iter()
        .filter(|e| i18n::catalogue_path(book_root, e).is_file())
        .collect();
    if !editions.is_empty() {
        let template = i18n::extract::catalog(book_root)?;
        for edition in editions {
            i18n::edition::build(book_root, &edition, &template, staging.path(), &staged)?;
        }
    }
    let inside = staged
        .strip_prefix(staging.path())
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let name = destination
        .file_name()
        .unwrap_or_default()
        .to_string_lossy();
    let published = staging.publish(&name).map_err(|e| BookError::BuildDir {
        path: destination.clone(),
        message: e.to_string(),
    })?;
    Ok(BuiltBook {
        dir: published.join(inside),
        elapsed: started.elapsed(),
        unpacked: None,
    })
}

/// A fresh private folder beside `destination` (its parent made if missing,
/// then checked: no other user may rearrange it), after removing the folders
/// of builds that were killed there.
fn staging_beside(destination: &Path) -> Result<RunDir, BookError> {
    let refuse = |message: String| BookError::BuildDir {
        path: destination.to_path_buf(),
        message,
    };
    let (Some(parent), Some(_)) = (destination.parent(), destination.file_name()) else {
        return Err(refuse("it has no parent folder to build beside".into()));
    };
    written_path_is_ours(parent).map_err(refuse)?;
    let base = Base::chosen(parent).map_err(|e| refuse(e.to_string()))?;
    pipebench::process::rundir::remove_dead_in(&base);
    RunDir::create(&base).map_err(|e| refuse(e.to_string()))
}

/// Every folder on `path` as written (those that exist) is one no other user
/// can rearrange, and every symbolic link on it was made by root or this user:
/// a link another user planted in a shared folder (`/tmp/x` -> a root-only
/// folder) would otherwise lead the build, and the removal of the old one,
/// wherever they chose. (What the links lead to is checked too, by `Base`.)
fn written_path_is_ours(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let path = std::path::absolute(path).map_err(|e| e.to_string())?;
    let me = rustix::process::geteuid().as_raw();
    for folder in path.ancestors() {
        let Ok(meta) = std::fs::symlink_metadata(folder) else {
            continue;
        };
        let (uid, mode) = (meta.uid(), meta.mode() & 0o7777);
        if uid != me && uid != 0 {
            let what = if meta.file_type().is_symlink() {
                "a symbolic link"
            } else {
                "a folder"
            };
            return Err(format!(
                "{} is {what} of uid {uid}, who could lead the build elsewhere",
                folder.display()
            ));
        }
        if meta.is_dir() && mode & 0o022 != 0 && mode & 0o1000 == 0 {
            return Err(format!(
                "{} may be rearranged by others (mode {mode:04o})",
                folder.display()
            ));
        }
    }
    Ok(())
}
