//! How the two CPUs of a latency run sit, and pairs chosen by that
//! (`--pair`): two SMT (hyperthread) threads of one core share its execution
//! units and caches, so a spinning end slows the partner it waits for, while
//! two cores hand a message over through the shared cache. The default pair
//! is the pipe steps' ([`super::default_cpus`]), whatever it is; the run's
//! result names how its CPUs sit ([`Placement`]).
//!
//! The choice is pure over each CPU's `thread_siblings_list` text, so crafted
//! topologies test it; [`Topology::read`] reads the real one from sysfs.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// How the two CPUs of a run sit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    /// Both ends on one CPU: they take turns on it.
    SameCpu,
    /// Two SMT threads of one core.
    SmtSiblings,
    /// Two different cores.
    SeparateCores,
    /// The kernel did not say (no topology in sysfs); also what older records read as.
    #[default]
    Unknown,
}

impl Placement {
    /// `same-cpu`, `smt-siblings`, `separate-cores` or `unknown`.
    pub fn as_str(self) -> &'static str {
        match self {
            Placement::SameCpu => "same-cpu",
            Placement::SmtSiblings => "smt-siblings",
            Placement::SeparateCores => "separate-cores",
            Placement::Unknown => "unknown",
        }
    }

    /// In words, for a table: `one CPU`, `two threads of one core`, `two cores`.
    pub fn words(self) -> &'static str {
        match self {
            Placement::SameCpu => "one CPU",
            Placement::SmtSiblings => "two threads of one core",
            Placement::SeparateCores => "two cores",
            Placement::Unknown => "two CPUs (topology unknown)",
        }
    }
}

/// Each CPU's SMT siblings (itself included), as the kernel lists them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Topology {
    siblings: BTreeMap<usize, Vec<usize>>,
}

/// Parses a kernel CPU list such as `0-3,8,10-11`; `None` if any part does not read.
fn cpu_list(text: &str) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.trim().is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => out.extend(a.trim().parse::<usize>().ok()?..=b.trim().parse().ok()?),
            None => out.push(part.trim().parse().ok()?),
        }
    }
    (!out.is_empty()).then_some(out)
}

impl Topology {
    /// From `(cpu, thread_siblings_list text)` pairs; a text that does not read
    /// leaves its CPU unknown.
    pub fn parse<'a>(lists: impl IntoIterator<Item = (usize, &'a str)>) -> Topology {
        Topology {
            siblings: lists
                .into_iter()
                .filter_map(|(cpu, text)| Some((cpu, cpu_list(text)?)))
                .collect(),
        }
    }

    /// This machine's, for `cpus`, from
    /// `/sys/devices/system/cpu/cpuN/topology/thread_siblings_list`.
    pub fn read(cpus: &[usize]) -> Topology {
        let texts: Vec<(usize, String)> = cpus
            .iter()
            .filter_map(|&cpu| {
                let path =
                    format!("/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list");
                Some((cpu, std::fs::read_to_string(path).ok()?))
            })
            .collect();
        Topology::parse(texts.iter().map(|(cpu, text)| (*cpu, text.as_str())))
    }

    /// How `cpus` sit.
    pub fn placement(&self, [a, b]: [usize; 2]) -> Placement {
        if a == b {
            return Placement::SameCpu;
        }
        match (self.siblings.get(&a), self.siblings.get(&b)) {
            (Some(of_a), _) if of_a.contains(&b) => Placement::SmtSiblings,
            (_, Some(of_b)) if of_b.contains(&a) => Placement::SmtSiblings,
            (Some(_), Some(_)) => Placement::SeparateCores,
            _ => Placement::Unknown,
        }
    }

    /// The first pair of `allowed` CPUs (in their order, the first CPU kept
    /// where it can be) that sits as `want`, if there is one.
    pub fn pair(&self, allowed: &[usize], want: Placement) -> Option<[usize; 2]> {
        if want == Placement::SameCpu {
            return allowed.first().map(|&a| [a, a]);
        }
        allowed.iter().enumerate().find_map(|(i, &a)| {
            allowed[i + 1..]
                .iter()
                .find(|&&b| self.placement([a, b]) == want)
                .map(|&b| [a, b])
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Intel's numbering: CPU n and n + 4 share a core.
    fn interleaved() -> Topology {
        Topology::parse((0..8).map(|cpu| (cpu, ["0,4", "1,5", "2,6", "3,7"][cpu % 4])))
    }

    /// AMD's (and many VMs'): CPUs 2k and 2k + 1 share a core.
    fn adjacent() -> Topology {
        Topology::parse((0..8).map(|cpu| (cpu, ["0-1", "2-3", "4-5", "6-7"][cpu / 2])))
    }

    #[test]
    fn placements_read_from_sibling_lists() {
        let t = adjacent();
        assert_eq!(t.placement([3, 3]), Placement::SameCpu);
        assert_eq!(t.placement([0, 1]), Placement::SmtSiblings);
        assert_eq!(t.placement([1, 0]), Placement::SmtSiblings);
        assert_eq!(t.placement([1, 2]), Placement::SeparateCores);
        assert_eq!(interleaved().placement([0, 1]), Placement::SeparateCores);
        assert_eq!(interleaved().placement([4, 0]), Placement::SmtSiblings);
        // A CPU the kernel says nothing of, or a list that does not read.
        assert_eq!(t.placement([0, 9]), Placement::Unknown);
        let broken = Topology::parse([(0, "0-1"), (1, "zero")]);
        assert_eq!(broken.placement([1, 2]), Placement::Unknown);
        // CPU 0's list alone places it with 1.
        assert_eq!(broken.placement([1, 0]), Placement::SmtSiblings);
    }

    #[test]
    fn pairs_by_placement_whatever_the_numbering() {
        let all: Vec<usize> = (0..8).collect();
        assert_eq!(
            adjacent().pair(&all, Placement::SeparateCores),
            Some([0, 2])
        );
        assert_eq!(adjacent().pair(&all, Placement::SmtSiblings), Some([0, 1]));
        // Only one core's two threads allowed (taskset -c 0,4): no two cores.
        assert_eq!(
            interleaved().pair(&[0, 4], Placement::SmtSiblings),
            Some([0, 4])
        );
        assert_eq!(interleaved().pair(&[0, 4], Placement::SeparateCores), None);
        // No topology: nothing can be said of two CPUs.
        assert_eq!(Topology::default().placement([3, 5]), Placement::Unknown);
    }

    #[test]
    fn a_pair_is_chosen_as_asked() {
        let all: Vec<usize> = (0..8).collect();
        let t = interleaved();
        assert_eq!(t.pair(&all, Placement::SmtSiblings), Some([0, 4]));
        assert_eq!(t.pair(&all, Placement::SeparateCores), Some([0, 1]));
        assert_eq!(t.pair(&all, Placement::SameCpu), Some([0, 0]));
        // No two allowed CPUs share a core.
        assert_eq!(t.pair(&[0, 1, 2], Placement::SmtSiblings), None);
        // One core's threads only: no two cores.
        assert_eq!(t.pair(&[1, 5], Placement::SeparateCores), None);
        assert_eq!(t.pair(&[], Placement::SameCpu), None);
    }

    #[test]
    fn kernel_lists_read_as_the_kernel_writes_them() {
        assert_eq!(cpu_list("0-3,8,10-11\n"), Some(vec![0, 1, 2, 3, 8, 10, 11]));
        assert_eq!(cpu_list("5"), Some(vec![5]));
        assert_eq!(cpu_list(""), None);
        assert_eq!(cpu_list("1-x"), None);
    }
}
