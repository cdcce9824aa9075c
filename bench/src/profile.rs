//! `pipebench run STEP --profile`: where each end spends its time, via perf.
//!
//! `perf record -p PID` attaches to an end right after it starts and stops by
//! itself when that end exits; `perf report` then gives the hottest symbols, kernel
//! ones included, which is how the article found `copy_page_from_iter`,
//! `iov_iter_get_pages` and `try_grab_compound_head`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;

/// Why profiling did not work, with what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// perf is not on PATH.
    #[error("perf is not installed: on Debian or Ubuntu, `apt-get install linux-perf` (or linux-tools-$(uname -r)), then run again")]
    NotInstalled,
    /// perf ran but failed, e.g. for lack of permission.
    #[error("perf {stage} failed: {message} (as a normal user, lower /proc/sys/kernel/perf_event_paranoid, e.g. `sysctl kernel.perf_event_paranoid=1`, or run as root)")]
    Failed {
        /// `record` or `report`.
        stage: &'static str,
        /// What perf printed.
        message: String,
    },
}

/// One line of a flat profile.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HotSymbol {
    /// Share of the samples, percent.
    pub percent: f64,
    /// `kernel` or `user`.
    pub space: &'static str,
    /// The symbol.
    pub symbol: String,
}

/// A perf recording attached to one end.
#[derive(Debug)]
pub struct Recording {
    child: Child,
    data: PathBuf,
}

/// Whether `perf` is on PATH.
pub fn perf_installed() -> bool {
    std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|dir| dir.join("perf").is_file()))
        .unwrap_or(false)
}

impl Recording {
    /// Starts `perf record` on process `pid`, writing `dir/NAME.perf.data`.
    pub fn attach(pid: u32, name: &str, dir: &Path) -> Result<Recording, ProfileError> {
        if !perf_installed() {
            return Err(ProfileError::NotInstalled);
        }
        let data = dir.join(format!("{name}.perf.data"));
        let child = Command::new("perf")
            .args(["record", "-q", "-o"])
            .arg(&data)
            .args(["-p", &pid.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| ProfileError::Failed {
                stage: "record",
                message: e.to_string(),
            })?;
        Ok(Recording { child, data })
    }

    /// Waits for perf to finish (its target has exited) and reports the top
    /// `limit` symbols.
    pub fn finish(mut self, limit: usize) -> Result<Vec<HotSymbol>, ProfileError> {
        let deadline = Instant::now() + Duration::from_secs(30);
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                _ => {
                    let _ = self.child.kill();
                    break self.child.wait().map_err(|e| ProfileError::Failed {
                        stage: "record",
                        message: e.to_string(),
                    })?;
                }
            }
        };
        let mut stderr = String::new();
        if let Some(mut pipe) = self.child.stderr.take() {
            use std::io::Read;
            let _ = pipe.read_to_string(&mut stderr);
        }
        if !status.success() && !self.data.exists() {
            return Err(ProfileError::Failed {
                stage: "record",
                message: stderr.trim().to_string(),
            });
        }
        let output = Command::new("perf")
            .args([
                "report",
                "--stdio",
                "--no-children",
                "--sort",
                "symbol",
                "-q",
                "-i",
            ])
            .arg(&self.data)
            .output()
            .map_err(|e| ProfileError::Failed {
                stage: "report",
                message: e.to_string(),
            })?;
        if !output.status.success() {
            return Err(ProfileError::Failed {
                stage: "report",
                message: String::from_utf8_lossy(&output.stderr).trim().to_string(),
            });
        }
        Ok(parse_report(
            &String::from_utf8_lossy(&output.stdout),
            limit,
        ))
    }
}

/// Parses `perf report --stdio --sort symbol` lines such as
/// `    26.72%  [k] _copy_from_iter`.
pub fn parse_report(text: &str, limit: usize) -> Vec<HotSymbol> {
    text.lines()
        .filter_map(|line| {
            let line = line.trim();
            let (percent, rest) = line.split_once('%')?;
            let percent: f64 = percent.trim().parse().ok()?;
            let rest = rest.trim();
            let (space, symbol) = if let Some(s) = rest.strip_prefix("[k]") {
                ("kernel", s)
            } else if let Some(s) = rest.strip_prefix("[.]") {
                ("user", s)
            } else {
                return None;
            };
            let symbol = symbol.split_whitespace().next()?.to_string();
            Some(HotSymbol {
                percent,
                space,
                symbol,
            })
        })
        .take(limit)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_lines_parse_into_symbols() {
        let text = "\n    26.72%  [k] _copy_from_iter      -   -\n     9.94%  [.] main\n# comment\n     1.00%  [k] anon_pipe_write\n";
        let hot = parse_report(text, 2);
        assert_eq!(hot.len(), 2);
        assert_eq!(hot[0].symbol, "_copy_from_iter");
        assert_eq!(hot[0].space, "kernel");
        assert!((hot[0].percent - 26.72).abs() < 1e-9);
        assert_eq!(hot[1].space, "user");
    }
}
