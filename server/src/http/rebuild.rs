//! `--watch`: rebuilds the book when a file under `--book-root` changes, as
//! `mdbook serve` does for authors, and serves the new build from the next request.
//!
//! It polls (once a second) a fingerprint of the sources instead of asking the
//! kernel for events: a book is a few hundred files, and polling needs no extra
//! dependency and sees edits made on any filesystem, network mounts included.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use crate::config::{build_book, Config};
use crate::http::site::Site;
use crate::state::AppState;

/// How often the sources are looked at.
const POLL: Duration = Duration::from_secs(1);

/// Folders never looked at: build output, version control, installed packages.
const SKIPPED: [&str; 3] = ["target", "node_modules", ".git"];

/// A number that changes when any file under `root` is added, removed, resized or
/// modified (names, sizes and modification times, hashed), build output aside.
pub(crate) fn fingerprint(root: &Path) -> u64 {
    let mut hasher = DefaultHasher::new();
    let mut dirs = vec![root.to_path_buf()];
    let mut entries = Vec::new();
    while let Some(dir) = dirs.pop() {
        let Ok(listing) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in listing.flatten() {
            let name = entry.file_name();
            // A build in progress lives in a private run folder beside its output.
            let building = name
                .to_str()
                .is_some_and(|n| n.starts_with(pipebench::process::rundir::PREFIX));
            if building || SKIPPED.iter().any(|s| name == *s) {
                continue;
            }
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                dirs.push(entry.path());
            } else {
                let modified = meta
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                    .unwrap_or_default();
                entries.push((entry.path(), meta.len(), modified));
            }
        }
    }
    // read_dir's order is the filesystem's: sort, so only a change changes the hash.
    entries.sort();
    entries.hash(&mut hasher);
    hasher.finish()
}

/// The sources' fingerprint before the book is built, so an edit made while it
/// builds, or right after the server says it is serving, is seen as a change
/// (taken later, it would become the baseline and never be rebuilt). `None`
/// without a book root.
pub(crate) fn baseline(config: &Config) -> Option<u64> {
    config.book_root.as_deref().map(fingerprint)
}

/// Starts looking at `config.book_root` (nothing without one) until the server
/// stops, from `seen`, the [`baseline`] taken before the build.
pub(crate) fn spawn(config: Config, state: AppState, seen: Option<u64>) {
    let (Some(root), Some(mut seen)) = (config.book_root.clone(), seen) else {
        return;
    };
    tokio::spawn(async move {
        let fingerprint_of =
            |root: std::path::PathBuf| tokio::task::spawn_blocking(move || fingerprint(&root));
        tracing::info!("rebuilding the book when {} changes", root.display());
        loop {
            tokio::select! {
                () = tokio::time::sleep(POLL) => {}
                () = state.shutdown.wait() => return,
            }
            let Ok(now) = fingerprint_of(root.clone()).await else {
                return;
            };
            if now == seen {
                continue;
            }
            seen = now;
            rebuild(&config, &state).await;
        }
    });
}

/// Builds again and, if that works, serves the new build; otherwise says why and
/// keeps serving the last good one.
async fn rebuild(config: &Config, state: &AppState) {
    let (config, token) = (config.clone(), Arc::clone(&state.token));
    let outcome = tokio::task::spawn_blocking(move || {
        let built = build_book(&config).map_err(|e| crate::error_chain(&e))?;
        let site = Site::load_holding(&built.dir, &token, built.unpacked.clone())
            .map_err(|e| crate::error_chain(&e))?;
        Ok::<_, String>((built.elapsed, site))
    })
    .await;
    match outcome {
        Ok(Ok((elapsed, site))) => {
            state.site.replace(site);
            tracing::info!(
                "sources changed: book rebuilt in {:.1} s",
                elapsed.as_secs_f64()
            );
        }
        Ok(Err(err)) => {
            tracing::warn!(
                "sources changed but the book does not build: {err}; still serving the last build"
            )
        }
        Err(err) => tracing::warn!("the rebuild failed: {err}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_change_changes_the_fingerprint_and_build_output_does_not() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::create_dir_all(dir.path().join("target/book")).unwrap();
        std::fs::write(dir.path().join("src/a.md"), "# A\n").unwrap();
        let before = fingerprint(dir.path());
        assert_eq!(fingerprint(dir.path()), before, "nothing changed");
        std::fs::write(dir.path().join("target/book/a.html"), "<p>").unwrap();
        assert_eq!(
            fingerprint(dir.path()),
            before,
            "build output is not a source"
        );
        std::fs::write(dir.path().join("src/a.md"), "# A, longer\n").unwrap();
        let edited = fingerprint(dir.path());
        assert_ne!(edited, before, "an edited chapter");
        std::fs::write(dir.path().join("src/b.md"), "# B\n").unwrap();
        assert_ne!(fingerprint(dir.path()), edited, "a new chapter");
    }
}
