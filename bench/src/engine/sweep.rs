//! Sweeps: one step run over several values of one parameter, to show what a knob
//! does (`pipebench sweep`, and the `{{#sweep}}` widget through the server).
//!
//! A sweep is planned whole before anything runs, so a bad value is refused up
//! front with the same exact message a single run would get. The runs of all
//! values are interleaved (every value once per repeat, in shuffled order) so
//! drift over the session spreads over the whole curve instead of bending it.

use std::str::FromStr;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use rand::seq::SliceRandom;
use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::engine::event::{Event, Finished};
use crate::engine::observer::{JobContext, Observer};
use crate::engine::pipe_job::PipeJob;
use crate::engine::result::RunResult;
use crate::size::ByteSize;
use crate::stats::{summarize, Summary};
use crate::steps::plan::{Limits, PlanError, RunParams, RunPlan};

/// Most values one sweep may have: a doubling range from 4 KiB to 64 MiB is 15.
pub const MAX_POINTS: usize = 24;

/// The parameters a sweep can vary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SweepParam {
    /// The pipe's capacity (F_SETPIPE_SZ).
    PipeSize,
    /// Bytes per call at both ends.
    BufSize,
}

impl SweepParam {
    /// The JSON name, as in run params.
    pub fn name(self) -> &'static str {
        match self {
            SweepParam::PipeSize => "pipe_size",
            SweepParam::BufSize => "buf_size",
        }
    }

    /// The axis label.
    pub fn label(self) -> &'static str {
        match self {
            SweepParam::PipeSize => "pipe capacity",
            SweepParam::BufSize => "bytes per call",
        }
    }

    /// `params` with this parameter set to `value`.
    pub fn apply(self, params: &RunParams, value: ByteSize) -> RunParams {
        let mut params = params.clone();
        match self {
            SweepParam::PipeSize => params.pipe_size = Some(value),
            SweepParam::BufSize => params.buf_size = Some(value),
        }
        params
    }
}

impl FromStr for SweepParam {
    type Err = SweepError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "pipe_size" | "pipe-size" => Ok(SweepParam::PipeSize),
            "buf_size" | "buf-size" => Ok(SweepParam::BufSize),
            other => Err(SweepError::UnknownParam(other.to_string())),
        }
    }
}

/// Why a sweep was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SweepError {
    /// Not a parameter a sweep can vary.
    #[error("cannot sweep `{0}`: sweep pipe_size or buf_size")]
    UnknownParam(String),
    /// A value that is not a size.
    #[error("`{text}` is not a size: {reason}")]
    BadValue {
        /// What was given.
        text: String,
        /// Why it is not a size.
        reason: String,
    },
    /// Nothing to run.
    #[error("a sweep needs at least one value")]
    Empty,
    /// Zero bytes.
    #[error("{param} = 0 bytes: a sweep value must be at least one page (4096 bytes)")]
    Zero {
        /// The parameter.
        param: &'static str,
    },
    /// A range or list that does not go up.
    #[error(
        "the values must go up: {later} comes after {earlier}; write a range low..high \
         (it doubles from low to high) or a list in increasing order"
    )]
    NotIncreasing {
        /// The earlier value.
        earlier: String,
        /// The value after it.
        later: String,
    },
    /// Too many points.
    #[error("{count} values is more than a sweep may have ({MAX_POINTS})")]
    TooMany {
        /// How many were asked for.
        count: usize,
    },
    /// A value (or the step) the planner refuses: over pipe-max-size, not whole
    /// pages, an unknown step. The planner's message names the value exactly.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// Zero repeats.
    #[error("repeats must be at least 1")]
    NoRepeats,
}

/// Parses `A,B,C` (a list) or `A..B` (doubling from A up to B) into sizes.
pub fn parse_values(text: &str) -> Result<Vec<ByteSize>, SweepError> {
    let size = |t: &str| {
        t.trim()
            .parse::<ByteSize>()
            .map_err(|e| SweepError::BadValue {
                text: t.trim().to_string(),
                reason: e.to_string(),
            })
    };
    let values = if let Some((low, high)) = text.split_once("..") {
        let (low, high) = (size(low)?, size(high)?);
        if low.bytes() == 0 {
            return Err(SweepError::Zero { param: "value" });
        }
        if high < low {
            return Err(SweepError::NotIncreasing {
                earlier: low.exact(),
                later: high.exact(),
            });
        }
        let mut values = Vec::new();
        let mut value = low.bytes();
        while value <= high.bytes() {
            values.push(ByteSize(value));
            if values.len() > MAX_POINTS {
                break;
            }
            value = value.saturating_mul(2);
        }
        values
    } else {
        text.split(',')
            .filter(|t| !t.trim().is_empty())
            .map(size)
            .collect::<Result<Vec<_>, _>>()?
    };
    Ok(values)
}

/// One value of a sweep and its runs.
#[derive(Debug, Clone, Serialize)]
pub struct SweepPoint {
    /// The parameter's value, bytes.
    pub value: u64,
    /// Throughput over the repeats (GiB/s).
    pub summary: Summary,
    /// Every run at this value, in the order they ran.
    pub runs: Vec<RunResult>,
}

/// A planned sweep: every run, validated, in the order it will run.
#[derive(Debug, Clone)]
pub struct SweepPlan {
    /// Step id.
    pub step: String,
    /// What varies.
    pub param: SweepParam,
    /// The values, increasing.
    pub values: Vec<ByteSize>,
    /// (index into `values`, plan), in run order.
    pub runs: Vec<(usize, RunPlan)>,
}

impl SweepPlan {
    /// Validates every value against `limits` and orders `repeats` runs of each:
    /// each repeat visits every value once, in an order shuffled by `rng`.
    pub fn new(
        step: &str,
        param: SweepParam,
        values: &[ByteSize],
        base: &RunParams,
        repeats: usize,
        limits: &Limits,
        rng: &mut impl Rng,
    ) -> Result<SweepPlan, SweepError> {
        if values.is_empty() {
            return Err(SweepError::Empty);
        }
        if repeats == 0 {
            return Err(SweepError::NoRepeats);
        }
        if values.len() > MAX_POINTS {
            return Err(SweepError::TooMany {
                count: values.len(),
            });
        }
        for pair in values.windows(2) {
            if pair[1] <= pair[0] {
                return Err(SweepError::NotIncreasing {
                    earlier: pair[0].exact(),
                    later: pair[1].exact(),
                });
            }
        }
        let mut plans = Vec::with_capacity(values.len());
        for &value in values {
            if value.bytes() == 0 {
                return Err(SweepError::Zero {
                    param: param.name(),
                });
            }
            let plan = RunPlan::for_step_id(step, &param.apply(base, value), limits)?;
            plans.push(plan);
        }
        let mut runs = Vec::with_capacity(values.len() * repeats);
        for _ in 0..repeats {
            let mut order: Vec<usize> = (0..values.len()).collect();
            order.shuffle(rng);
            runs.extend(order.into_iter().map(|i| (i, plans[i].clone())));
        }
        Ok(SweepPlan {
            step: step.to_string(),
            param,
            values: values.to_vec(),
            runs,
        })
    }

    /// Groups finished runs (index into `values`, result) into points, in value order.
    pub fn points(&self, results: &[(usize, RunResult)]) -> Vec<SweepPoint> {
        self.values
            .iter()
            .enumerate()
            .filter_map(|(index, value)| {
                let runs: Vec<RunResult> = results
                    .iter()
                    .filter(|(i, _)| *i == index)
                    .map(|(_, r)| r.clone())
                    .collect();
                let rates: Vec<f64> = runs.iter().map(|r| r.gib_per_s).collect();
                summarize(&rates).map(|summary| SweepPoint {
                    value: value.bytes(),
                    summary,
                    runs,
                })
            })
            .collect()
    }
}

/// A sweep as a job of jobs: its runs one after another, each an ordinary pipe
/// job, and the `point` each result makes. The CLI runs it whole ([`Self::run`]);
/// the server takes [`Self::next_run`] and queues each run on its own, so other
/// pages' runs can take their turn in between, and reports each result through
/// [`Self::point`].
#[derive(Debug, Clone)]
pub struct SweepJob {
    plan: SweepPlan,
    /// Runs handed out so far.
    started: usize,
    /// Finished runs: (index into the plan's values, result).
    results: Vec<(usize, RunResult)>,
    /// No more runs are to be handed out (the sweep was cancelled).
    stopped: bool,
}

impl SweepJob {
    /// The sweep of `plan`, nothing run yet.
    pub fn new(plan: SweepPlan) -> Self {
        SweepJob {
            plan,
            started: 0,
            results: Vec::new(),
            stopped: false,
        }
    }

    /// What it runs.
    pub fn plan(&self) -> &SweepPlan {
        &self.plan
    }

    /// How many runs it has in all.
    pub fn total(&self) -> usize {
        self.plan.runs.len()
    }

    /// The next run, or `None` when every run has been handed out.
    pub fn next_run(&mut self) -> Option<RunPlan> {
        if self.stopped {
            return None;
        }
        let (_, plan) = self.plan.runs.get(self.started)?;
        self.started += 1;
        Some(plan.clone())
    }

    /// Records the result of the run handed out last; its `point` event.
    pub fn point(&mut self, result: RunResult) -> Event {
        let index = self.plan.runs[self.started.saturating_sub(1)].0;
        self.results.push((index, result.clone()));
        Event::Point {
            value: self.plan.values[index].bytes(),
            index: self.results.len(),
            of: self.total(),
            result: Box::new(result),
        }
    }

    /// The value the run handed out last runs at.
    pub fn current_value(&self) -> Option<ByteSize> {
        let (index, _) = self.plan.runs.get(self.started.checked_sub(1)?)?;
        Some(self.plan.values[*index])
    }

    /// Hands out no more runs: a cancelled sweep stops as a whole.
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    /// The `done` event, once every run has its point.
    pub fn done(&self) -> Event {
        Event::Done {
            runs: self.results.len(),
        }
    }

    /// The finished runs grouped by value.
    pub fn points(&self) -> Vec<SweepPoint> {
        self.plan.points(&self.results)
    }

    /// Runs every run in turn on this thread, telling `observer` of each run's
    /// events and of each `point`; returns `done`, or the event that ended the
    /// sweep early (an error, a cancel), or `None` when the observer went away.
    pub fn run(
        &mut self,
        context: &JobContext,
        observer: &mut dyn Observer,
        progress: bool,
    ) -> Option<Event> {
        while let Some(plan) = self.next_run() {
            let job = PipeJob {
                plan,
                occupancy: false,
                progress,
            };
            match job.run(context, observer)? {
                Event::Result(Finished::Pipe(result)) => {
                    let point = self.point(*result);
                    observer.event(point);
                }
                other => return Some(other),
            }
        }
        Some(self.done())
    }
}

/// Why the curve could not be drawn.
#[derive(Debug, thiserror::Error)]
#[error("cannot draw the sweep chart: {0}")]
pub struct SweepChartError(String);

const LINE: RGBColor = RGBColor(0x2b, 0x6c, 0xb0);
const BAND: RGBColor = RGBColor(0xb8, 0xd0, 0xea);

/// Draws median GiB/s against the value on a log2 x axis, with a min-max band.
pub fn render_svg(
    step: &str,
    param: SweepParam,
    points: &[SweepPoint],
) -> Result<String, SweepChartError> {
    let err = |e: &dyn std::fmt::Display| SweepChartError(e.to_string());
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, 480)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let log = |v: u64| (v.max(1) as f64).log2();
        let (low, high) = match (points.first(), points.last()) {
            (Some(a), Some(b)) => (log(a.value) - 0.5, log(b.value) + 0.5),
            _ => (12.0, 13.0),
        };
        let top = points
            .iter()
            .map(|p| p.summary.max)
            .fold(0.0_f64, f64::max)
            .max(0.1)
            * 1.15;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!("{step}: GiB/s against {}", param.label()),
                ("sans-serif", 20),
            )
            .margin(16)
            .x_label_area_size(44)
            .y_label_area_size(56)
            .build_cartesian_2d(low..high, 0.0..top)
            .map_err(|e| err(&e))?;
        // No generated x ticks: they would fall between the swept values. Each
        // value gets its own label below the axis instead.
        chart
            .configure_mesh()
            .x_desc(param.label())
            .y_desc("GiB/s (median, min-max band)")
            .x_labels(0)
            .disable_x_mesh()
            .light_line_style(WHITE)
            .draw()
            .map_err(|e| err(&e))?;
        let label_style = ("sans-serif", 13)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Top));
        for p in points {
            let (x, y) = chart.backend_coord(&(log(p.value), 0.0));
            root.draw(&Text::new(
                ByteSize(p.value).to_string(),
                (x, y + 6),
                label_style.clone(),
            ))
            .map_err(|e| err(&e))?;
        }
        let band: Vec<(f64, f64)> = points
            .iter()
            .map(|p| (log(p.value), p.summary.max))
            .chain(points.iter().rev().map(|p| (log(p.value), p.summary.min)))
            .collect();
        chart
            .draw_series(std::iter::once(Polygon::new(band, BAND.mix(0.6).filled())))
            .map_err(|e| err(&e))?;
        chart
            .draw_series(LineSeries::new(
                points.iter().map(|p| (log(p.value), p.summary.median)),
                LINE.stroke_width(2),
            ))
            .map_err(|e| err(&e))?;
        chart
            .draw_series(
                points
                    .iter()
                    .map(|p| Circle::new((log(p.value), p.summary.median), 4, LINE.filled())),
            )
            .map_err(|e| err(&e))?;
        root.present().map_err(|e| err(&e))?;
    }
    Ok(svg)
}

/// The sweep as CSV: one line per value.
pub fn render_csv(param: SweepParam, points: &[SweepPoint]) -> String {
    let mut csv = format!("{},runs,median_gib_s,min_gib_s,max_gib_s\n", param.name());
    for p in points {
        csv.push_str(&format!(
            "{},{},{:.3},{:.3},{:.3}\n",
            p.value, p.summary.runs, p.summary.median, p.summary.min, p.summary.max
        ));
    }
    csv
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::size::{KIB, MIB};
    use rand::SeedableRng;

    fn rng() -> rand::rngs::StdRng {
        rand::rngs::StdRng::seed_from_u64(7)
    }

    #[test]
    fn ranges_double_and_lists_keep_their_values() {
        let range = parse_values("4KiB..4MiB").unwrap();
        assert_eq!(range.len(), 11);
        assert_eq!(range[0], ByteSize(4 * KIB));
        assert_eq!(range[10], ByteSize(4 * MIB));
        let list = parse_values("16KiB,64KiB,256KiB,1MiB").unwrap();
        assert_eq!(
            list,
            [16 * KIB, 64 * KIB, 256 * KIB, MIB].map(ByteSize).to_vec()
        );
    }

    #[test]
    fn bad_values_are_refused_with_the_reason() {
        assert!(matches!(
            parse_values("1MiB..4KiB"),
            Err(SweepError::NotIncreasing { .. })
        ));
        assert!(matches!(
            parse_values("0..4KiB"),
            Err(SweepError::Zero { .. })
        ));
        assert!(matches!(
            parse_values("4KiB,lots"),
            Err(SweepError::BadValue { .. })
        ));
        let limits = Limits::default();
        let plan = |values: &[u64]| {
            let values: Vec<ByteSize> = values.iter().copied().map(ByteSize).collect();
            SweepPlan::new(
                "write-read",
                SweepParam::PipeSize,
                &values,
                &RunParams::default(),
                1,
                &limits,
                &mut rng(),
            )
        };
        assert!(matches!(plan(&[]), Err(SweepError::Empty)));
        assert!(matches!(plan(&[0]), Err(SweepError::Zero { .. })));
        assert!(matches!(
            plan(&[64 * KIB, 16 * KIB]),
            Err(SweepError::NotIncreasing { .. })
        ));
        let over = plan(&[64 * KIB, limits.max_pipe_size * 2]).unwrap_err();
        assert!(matches!(over, SweepError::Plan(_)), "{over}");
        assert!(over.to_string().contains("pipe_size"), "{over}");
    }

    #[test]
    fn every_value_runs_once_per_repeat() {
        let values = parse_values("16KiB..128KiB").unwrap();
        let plan = SweepPlan::new(
            "write-read",
            SweepParam::PipeSize,
            &values,
            &RunParams::default(),
            3,
            &Limits::default(),
            &mut rng(),
        )
        .unwrap();
        assert_eq!(plan.runs.len(), 12);
        for repeat in plan.runs.chunks(4) {
            let mut seen: Vec<usize> = repeat.iter().map(|(i, _)| *i).collect();
            seen.sort();
            assert_eq!(seen, [0, 1, 2, 3]);
        }
        for (index, run) in &plan.runs {
            assert_eq!(run.writer.pipe_size, Some(values[*index]));
        }
    }
}
