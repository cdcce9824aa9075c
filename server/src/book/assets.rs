//! Copies the runner widget's files from the theme into the built book.
//!
//! mdBook copies only the theme files it knows; the widget (`theme/pipebook/`) and
//! vendored libraries (`theme/vendor/`) are ours to place where `head.hbs` loads
//! them: `{{ path_to_root }}pipebook/...` and `{{ path_to_root }}vendor/...`.

use std::path::Path;

use super::error::BookError;

/// Theme sub-directories copied to the same name under the build directory.
pub(super) const ASSET_DIRS: [&str; 2] = ["pipebook", "vendor"];

/// Copies each of [`ASSET_DIRS`] that exists in `theme_dir` into `build_dir`.
pub(super) fn copy(theme_dir: &Path, build_dir: &Path) -> Result<(), BookError> {
    for name in ASSET_DIRS {
        let from = theme_dir.join(name);
        if from.is_dir() {
            copy_tree(&from, &build_dir.join(name))?;
        }
    }
    Ok(())
}

fn copy_tree(from: &Path, to: &Path) -> Result<(), BookError> {
    let error = |source| BookError::Copy {
        from: from.to_path_buf(),
        to: to.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(to).map_err(error)?;
    for entry in std::fs::read_dir(from).map_err(error)? {
        let entry = entry.map_err(error)?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if entry.file_type().map_err(error)?.is_dir() {
            copy_tree(&src, &dst)?;
        } else {
            std::fs::copy(&src, &dst).map_err(|source| BookError::Copy {
                from: src.clone(),
                to: dst.clone(),
                source,
            })?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_present_asset_dirs_recursively() {
        let theme = tempfile::tempdir().unwrap();
        let out = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(theme.path().join("pipebook/lib")).unwrap();
        std::fs::write(theme.path().join("pipebook/lib/a.js"), "a").unwrap();
        copy(theme.path(), out.path()).unwrap();
        assert_eq!(
            std::fs::read_to_string(out.path().join("pipebook/lib/a.js")).unwrap(),
            "a"
        );
        assert!(!out.path().join("vendor").exists());
    }
}
