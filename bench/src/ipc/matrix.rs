//! `pipebench ipc`: the matrix of mechanisms, repeated in shuffled order. What
//! people read of it (the table, CSV, the SVG bars) is drawn by the output
//! layer above, from the results this returns.

use rand::seq::SliceRandom;
use rand::SeedableRng;

use super::{harness, IpcError, IpcParams, IpcResult, Mechanism};

/// The mechanisms (all when none are given) repeated `repeats` times in an
/// order shuffled by `seed` (random if None).
pub fn plan(
    mechanisms: &[Mechanism],
    repeats: usize,
    seed: Option<u64>,
) -> Result<Vec<Mechanism>, IpcError> {
    if repeats == 0 {
        return Err(IpcError::Invalid("repeats must be at least 1".into()));
    }
    let chosen: &[Mechanism] = if mechanisms.is_empty() {
        &Mechanism::ALL
    } else {
        mechanisms
    };
    let mut order: Vec<Mechanism> = chosen
        .iter()
        .flat_map(|m| std::iter::repeat_n(*m, repeats))
        .collect();
    // Shuffled, so drift (other work on the machine, page cache growth) spreads
    // over all mechanisms instead of biasing the last ones.
    let mut rng = match seed {
        Some(seed) => rand::rngs::StdRng::seed_from_u64(seed),
        None => rand::rngs::StdRng::from_os_rng(),
    };
    order.shuffle(&mut rng);
    Ok(order)
}

/// Runs `order` one after the other, calling `after_each` with each result. A
/// mechanism this machine cannot run ([`IpcError::Unsupported`]) is passed to
/// `skipped` once, with its reason, and not run again; any other failure stops
/// the matrix.
pub fn run_all(
    order: &[Mechanism],
    params: &IpcParams,
    mut after_each: impl FnMut(&IpcResult),
    mut skipped: impl FnMut(Mechanism, &IpcError),
) -> Result<Vec<IpcResult>, IpcError> {
    let mut results = Vec::with_capacity(order.len());
    let mut unsupported = Vec::new();
    for &mechanism in order {
        if unsupported.contains(&mechanism) {
            continue;
        }
        match harness::run(mechanism, params) {
            Ok(result) => {
                after_each(&result);
                results.push(result);
            }
            Err(err @ IpcError::Unsupported(_)) => {
                skipped(mechanism, &err);
                unsupported.push(mechanism);
            }
            Err(err) => return Err(err),
        }
    }
    Ok(results)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_repeat_shuffle_and_ids_parse_once() {
        let chosen = [Mechanism::FifoRw, Mechanism::PosixShm];
        let order = plan(&chosen, 3, Some(7)).unwrap();
        assert_eq!(order.len(), 6);
        assert_eq!(order.iter().filter(|m| **m == Mechanism::FifoRw).count(), 3);
        assert_eq!(order, plan(&chosen, 3, Some(7)).unwrap());
        assert_eq!(
            plan(&[], 1, Some(1)).unwrap().len(),
            super::super::ids().len()
        );
        assert!(matches!(
            Mechanism::parse("nope"),
            Err(IpcError::UnknownMechanism { .. })
        ));
        for m in Mechanism::ALL {
            assert_eq!(Mechanism::parse(m.id()).unwrap(), m);
            assert_eq!(
                serde_json::to_string(&m).unwrap(),
                format!("\"{}\"", m.id())
            );
            assert_eq!(
                <Mechanism as clap::ValueEnum>::from_str(m.id(), false).unwrap(),
                m
            );
        }
        assert!(plan(&[], 0, None).is_err());
    }
}
