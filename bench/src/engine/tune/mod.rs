//! Tuning (`pipebench tune STEP --budget SECONDS`): the knobs that matter
//! searched together, bytes per call × pipe capacity, and huge pages on and off
//! where the step allows (its writer vmsplices its own pages:
//! [`crate::steps::catalog::allows_huge_pages`]), for one step, as a job of
//! ordinary pipe jobs (like [`crate::engine::sweep`]).
//!
//! The step's own configuration runs in the same session as every candidate, in
//! the same interleaved rounds (each round visits every cell and the step's own
//! configuration once, in a shuffled order), so the gain is a ratio of medians
//! measured side by side, with its spread (the worst and best pairing of the
//! runs). Capacities stay within `/proc/sys/fs/pipe-max-size`; a step whose
//! writer copies keeps its pages as they are (the search changes sizes, not the
//! step's kind). The best configuration is a variant with its own id,
//! `tuned-STEP`, never the step's own name, and the argv that repeats it.

pub mod report;

pub use report::{Best, BestSoFar, Cell, Gain, Trial, TuneConfig, TuneResult, TuneStarted};

use rand::seq::SliceRandom;
use rand::SeedableRng;

use crate::engine::event::{Event, Finished, Started};
use crate::engine::observer::{JobContext, Observer, Stop};
use crate::engine::pipe_job::PipeJob;
use crate::engine::result::RunResult;
use crate::size::ByteSize;
use crate::stats::{summarize, Summary};
use crate::steps::catalog::{self, TUNED_PREFIX};
use crate::steps::plan::{Limits, RunParams, RunPlan};

/// Bytes per call tried.
pub const BUF_SIZES: [u64; 4] = [64 << 10, 256 << 10, 1 << 20, 2 << 20];
/// Pipe capacities tried (those over pipe-max-size are left out).
pub const PIPE_SIZES: [u64; 3] = [64 << 10, 256 << 10, 1 << 20];
/// The writer's pages tried where the step allows: huge, then small.
pub(crate) const HUGE_PAGES: [bool; 2] = [true, false];
/// Interleaved rounds.
pub(crate) const ROUNDS: usize = 3;
/// The least and most budget, seconds. The least affords the step's own
/// configuration and one cell, every round, at [`MIN_RUN_SECONDS`].
pub const BUDGET_BOUNDS: (f64, f64) = (2.0, 600.0);
/// The shortest run a search gives a configuration, seconds. A run's clock
/// starts with its ends' start (exec, buffers, the pipe's set-up), so on a
/// loaded machine a tenth of a second could pass before the first byte and
/// leave the figure at nothing; from 0.3 s the set-up is a small part of it.
/// A bigger budget buys longer runs, up to every cell of the grid first, so
/// a search affords only the cells whose runs can be this long.
pub(crate) const MIN_RUN_SECONDS: f64 = 0.3;

/// A tuning request.
#[derive(Debug, Clone, PartialEq)]
pub struct TuneJob {
    /// The step tuned.
    pub step: String,
    /// The whole search's time, seconds (runs' own time; set-up comes on top).
    pub budget: f64,
    /// Seed of the rounds' order (`None`: from the OS).
    pub seed: Option<u64>,
}

/// Why a search cannot be run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TuneError {
    /// The budget is out of bounds.
    #[error("--budget {0} is out of range: {min} to {max} seconds", min = BUDGET_BOUNDS.0, max = BUDGET_BOUNDS.1)]
    Budget(f64),
    /// The planner refuses the step itself.
    #[error(transparent)]
    Plan(#[from] crate::steps::plan::PlanError),
}

/// Whether the step's own configuration beat the best searched, by median:
/// the one definition the CLI's and the page's words follow.
pub(crate) fn own_was_fastest(own: &Summary, best: &Summary) -> bool {
    own.median > best.median
}

/// The planned search: every cell's plan and the step's own, and the order.
struct Search {
    seconds: f64,
    /// (buf_size, pipe_size, huge pages where searched) of each cell; the
    /// baseline is index `cells.len()`.
    cells: Vec<(u64, u64, Option<bool>)>,
    plans: Vec<RunPlan>,
    order: Vec<usize>,
    skipped: usize,
}

fn plan(job: &TuneJob, limits: &Limits) -> Result<Search, TuneError> {
    if !(BUDGET_BOUNDS.0..=BUDGET_BOUNDS.1).contains(&job.budget) {
        return Err(TuneError::Budget(job.budget));
    }
    // Huge pages innermost, so a budget that affords only the first cells
    // still sees both settings.
    let huge: Vec<Option<bool>> = match catalog::tuned_base(&job.step)
        .or_else(|| catalog::find(&job.step))
        .filter(catalog::allows_huge_pages)
    {
        Some(_) => HUGE_PAGES.iter().copied().map(Some).collect(),
        None => vec![None],
    };
    let candidates: Vec<(u64, u64, Option<bool>)> = BUF_SIZES
        .iter()
        .flat_map(|&b| PIPE_SIZES.iter().map(move |&p| (b, p)))
        .filter(|&(_, p)| p <= limits.max_pipe_size)
        .flat_map(|(b, p)| huge.iter().map(move |&h| (b, p, h)))
        .collect();
    // Cells the budget can afford at the shortest run the planner allows.
    let affordable = ((job.budget / MIN_RUN_SECONDS / ROUNDS as f64) as usize).saturating_sub(1);
    let seconds_for = |n: usize| job.budget / (ROUNDS * (n + 1)) as f64;
    let mut cells = Vec::new();
    let mut plans = Vec::new();
    let mut skipped = 0;
    for (buf, pipe, huge_pages) in candidates {
        if cells.len() >= affordable.max(1) {
            skipped += 1;
            continue;
        }
        let params = RunParams {
            buf_size: Some(ByteSize(buf)),
            pipe_size: Some(ByteSize(pipe)),
            seconds: Some(MIN_RUN_SECONDS),
            quiet: Some(true),
            huge_pages,
            ..RunParams::default()
        };
        // A configuration this step or machine refuses is left out.
        if RunPlan::for_step_id(&job.step, &params, limits).is_ok() {
            cells.push((buf, pipe, huge_pages));
        } else {
            skipped += 1;
        }
    }
    let seconds = seconds_for(cells.len()).max(MIN_RUN_SECONDS);
    for &(buf, pipe, huge_pages) in &cells {
        let params = RunParams {
            buf_size: Some(ByteSize(buf)),
            pipe_size: Some(ByteSize(pipe)),
            seconds: Some(seconds),
            quiet: Some(true),
            huge_pages,
            ..RunParams::default()
        };
        plans.push(RunPlan::for_step_id(&job.step, &params, limits)?);
    }
    let own = RunParams {
        seconds: Some(seconds),
        quiet: Some(true),
        ..RunParams::default()
    };
    plans.push(RunPlan::for_step_id(&job.step, &own, limits)?);
    let mut rng = match job.seed {
        Some(seed) => rand::rngs::StdRng::seed_from_u64(seed),
        None => rand::rngs::StdRng::from_os_rng(),
    };
    let mut order = Vec::new();
    for _ in 0..ROUNDS {
        let mut round: Vec<usize> = (0..plans.len()).collect();
        round.shuffle(&mut rng);
        order.extend(round);
    }
    Ok(Search {
        seconds,
        cells,
        plans,
        order,
        skipped,
    })
}

/// Passes a search's inner runs' events on, but not their `started`: the page
/// hears the search's own `started` and a `trial` per run instead.
struct Inner<'a>(&'a mut dyn Observer);

impl Observer for Inner<'_> {
    fn event(&mut self, event: Event) {
        if !matches!(event, Event::Started(_)) {
            self.0.event(event);
        }
    }

    fn wait(&mut self, timeout: std::time::Duration) -> Option<Stop> {
        self.0.wait(timeout)
    }
}

fn median(runs: &[RunResult]) -> Option<f64> {
    let rates: Vec<f64> = runs.iter().map(|r| r.gib_per_s).collect();
    summarize(&rates).map(|s| s.median)
}

/// Runs the search; the final event (`result` with a [`TuneResult`], or the
/// event that ended it early), or none when the observer went away. It says
/// `started` with the grid first, then a `trial` after every run.
pub fn run(job: &TuneJob, context: &JobContext, observer: &mut dyn Observer) -> Option<Event> {
    let search = match plan(job, &Limits::default()) {
        Ok(search) => search,
        Err(err) => return Some(Event::error(err.to_string())),
    };
    // The step's own pages are said where the search tries both.
    let searched_huge = search.cells.iter().any(|c| c.2.is_some());
    let config_of = |index: usize| match search.cells.get(index) {
        Some(&(buf_size, pipe, huge_pages)) => TuneConfig {
            buf_size,
            pipe_size: Some(pipe),
            huge_pages,
        },
        None => {
            let own = &search.plans[index];
            TuneConfig {
                buf_size: own.writer.common.buf_size.bytes(),
                pipe_size: own.writer.pipe_size.map(|p| p.bytes()),
                huge_pages: searched_huge.then_some(own.writer.common.huge_pages),
            }
        }
    };
    let own_index = search.cells.len();
    observer.event(Event::Started(Started::Tune(Box::new(TuneStarted {
        kind: "tune",
        step: job.step.clone(),
        cells: (0..own_index).map(config_of).collect(),
        own: config_of(own_index),
        rounds: ROUNDS,
        runs: search.order.len(),
        seconds_per_run: search.seconds,
    }))));
    let mut results: Vec<Vec<RunResult>> = vec![Vec::new(); search.plans.len()];
    for (done, &index) in search.order.iter().enumerate() {
        let pipe = PipeJob {
            plan: search.plans[index].clone(),
            occupancy: false,
            progress: false,
        };
        let result = match pipe.run(context, &mut Inner(observer))? {
            Event::Result(Finished::Pipe(result)) => *result,
            other => return Some(other),
        };
        let (gib_per_s, pipe_capacity) = (result.gib_per_s, result.pipe_capacity);
        results[index].push(result);
        let best = (0..own_index)
            .filter_map(|i| median(&results[i]).map(|m| (i, m)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(i, median)| BestSoFar {
                config: config_of(i),
                median,
            });
        observer.event(Event::Trial(Box::new(Trial {
            index: done + 1,
            of: search.order.len(),
            config: config_of(index),
            own: index == own_index,
            pipe_capacity,
            gib_per_s,
            median: median(&results[index]).unwrap_or(gib_per_s),
            own_median: median(&results[own_index]),
            best,
        })));
    }
    Some(finish(job, &search, &results))
}

fn cell(buf_size: u64, huge_pages: Option<bool>, runs: &[RunResult]) -> Option<Cell> {
    let rates: Vec<f64> = runs.iter().map(|r| r.gib_per_s).collect();
    Some(Cell {
        buf_size,
        huge_pages,
        pipe_capacity: runs.first().and_then(|r| r.pipe_capacity),
        summary: summarize(&rates)?,
    })
}

fn finish(job: &TuneJob, search: &Search, results: &[Vec<RunResult>]) -> Event {
    let own = results.last().expect("the step's own configuration runs");
    let searched_huge = search.cells.iter().any(|c| c.2.is_some());
    let own_huge = search.plans.last().map(|p| p.writer.common.huge_pages);
    let own_huge = own_huge.filter(|_| searched_huge);
    let Some(baseline) = cell(own.first().map_or(0, |r| r.bytes_per_call), own_huge, own) else {
        return Event::error("the step's own configuration produced no run");
    };
    let cells: Vec<Cell> = search
        .cells
        .iter()
        .zip(results)
        .filter_map(|(&(buf, _, huge), runs)| cell(buf, huge, runs))
        .collect();
    let best_index = search
        .cells
        .iter()
        .enumerate()
        .filter_map(|(i, &(buf, _, huge))| cell(buf, huge, &results[i]).map(|c| (i, c)))
        .max_by(|a, b| a.1.summary.median.total_cmp(&b.1.summary.median));
    let Some((index, best_cell)) = best_index else {
        return Event::error("no configuration produced a run");
    };
    let (buf_size, pipe_size, huge_pages) = search.cells[index];
    let id = format!("{TUNED_PREFIX}{}", job.step);
    let argv = variant_argv(results[index].first(), &id, huge_pages);
    let own_fastest = own_was_fastest(&baseline.summary, &best_cell.summary);
    let gain = gain(&results[index], own, &best_cell.summary, &baseline.summary);
    let warnings = warnings(search, results, &gain);
    Event::Result(Finished::Tune(Box::new(TuneResult {
        kind: "tune",
        step: job.step.clone(),
        seconds_per_run: search.seconds,
        rounds: ROUNDS,
        baseline,
        cells,
        best: Best {
            id,
            base: job.step.clone(),
            buf_size,
            pipe_size,
            huge_pages,
            summary: best_cell.summary,
            argv,
        },
        gain,
        warnings,
        page_size: crate::ends::buffer::page_size() as u64,
        own_fastest,
    })))
}

/// The best run's own command line under the variant's id: `pipebench run
/// tuned-STEP` with its bytes per call and pipe capacity is that variant.
fn variant_argv(best_run: Option<&RunResult>, id: &str, huge_pages: Option<bool>) -> Vec<String> {
    best_run
        .map(|r| {
            let mut argv = r.argv.clone();
            if let Some(step) = argv.get_mut(2) {
                id.clone_into(step);
            }
            // The run was the step's own id, which says its pages only where they
            // differ from the step's; the variant always says them.
            if let Some(huge) = huge_pages.filter(|_| !argv.iter().any(|a| a == "--huge-pages")) {
                argv.push("--huge-pages".into());
                argv.push(if huge { "on" } else { "off" }.into());
            }
            argv
        })
        .unwrap_or_default()
}

/// The best configuration's gain over the step's own: `b` and `o` summarise
/// the runs `best` and `own`.
fn gain(best: &[RunResult], own: &[RunResult], b: &Summary, o: &Summary) -> Gain {
    let rates = |runs: &[RunResult]| runs.iter().map(|r| r.gib_per_s).collect::<Vec<f64>>();
    // Each round ran the best and the step's own configuration side by side:
    // the rounds are pairs, judged by the signed-rank interval (none below
    // the 6 pairs that can reach 95%).
    let judged = crate::stats::verdict::judge_paired(
        &rates(best),
        &rates(own),
        crate::stats::verdict::Design::Fixed,
    )
    .ok();
    let interval = judged.as_ref().and_then(|j| Some((j.ci_low?, j.ci_high?)));
    Gain {
        ratio: b.median / o.median,
        low: b.min / o.max,
        high: b.max / o.min,
        ci_low: interval.map(|i| i.0),
        ci_high: interval.map(|i| i.1),
    }
}

/// What a reader should know before trusting the search's answer.
fn warnings(search: &Search, results: &[Vec<RunResult>], gain: &Gain) -> Vec<String> {
    let mut warnings = Vec::new();
    if search.skipped > 0 {
        warnings.push(format!(
            "{} configurations were left out: refused by this step or machine, or more \
             than the budget affords",
            search.skipped
        ));
    }
    let empty = results.iter().flatten().filter(|r| r.bytes == 0).count();
    if empty > 0 {
        warnings.push(format!(
            "{empty} run(s) moved nothing in their {:.2} s: the machine was busy; a larger \
             budget gives every run longer",
            search.seconds
        ));
    }
    if gain.low < 1.0 {
        warnings.push(
            "the runs of the best and of the step's own configuration overlap: the gain is \
             within this session's spread"
                .into(),
        );
    }
    warnings
}

/// The CLI's check of a request before anything runs.
pub fn check(job: &TuneJob) -> Result<(), TuneError> {
    plan(job, &Limits::default()).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::steps::catalog::MALLOC_OFFSET;

    fn summary(median: f64) -> Summary {
        Summary {
            median,
            min: median,
            max: median,
            runs: 1,
        }
    }

    #[test]
    fn the_own_configuration_is_fastest_only_when_its_median_beats_the_best() {
        assert!(own_was_fastest(&summary(2.0), &summary(1.0)));
        assert!(!own_was_fastest(&summary(1.0), &summary(2.0)));
        // A tie is no win for the step's own: the best is as fast.
        assert!(!own_was_fastest(&summary(1.0), &summary(1.0)));
        // The step's own moved nothing: anything that ran beats it.
        assert!(!own_was_fastest(&summary(0.0), &summary(0.5)));
    }

    #[test]
    fn the_plan_interleaves_rounds_and_stays_within_the_budget() {
        let job = TuneJob {
            step: "write-read".into(),
            budget: 4.0,
            seed: Some(1),
        };
        let search = plan(&job, &Limits::default()).unwrap();
        let n = search.plans.len();
        assert_eq!(search.order.len(), n * ROUNDS);
        // Every round visits every configuration once.
        for round in search.order.chunks(n) {
            let mut seen = round.to_vec();
            seen.sort();
            assert_eq!(seen, (0..n).collect::<Vec<_>>());
        }
        assert!(search.seconds * (n * ROUNDS) as f64 <= job.budget + 1e-9);
        // At every budget, from the least to past the whole grid: runs at least
        // MIN_RUN_SECONDS long, all of them within the budget, and more cells
        // (never fewer) as the budget grows.
        let mut cells = 0;
        for budget in [BUDGET_BOUNDS.0, 2.5, 3.0, 5.0, 10.0, 20.0, 30.0, 120.0] {
            let search = plan(
                &TuneJob {
                    budget,
                    ..job.clone()
                },
                &Limits::default(),
            )
            .unwrap();
            let runs = search.order.len();
            assert_eq!(runs, (search.cells.len() + 1) * ROUNDS);
            assert!(
                search.seconds >= MIN_RUN_SECONDS,
                "{budget}: {}",
                search.seconds
            );
            assert!(
                search.seconds * runs as f64 <= budget + 1e-9,
                "{budget} s: {runs} runs of {} s",
                search.seconds
            );
            assert!(search.cells.len() >= cells.max(1), "{budget}");
            cells = search.cells.len();
        }
        assert!(matches!(
            plan(
                &TuneJob {
                    budget: BUDGET_BOUNDS.0 - 0.5,
                    ..job.clone()
                },
                &Limits::default()
            ),
            Err(TuneError::Budget(_))
        ));
    }

    #[test]
    fn the_grid_stays_within_pipe_max_size_and_keeps_the_steps_huge_pages() {
        // A machine whose pipe-max-size is 256 KiB: no 1 MiB pipe is tried.
        let limits = Limits {
            max_pipe_size: 256 << 10,
            ..Limits::default()
        };
        for (step, huge) in [
            ("huge-pages", true),
            ("busy-loop", true),
            ("vmsplice-splice", false),
        ] {
            let job = TuneJob {
                step: step.into(),
                budget: 120.0,
                seed: Some(2),
            };
            let search = plan(&job, &limits).unwrap();
            assert!(!search.cells.is_empty(), "{step}");
            assert!(
                search.cells.iter().all(|&(_, pipe, _)| pipe <= 256 << 10),
                "{step}"
            );
            assert!(
                search.cells.iter().any(|&(_, pipe, _)| pipe == 256 << 10),
                "{step}: the largest pipe allowed is tried"
            );
            // Every one of these steps' writers vmsplices its own pages: both
            // settings are searched, each cell's plan as the cell says, and the
            // step's own configuration keeps the step's pages.
            for setting in [true, false] {
                assert!(
                    search.cells.iter().any(|c| c.2 == Some(setting)),
                    "{step}: huge pages {setting} searched"
                );
            }
            for (plan, cell) in search.plans.iter().zip(&search.cells) {
                assert_eq!(Some(plan.writer.common.huge_pages), cell.2, "{step}");
                assert_eq!(
                    plan.writer.common.buffer_offset,
                    Some(if cell.2 == Some(true) {
                        0
                    } else {
                        MALLOC_OFFSET
                    }),
                    "{step}: buffers placed as the reference's allocators place them"
                );
            }
            let own = search.plans.last().unwrap();
            assert_eq!(own.writer.common.huge_pages, huge, "{step}");
        }
    }
}
