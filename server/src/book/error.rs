//! Why building the book failed, phrased so the author knows what to fix.

use std::path::PathBuf;

/// A book build failure.
#[derive(Debug, thiserror::Error)]
pub enum BookError {
    /// `{{#run ID}}` names a step the catalog does not have.
    #[error("{chapter}: unknown step `{id}` in `{{{{#run {id}}}}}`; known steps: {known}")]
    UnknownStep {
        /// Chapter file, as the author knows it (e.g. `book/src/baseline.md`).
        chapter: String,
        /// The id that was written.
        id: String,
        /// The catalog's ids, comma-separated.
        known: String,
    },
    /// `{{#ipc ID}}` names a mechanism the IPC lab does not have.
    #[error("{chapter}: unknown IPC mechanism `{id}` in `{{{{#ipc {id}}}}}`; known: {known}")]
    UnknownMechanism {
        /// Chapter file.
        chapter: String,
        /// The id that was written.
        id: String,
        /// The lab's ids, comma-separated.
        known: String,
    },
    /// A directive that cannot be read.
    #[error("{chapter}: cannot read `{text}`: {reason}")]
    BadDirective {
        /// Chapter file.
        chapter: String,
        /// The directive as written.
        text: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A translation's catalogue cannot be read or applied, or the template cannot be made.
    #[error("{edition}: {message}")]
    Translation {
        /// The edition (`zh-CN`) or "the template".
        edition: String,
        /// What went wrong, and where.
        message: String,
    },
    /// No book.toml, a bad SUMMARY.md, a missing chapter file...
    #[error("cannot load the book at {root}: {message}")]
    Load {
        /// The book root that was tried.
        root: PathBuf,
        /// mdBook's explanation, with its causes.
        message: String,
    },
    /// mdBook (a preprocessor or the renderer) failed.
    #[error("building the book failed: {0}")]
    Build(String),
    /// Copying the widget's files into the built book failed.
    #[error("cannot copy {from} to {to}")]
    Copy {
        /// Source path.
        from: PathBuf,
        /// Destination path.
        to: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Reading the built book back (for the link check) failed.
    #[error("cannot read the built book at {path}")]
    Read {
        /// The path that could not be read.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The book carried in the binary could not be written out to build it.
    #[error("cannot write the book's sources out to {path}")]
    Unpack {
        /// The file or folder that could not be written.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The build folder cannot be used safely (a link, another user's, in a
    /// folder others can rearrange) or the build could not be put in place.
    #[error(
        "cannot build into {}: {message}; choose a folder of your own with --build-dir",
        path.display()
    )]
    BuildDir {
        /// The build folder asked for.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// Pages link to files the build did not produce.
    #[error("the built book has {} broken link(s):\n  {}", .0.len(), .0.join("\n  "))]
    BrokenLinks(Vec<String>),
    /// Pages carry `pipebook-` classes that no directive writes, so the page's code
    /// mounts nothing there: an empty box where a widget was meant to be.
    #[error(
        "the built book has {} unknown widget class(es); write the directive \
         (`{{{{#pages ...}}}}`, `{{{{#run ...}}}}`, ...) instead of its HTML:\n  {}",
        .0.len(),
        .0.join("\n  ")
    )]
    UnknownWidgets(Vec<String>),
}
