//! The article's perf profiles (Linux 5.17) and the names those kernel functions
//! carry in later kernels, as data: one place for the figures the book compares
//! against and for the renames that line a 6.x profile up with them.
//!
//! The article quotes `perf report` call-graph percentages, which are inclusive
//! ("children": the function and everything it called), so a measured profile is
//! compared by its inclusive share.

use serde::Serialize;

use crate::profile::EndProfile;

/// One function of an article profile: its 5.17 name and inclusive percentage.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ArticleRow {
    /// The name in the article's 5.17 profile.
    pub function: &'static str,
    /// Its share of the writer's samples there, percent (inclusive).
    pub percent: f64,
}

const fn row(function: &'static str, percent: f64) -> ArticleRow {
    ArticleRow { function, percent }
}

/// The writer profiles the article quotes, by step id.
pub(crate) const ARTICLE_PROFILES: &[(&str, &[ArticleRow])] = &[
    (
        "write-read",
        &[
            row("write", 48.05),
            row("pipe_write", 47.23),
            row("copy_page_from_iter", 24.08),
            row("__alloc_pages", 11.76),
            row("schedule", 4.32),
            row("__wake_up_common_lock", 2.98),
        ],
    ),
    (
        "vmsplice-splice",
        &[
            row("vmsplice", 49.59),
            row("__do_sys_vmsplice", 44.30),
            row("iov_iter_get_pages", 17.88),
            row("internal_get_user_pages_fast", 16.88),
            row("__mutex_lock", 16.57),
            row("try_grab_compound_head", 11.22),
            row("add_to_pipe", 3.89),
            row("iov_iter_advance", 1.17),
        ],
    ),
    (
        "huge-pages",
        &[
            row("vmsplice", 46.91),
            row("__do_sys_vmsplice", 41.80),
            row("wait_for_space", 14.90),
            row("__wake_up_common_lock", 8.27),
            row("add_to_pipe", 4.40),
            row("iov_iter_get_pages", 4.24),
            row("__mutex_lock", 3.92),
        ],
    ),
];

/// 5.17 names and what the same code is called in later kernels (checked
/// against the symbol tables of 6.12 and 6.18): the old name first, then the
/// newer ones. A name missing here was not renamed.
pub(crate) const RENAMES: &[(&str, &[&str])] = &[
    // 6.15 split pipe_write into anon_pipe_write for anonymous pipes.
    ("pipe_write", &["pipe_write", "anon_pipe_write"]),
    // Memory allocation profiling (6.10) added the _noprof suffix; 6.15 moved
    // the work into __alloc_frozen_pages_noprof.
    (
        "__alloc_pages",
        &[
            "__alloc_pages",
            "__alloc_pages_noprof",
            "alloc_pages_noprof",
            "__alloc_frozen_pages_noprof",
        ],
    ),
    // iov_iter_get_pages became iov_iter_get_pages2 (6.0), its work
    // __iov_iter_get_pages_alloc; vmsplice's iter_to_pipe still calls it in 6.18.
    (
        "iov_iter_get_pages",
        &[
            "iov_iter_get_pages",
            "iov_iter_get_pages2",
            "__iov_iter_get_pages_alloc",
        ],
    ),
    // The lockless walk is gup_fast_fallback since 6.10.
    (
        "internal_get_user_pages_fast",
        &[
            "internal_get_user_pages_fast",
            "gup_fast_fallback",
            "get_user_pages_fast",
        ],
    ),
    // Folios: try_grab_folio (5.18 on), try_grab_folio_fast for the fast walk (6.10).
    (
        "try_grab_compound_head",
        &[
            "try_grab_compound_head",
            "try_grab_folio",
            "try_grab_folio_fast",
        ],
    ),
    // __wake_up_common_lock is a static helper that 6.x builds inline into its
    // callers (no symbol on 6.18): __wake_up for splice's wake-ups,
    // __wake_up_sync_key for pipe_read/pipe_write's.
    (
        "__wake_up_common_lock",
        &["__wake_up_common_lock", "__wake_up", "__wake_up_sync_key"],
    ),
    (
        "__mutex_lock",
        &["__mutex_lock", "mutex_lock", "__mutex_lock_slowpath"],
    ),
    (
        "__do_sys_vmsplice",
        &["__do_sys_vmsplice", "__x64_sys_vmsplice"],
    ),
    // The libc wrappers; a program that makes raw system calls has none.
    ("write", &["write", "__libc_write", "__GI___libc_write"]),
];

/// The names to look for when the article says `function`: itself, or its renames.
pub fn aliases(function: &str) -> Vec<&str> {
    RENAMES
        .iter()
        .find(|(old, _)| *old == function)
        .map_or_else(|| vec![function], |(_, names)| names.to_vec())
}

/// The article's writer profile for `step`, if it quotes one.
pub(crate) fn article_profile(step: &str) -> Option<&'static [ArticleRow]> {
    ARTICLE_PROFILES
        .iter()
        .find(|(id, _)| *id == step)
        .map(|(_, rows)| *rows)
}

/// One line of the comparison table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComparedRow {
    /// The article's (5.17) name.
    pub article_function: &'static str,
    /// The article's inclusive percentage.
    pub article_percent: f64,
    /// The name it has in this profile, if any alias was sampled.
    pub measured_function: Option<String>,
    /// Inclusive percentage here.
    pub children_percent: Option<f64>,
    /// Self percentage here.
    pub self_percent: Option<f64>,
}

/// The article's writer profile for `step` next to `writer` (measured), each
/// function under the name this kernel uses (the most sampled alias).
pub fn compare(step: &str, writer: &EndProfile) -> Option<Vec<ComparedRow>> {
    let rows = article_profile(step)?;
    Some(
        rows.iter()
            .map(|row| {
                let found = aliases(row.function)
                    .into_iter()
                    .filter_map(|name| {
                        // GCC's clones (`__mutex_lock.constprop.0`) count as the function.
                        writer
                            .all
                            .iter()
                            .find(|f| f.symbol.split('.').next() == Some(name))
                    })
                    .max_by(|a, b| a.children_percent.total_cmp(&b.children_percent));
                ComparedRow {
                    article_function: row.function,
                    article_percent: row.percent,
                    measured_function: found.map(|f| f.symbol.clone()),
                    children_percent: found.map(|f| f.children_percent),
                    self_percent: found.map(|f| f.self_percent),
                }
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::FunctionShare;

    #[test]
    fn every_rename_lists_its_old_name_first_and_names_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for (old, names) in RENAMES {
            assert_eq!(names.first(), Some(old), "{old}");
            for name in *names {
                assert!(seen.insert(*name), "{name} listed twice");
            }
        }
        assert_eq!(aliases("add_to_pipe"), ["add_to_pipe"]);
        assert!(aliases("try_grab_compound_head").contains(&"try_grab_folio"));
        assert!(aliases("pipe_write").contains(&"anon_pipe_write"));
    }

    #[test]
    fn the_articles_figures_are_there_for_its_profiled_steps() {
        assert_eq!(
            article_profile("write-read").unwrap()[1].function,
            "pipe_write"
        );
        assert_eq!(
            article_profile("vmsplice-splice").unwrap()[5].percent,
            11.22
        );
        assert_eq!(
            article_profile("huge-pages").unwrap()[2].function,
            "wait_for_space"
        );
        assert!(article_profile("busy-loop").is_none());
    }

    #[test]
    fn a_6x_profile_lines_up_through_the_renames() {
        let share = |symbol: &str, children: f64, own: f64| FunctionShare {
            symbol: symbol.into(),
            kernel: true,
            children_percent: children,
            self_percent: own,
        };
        let writer = EndProfile {
            samples: 100,
            all: vec![
                share("anon_pipe_write", 60.0, 2.0),
                share("copy_page_from_iter", 30.0, 1.0),
                share("_copy_from_iter", 29.0, 29.0),
                share("__alloc_pages_noprof", 12.0, 3.0),
                share("alloc_pages_noprof", 13.0, 0.5),
                share("__wake_up_common_lock.constprop.0", 3.0, 0.1),
            ],
            ..Default::default()
        };
        let rows = compare("write-read", &writer).unwrap();
        let pipe = rows
            .iter()
            .find(|r| r.article_function == "pipe_write")
            .unwrap();
        assert_eq!(pipe.measured_function.as_deref(), Some("anon_pipe_write"));
        assert_eq!(pipe.children_percent, Some(60.0));
        let alloc = rows
            .iter()
            .find(|r| r.article_function == "__alloc_pages")
            .unwrap();
        // The most sampled alias stands for the old name.
        assert_eq!(
            alloc.measured_function.as_deref(),
            Some("alloc_pages_noprof")
        );
        let wake = rows
            .iter()
            .find(|r| r.article_function == "__wake_up_common_lock")
            .unwrap();
        assert_eq!(
            wake.children_percent,
            Some(3.0),
            "a compiler clone is the function"
        );
        let sched = rows
            .iter()
            .find(|r| r.article_function == "schedule")
            .unwrap();
        assert_eq!(
            (sched.measured_function.as_deref(), sched.children_percent),
            (None, None)
        );
    }
}
