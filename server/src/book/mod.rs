//! Builds the book with mdBook as a library.
//!
//! The build runs mdBook's own preprocessors (`{{#include}}` and friends) and then
//! ours ([`preprocess::Widgets`], [`preprocess::Mermaid`]), renders HTML, copies the
//! widget's files in, checks every local link of the result and that every
//! `pipebook-` class on a page is a placeholder a directive wrote.

mod assets;
mod directives;
mod error;
mod links;
mod markdown;
mod mermaid;
mod preprocess;
mod widgets;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mdbook_driver::MDBook;

pub use error::BookError;
pub use widgets::PLACEHOLDER_CLASSES;

/// A finished build.
#[derive(Debug, Clone)]
pub struct BuiltBook {
    /// Where the HTML is.
    pub dir: PathBuf,
    /// How long the build took.
    pub elapsed: Duration,
}

/// Builds the book whose `book.toml` is in `book_root`, into `build_dir` if given
/// (else where book.toml says).
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
    if let Some(dir) = build_dir {
        book.config.build.build_dir = std::path::absolute(dir).unwrap_or_else(|_| dir.into());
    }
    book.with_preprocessor(preprocess::Widgets)
        .with_preprocessor(preprocess::Mermaid);
    book.build()
        .map_err(|e| BookError::Build(format!("{e:#}")))?;
    let dir = book.build_dir_for("html");
    assets::copy(&book.theme_dir(), &dir)?;
    links::check(&dir)?;
    widgets::check(&dir)?;
    Ok(BuiltBook {
        dir,
        elapsed: started.elapsed(),
    })
}
