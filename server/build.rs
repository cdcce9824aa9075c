//! Puts the book's sources into the binary, so an installed or copied `pipebook`
//! serves the whole book from any folder.
//!
//! What is carried is what a build of the book reads: `book.toml`, the chapters
//! (`book/src`), the theme and the page code (`book/theme`), the labs
//! (`book/labs`), the translations (`po`) and the Rust sources the listings include (`bench/src`). The
//! server builds the book from them at start-up with its own preprocessors, so the
//! `{{#run}}` widgets always match the catalog compiled into the same binary.
//! Cargo re-runs this script when any of them changes.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The folders and files carried, relative to the workspace.
const CARRIED: [&str; 6] = [
    "book.toml",
    "po",
    "book/src",
    "book/theme",
    "book/labs",
    "bench/src",
];

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let workspace = manifest.parent().expect("server/ is inside the workspace");
    let mut files = Vec::new();
    for entry in CARRIED {
        let path = workspace.join(entry);
        println!("cargo:rerun-if-changed={}", path.display());
        collect(&path, &mut files);
    }
    files.sort();
    let mut out = String::from(
        "/// The book's sources: (path relative to the workspace, contents).\n\
         pub(crate) static FILES: &[(&str, &[u8])] = &[\n",
    );
    for file in &files {
        let relative = file
            .strip_prefix(workspace)
            .expect("collected under the workspace")
            .to_str()
            .unwrap_or_else(|| panic!("{} is not UTF-8", file.display()));
        let _ = writeln!(
            out,
            "    ({relative:?}, include_bytes!({:?})),",
            file.to_str().expect("UTF-8 path")
        );
    }
    out.push_str("];\n");
    let dest =
        PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo")).join("embedded_book.rs");
    std::fs::write(&dest, out).unwrap_or_else(|e| panic!("writing {}: {e}", dest.display()));
}

/// Every regular file under `path` (or `path` itself), skipping hidden entries.
fn collect(path: &Path, files: &mut Vec<PathBuf>) {
    let hidden = path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with('.'));
    if hidden {
        return;
    }
    if path.is_file() {
        files.push(path.to_path_buf());
    } else if path.is_dir() {
        let entries = std::fs::read_dir(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for entry in entries {
            let entry = entry.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            collect(&entry.path(), files);
        }
    }
}
