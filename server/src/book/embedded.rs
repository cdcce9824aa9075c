//! The book's sources carried inside the binary (see `build.rs`): written out to a
//! private temporary folder at start-up and built there like any checkout.

use std::path::Path;

use super::error::BookError;

include!(concat!(env!("OUT_DIR"), "/embedded_book.rs"));

/// Writes every carried file under `root` (an empty folder), keeping their paths.
pub(crate) fn unpack(root: &Path) -> Result<(), BookError> {
    for (relative, contents) in FILES {
        let path = root.join(relative);
        let error = |source| BookError::Unpack {
            path: path.clone(),
            source,
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(error)?;
        }
        // create_new: the folder is fresh, so an existing file means someone else
        // put it there; never write through it.
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .and_then(|mut file| std::io::Write::write_all(&mut file, contents))
            .map_err(error)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn carries_the_book_and_what_its_listings_include() {
        let names: Vec<&str> = FILES.iter().map(|(name, _)| *name).collect();
        for needed in [
            "book.toml",
            "book/src/SUMMARY.md",
            "book/theme/head.hbs",
            "book/theme/vendor/mermaid.min.js",
            "book/labs/labs.json",
            "bench/src/ends/writer.rs",
        ] {
            assert!(names.contains(&needed), "{needed} is not carried");
        }
        // Only what a build reads: not the audits' node_modules, not target/.
        assert!(names
            .iter()
            .all(|n| !n.contains("node_modules") && !n.starts_with("target/")));
    }

    #[test]
    fn unpacks_into_an_empty_folder_only() {
        let dir = tempfile::tempdir().unwrap();
        unpack(dir.path()).unwrap();
        let toml = std::fs::read(dir.path().join("book.toml")).unwrap();
        assert_eq!(
            toml,
            FILES.iter().find(|(n, _)| *n == "book.toml").unwrap().1
        );
        // A second unpack into the same folder refuses to overwrite.
        assert!(matches!(unpack(dir.path()), Err(BookError::Unpack { .. })));
    }
}
