//! Replays of made-up runs through the real judging code: with A and B drawn
//! from one distribution (the null), how often does a verdict claim a
//! difference? With B 1.25x slower, how often is it found?
//!
//! Each case runs [`TRIES`] tries from a fixed seed, so the counts are the same
//! on every run. The share of claims may exceed 5% only by the binomial margin
//! of the tries: with 2,000 tries the standard error of a 5% share is 0.49
//! points, and the bound is 5% + 2.33 of them (6.13%), which a judgement that
//! truly keeps 5% passes 99 times in 100.
//!
//! The noise: each run's rate is exp(0.1 * e) for a standard normal e
//! (log-normal, a run-to-run spread of about 10%, as the runs of this VM show),
//! or e drawn from Student's t with 2 degrees of freedom (heavy tails: a few
//! runs far off), or log-normal plus a slow drift across the run order (the
//! machine speeding up by 20% from first run to last) with runs in the order
//! the runner takes them: A B B A ... for pairs, A B A B ... for separate sets.

use super::rng::SplitMix64;
use super::verdict::{judge_paired, judge_unpaired, Design, Judgement, Schedule, Verdict};

/// Tries per case.
const TRIES: usize = 2000;

/// The largest share of claims a 5% judgement may show over [`TRIES`] tries:
/// 5% plus 2.33 binomial standard errors.
fn claim_bound() -> f64 {
    0.05 + 2.33 * (0.05 * 0.95 / TRIES as f64).sqrt()
}

/// The noise of a run, on the log scale.
#[derive(Debug, Clone, Copy)]
enum Noise {
    LogNormal,
    HeavyTailed,
    Drift,
}

const NOISES: [Noise; 3] = [Noise::LogNormal, Noise::HeavyTailed, Noise::Drift];

/// The log-scale spread of a run (about 10%).
const LOG_SD: f64 = 0.1;

/// How runs are ordered.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Order {
    /// A B B A A B B A ... (a comparison's pairs).
    Pairs,
    /// A B A B ... (separate sets of runs, taken in turn).
    Alternate,
}

/// `n` runs of each side, A's rate `shift` times B's, in `order`; drift grows
/// across the `total` runs the largest design could take.
fn draw(
    rng: &mut SplitMix64,
    noise: Noise,
    order: Order,
    n: usize,
    total: usize,
    shift: f64,
) -> (Vec<f64>, Vec<f64>) {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for position in 0..2 * n {
        let is_a = match order {
            Order::Pairs => matches!(position % 4, 0 | 3),
            Order::Alternate => position % 2 == 0,
        };
        let e = match noise {
            Noise::HeavyTailed => 0.5 * LOG_SD * rng.student_t2(),
            _ => LOG_SD * rng.normal(),
        };
        let drift = match noise {
            Noise::Drift => 1.2f64.ln() * position as f64 / (2 * total) as f64,
            _ => 0.0,
        };
        let rate = (e + drift).exp();
        match is_a {
            true => a.push(rate * shift),
            false => b.push(rate),
        }
    }
    (a, b)
}

fn claims(j: &Judgement) -> bool {
    matches!(j.verdict, Verdict::Faster | Verdict::Slower)
}

/// The share of tries that claim a difference (and the share that say A is
/// faster) when judged at a fixed size.
fn fixed_share(paired: bool, n: usize, noise: Noise, shift: f64, seed: u64) -> (f64, f64) {
    let mut rng = SplitMix64::new(seed);
    let (mut claimed, mut faster) = (0, 0);
    for _ in 0..TRIES {
        let order = if paired {
            Order::Pairs
        } else {
            Order::Alternate
        };
        let (a, b) = draw(&mut rng, noise, order, n, n, shift);
        let j = match paired {
            true => judge_paired(&a, &b, Design::Fixed),
            false => judge_unpaired(&a, &b, Design::Fixed),
        }
        .unwrap();
        claimed += usize::from(claims(&j));
        faster += usize::from(j.verdict == Verdict::Faster);
    }
    (claimed as f64 / TRIES as f64, faster as f64 / TRIES as f64)
}

/// The share of tries that claim a difference when run until resolved by
/// `schedule` (judged at each look, stopped at the first claim).
fn sequential_share(paired: bool, schedule: &Schedule, noise: Noise, seed: u64) -> f64 {
    let mut rng = SplitMix64::new(seed);
    let last = *schedule.sizes().last().unwrap();
    let mut claimed = 0;
    for _ in 0..TRIES {
        let order = if paired {
            Order::Pairs
        } else {
            Order::Alternate
        };
        let (a, b) = draw(&mut rng, noise, order, last, last, 1.0);
        let mut n = schedule.sizes()[0];
        loop {
            let design = schedule.design_at(n);
            let j = match paired {
                true => judge_paired(&a[..n], &b[..n], design),
                false => judge_unpaired(&a[..n], &b[..n], design),
            }
            .unwrap();
            match schedule.go_on(n, &j) {
                Some(next) => n = next,
                None => {
                    claimed += usize::from(claims(&j));
                    break;
                }
            }
        }
    }
    claimed as f64 / TRIES as f64
}

#[test]
fn pairs_at_the_default_size_claim_a_difference_at_most_one_time_in_twenty() {
    for pairs in [crate::stats::DEFAULT_PAIRS, crate::stats::DEFAULT_PAIRS + 2] {
        for (i, noise) in NOISES.iter().enumerate() {
            let (share, _) = fixed_share(true, pairs, *noise, 1.0, 11 + i as u64);
            eprintln!("null, {noise:?}, {pairs} pairs: {share}");
            assert!(
                share <= claim_bound(),
                "{noise:?} at {pairs} pairs: {share}"
            );
        }
    }
}

#[test]
fn separate_runs_at_the_default_size_claim_a_difference_at_most_one_time_in_twenty() {
    // The labs' runs (5 for a sweep's points), and the fewest that can
    // reach 95% (older lab records).
    for runs in [crate::stats::DEFAULT_RUNS_A_SIDE, 5, 4] {
        for (i, noise) in NOISES.iter().enumerate() {
            let (share, _) = fixed_share(false, runs, *noise, 1.0, 21 + i as u64);
            eprintln!("null, {noise:?}, {runs} runs a side: {share}");
            assert!(
                share <= claim_bound(),
                "{noise:?} at {runs} a side: {share}"
            );
        }
    }
}

#[test]
fn running_until_resolved_keeps_five_percent_over_all_its_looks() {
    let pairs = crate::stats::DEFAULT_PAIRS;
    // The compare card's first budget, and the page's longest.
    for last in [12, 40] {
        let schedule = Schedule::new(pairs, last, Schedule::DEFAULT_LOOKS);
        for (i, noise) in NOISES.iter().enumerate() {
            let share = sequential_share(true, &schedule, *noise, 31 + i as u64);
            eprintln!("null until resolved, {noise:?}, to {last} pairs: {share}");
            assert!(share <= claim_bound(), "{noise:?} to {last} pairs: {share}");
        }
    }
    // Separate sets of runs (a table's rows, a lab's "more runs"), up to 20 a side.
    let schedule = Schedule::new(
        crate::stats::DEFAULT_RUNS_A_SIDE,
        20,
        Schedule::DEFAULT_LOOKS,
    );
    for (i, noise) in NOISES.iter().enumerate() {
        let share = sequential_share(false, &schedule, *noise, 41 + i as u64);
        eprintln!("null until resolved, {noise:?}, separate runs: {share}");
        assert!(share <= claim_bound(), "{noise:?} unpaired: {share}");
    }
}

#[test]
fn peeking_at_a_fixed_95_percent_after_every_pair_claims_far_more_often() {
    // The design this replaces: judge at 95% after every two pairs, stop at
    // the first claim. The replay must show what it costs, or it could not
    // tell a valid design from this one.
    let mut rng = SplitMix64::new(51);
    let mut claimed = 0;
    for _ in 0..TRIES {
        let (a, b) = draw(&mut rng, Noise::LogNormal, Order::Pairs, 40, 40, 1.0);
        claimed += usize::from(
            (6..=40)
                .step_by(2)
                .any(|n| claims(&judge_paired(&a[..n], &b[..n], Design::Fixed).unwrap())),
        );
    }
    let share = claimed as f64 / TRIES as f64;
    eprintln!("peeking at 95% every two pairs: {share}");
    assert!(share > 0.08, "{share}");
}

#[test]
fn a_true_quarter_faster_is_found_at_the_default_sizes_in_four_tries_of_five() {
    // Log-normal noise of sd 0.1 a run; A 1.25x B.
    let (share, faster) = fixed_share(
        true,
        crate::stats::DEFAULT_PAIRS,
        Noise::LogNormal,
        1.25,
        61,
    );
    eprintln!("power, pairs: {faster}");
    assert!(faster >= 0.8 && share == faster, "pairs: {faster}");
    let (share, faster) = fixed_share(
        false,
        crate::stats::DEFAULT_RUNS_A_SIDE,
        Noise::LogNormal,
        1.25,
        62,
    );
    eprintln!("power, separate runs: {faster}");
    assert!(faster >= 0.8 && share == faster, "separate runs: {faster}");
}
