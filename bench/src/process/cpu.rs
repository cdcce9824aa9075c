//! CPU sets: which CPUs this process may use, and pinning to one of them.

use rustix::thread::{sched_getaffinity, sched_setaffinity, CpuSet};

/// The CPUs this process may run on, in increasing order.
pub fn allowed_cpus() -> Vec<usize> {
    match sched_getaffinity(None) {
        Ok(set) => (0..CpuSet::MAX_CPU)
            .filter(|&cpu| set.is_set(cpu))
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// The two CPUs a run's two ends are pinned to unless told otherwise: the
/// first two this process may use, as they are numbered, whatever the cores
/// and SMT threads under them. Pipe steps and latency runs both take their
/// default from here, so their figures come from the same two CPUs. `None`
/// with fewer than two.
pub(crate) fn default_pair(allowed: &[usize]) -> Option<[usize; 2]> {
    match allowed {
        [first, second, ..] => Some([*first, *second]),
        _ => None,
    }
}

/// A CPU that does not exist or that this process may not use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot pin to CPU {cpu}: this process may use CPUs {allowed}")]
pub(crate) struct CpuError {
    /// The CPU asked for.
    pub cpu: usize,
    /// The CPUs that are allowed, e.g. `0,1`.
    pub allowed: String,
}

/// Pins the calling thread (a whole process, when it has one thread) to `cpu`.
pub(crate) fn pin_to(cpu: usize) -> Result<(), CpuError> {
    let allowed = allowed_cpus();
    let refuse = || CpuError {
        cpu,
        allowed: allowed
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(","),
    };
    if cpu >= CpuSet::MAX_CPU || !allowed.contains(&cpu) {
        return Err(refuse());
    }
    let mut set = CpuSet::new();
    set.set(cpu);
    sched_setaffinity(None, &set).map_err(|_| refuse())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_pair_is_the_first_two_allowed() {
        assert_eq!(default_pair(&[0, 1, 2, 3]), Some([0, 1]));
        // Confined (taskset -c 3,5,7): the first two of those.
        assert_eq!(default_pair(&[3, 5, 7]), Some([3, 5]));
        assert_eq!(default_pair(&[2]), None);
        assert_eq!(default_pair(&[]), None);
    }
}
