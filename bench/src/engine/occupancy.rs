//! How full the pipe was over a run, and how often each end slept.
//!
//! The harness keeps a duplicate of the pipe's read end and asks the kernel how many
//! bytes sit in it (`ioctl(FIONREAD)`, which sums the lengths of the ring's occupied
//! slots under the pipe's mutex), every few milliseconds from the observing
//! thread; every tenth sample it also reads each end's voluntary context switches
//! from `/proc/PID/status` (a blocking end sleeps once per switch). A [`Recorder`]
//! folds the samples into at most [`MAX_POINTS`] buckets that keep their minimum
//! and maximum, so a ring that fills and drains inside one bucket still shows both.
//!
//! The duplicate makes the harness one more reader of the pipe, which would keep a
//! writer blocked on a full pipe from seeing EPIPE when the real reader goes away:
//! [`PipeWatch::close`] drops it as soon as the reader is reaped or the run is asked
//! to stop, before anything waits on that EPIPE.

use std::fs::File;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::FileExt;

use serde::{Deserialize, Serialize};

/// How often the harness samples the pipe in a watched run, with a CPU to spare
/// for the observer. FIONREAD is one short system call, but it takes the pipe's
/// mutex, which both ends take on every call, and each sample wakes the observer.
pub const SAMPLE_INTERVAL: std::time::Duration = std::time::Duration::from_millis(5);

/// How often when every CPU runs an end: the observer then preempts an end to
/// sample, and can be preempted while it holds the pipe's mutex. On a 2-core VM,
/// every 5 ms cost vmsplice-splice several per cent (the measure test); every
/// 20 ms keeps the cost within the noise.
pub(crate) const CROWDED_SAMPLE_INTERVAL: std::time::Duration =
    std::time::Duration::from_millis(20);

/// The sampling interval for a run whose ends use `ends` (the CPUs they are
/// pinned to, if any): short when this process may use a CPU neither end uses.
pub(crate) fn interval_for(ends: [Option<usize>; 2]) -> std::time::Duration {
    let spare = crate::process::cpu::allowed_cpus()
        .into_iter()
        .any(|cpu| !ends.contains(&Some(cpu)));
    match spare {
        true => SAMPLE_INTERVAL,
        false => CROWDED_SAMPLE_INTERVAL,
    }
}

/// Where a crowded run's sampler sits. With no CPU to spare, the sampler has to
/// share one with an end, and it only gets to run when that end sleeps: on the
/// writer's CPU it would see the pipe only full, on the reader's only empty. So
/// it moves to the other end's CPU after every sample, and gives the calling
/// thread its CPUs back when dropped (a harness that runs again plans from them).
#[derive(Debug)]
pub(crate) struct Alternation {
    cpus: [usize; 2],
    next: usize,
    original: rustix::thread::CpuSet,
}

impl Alternation {
    /// An alternation between the ends' CPUs, when both are pinned and the calling
    /// thread may use no other CPU; `None` otherwise (the sampler then stays where
    /// it is, on a spare CPU or wherever the scheduler puts it).
    pub(crate) fn for_ends(ends: [Option<usize>; 2]) -> Option<Alternation> {
        let [Some(writer), Some(reader)] = ends else {
            return None;
        };
        let allowed = crate::process::cpu::allowed_cpus();
        let spare = allowed.iter().any(|cpu| *cpu != writer && *cpu != reader);
        if spare || writer == reader || !allowed.contains(&writer) || !allowed.contains(&reader) {
            return None;
        }
        let original = rustix::thread::sched_getaffinity(None).ok()?;
        Some(Alternation {
            cpus: [writer, reader],
            next: 0,
            original,
        })
    }

    /// Moves the calling thread to the next end's CPU.
    pub(crate) fn step(&mut self) {
        let mut set = rustix::thread::CpuSet::new();
        set.set(self.cpus[self.next]);
        self.next = 1 - self.next;
        // A failed move only costs the balance of the samples, not the run.
        let _ = rustix::thread::sched_setaffinity(None, &set);
    }
}

impl Drop for Alternation {
    fn drop(&mut self) {
        let _ = rustix::thread::sched_setaffinity(None, &self.original);
    }
}

/// Points a series keeps at most (each the minimum and maximum of its bucket).
pub const MAX_POINTS: usize = 1000;

/// The bytes one slot of the ring holds: a page, so a pipe of capacity C has
/// C / page-size slots (16 of 4 KiB by default on x86-64; with 64 KiB pages the
/// default pipe is 16 slots of 64 KiB).
pub fn slot_bytes() -> u64 {
    crate::ends::buffer::page_size() as u64
}

/// What results recorded before they named their slot size were measured with.
fn slot_bytes_before_recorded() -> u64 {
    4096
}

/// The occupancy series, one entry per point (struct of arrays, to keep results small).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OccupancySeries {
    /// Start of each point's bucket, milliseconds since the run started.
    pub t_ms: Vec<f64>,
    /// Fewest bytes seen in the pipe in the bucket.
    pub min: Vec<u64>,
    /// Most bytes seen in the pipe in the bucket.
    pub max: Vec<u64>,
    /// The writer's voluntary context switches counted in the bucket.
    pub writer_sleeps: Vec<u64>,
    /// The reader's voluntary context switches counted in the bucket.
    pub reader_sleeps: Vec<u64>,
}

/// Pipe occupancy over one run: summary figures and the series behind them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Occupancy {
    /// The pipe's capacity in bytes (F_GETPIPE_SZ once data moved).
    pub capacity: u64,
    /// The sampling interval the observer aimed at, milliseconds.
    pub interval_ms: f64,
    /// How many samples were taken from the first byte on.
    pub samples: u64,
    /// Share of samples with the pipe full: at least capacity minus one page
    /// (the writer has no slot left and sleeps, or spins in a busy loop).
    pub full_share: f64,
    /// Share of samples with the pipe empty (the reader waits).
    pub empty_share: f64,
    /// The writer's voluntary context switches while sampled.
    pub writer_sleeps: u64,
    /// The reader's voluntary context switches while sampled.
    pub reader_sleeps: u64,
    /// The width of one point, milliseconds.
    pub bucket_ms: f64,
    /// Whether the sampler alternated between the ends' CPUs (no CPU to spare):
    /// it then ran only while the end beside it slept, so the full and empty
    /// shares say where it sat, not how long each phase lasted.
    #[serde(default)]
    pub alternating: bool,
    /// The bytes one slot holds (the machine's page size).
    #[serde(default = "slot_bytes_before_recorded")]
    pub slot_bytes: u64,
    /// The points.
    pub series: OccupancySeries,
}

impl Occupancy {
    /// Bytes at or above which a sample counts as full for `capacity`: less than
    /// one slot of `slot` bytes left.
    pub(crate) fn full_threshold(capacity: u64, slot: u64) -> u64 {
        capacity.saturating_sub(slot).max(1)
    }
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    min: u64,
    max: u64,
    writer_sleeps: u64,
    reader_sleeps: u64,
    filled: bool,
}

impl Bucket {
    const EMPTY: Bucket = Bucket {
        min: u64::MAX,
        max: 0,
        writer_sleeps: 0,
        reader_sleeps: 0,
        filled: false,
    };

    fn merge(self, other: Bucket) -> Bucket {
        Bucket {
            min: self.min.min(other.min),
            max: self.max.max(other.max),
            writer_sleeps: self.writer_sleeps + other.writer_sleeps,
            reader_sleeps: self.reader_sleeps + other.reader_sleeps,
            filled: self.filled || other.filled,
        }
    }
}

/// Folds samples into a bounded series: buckets double in width whenever the run
/// outgrows them, so memory stays bounded however long the run is.
#[derive(Debug, Clone)]
pub(crate) struct Recorder {
    interval_ms: f64,
    bucket_ms: f64,
    buckets: Vec<Bucket>,
    capacity: u64,
    slot: u64,
    samples: u64,
    full: u64,
    empty: u64,
    writer_sleeps: u64,
    reader_sleeps: u64,
}

impl Recorder {
    /// A recorder for samples about every `interval_ms` into a pipe of `capacity` bytes.
    pub(crate) fn new(interval_ms: f64, capacity: u64) -> Recorder {
        Recorder {
            interval_ms,
            bucket_ms: interval_ms.max(0.01),
            buckets: Vec::new(),
            capacity,
            slot: slot_bytes(),
            samples: 0,
            full: 0,
            empty: 0,
            writer_sleeps: 0,
            reader_sleeps: 0,
        }
    }

    fn bucket(&mut self, t_ms: f64) -> &mut Bucket {
        let mut index = (t_ms.max(0.0) / self.bucket_ms) as usize;
        // Twice the points kept at most, so halving lands at or under MAX_POINTS.
        while index >= 2 * MAX_POINTS {
            self.halve();
            index = (t_ms.max(0.0) / self.bucket_ms) as usize;
        }
        if self.buckets.len() <= index {
            self.buckets.resize(index + 1, Bucket::EMPTY);
        }
        &mut self.buckets[index]
    }

    fn halve(&mut self) {
        self.buckets = self
            .buckets
            .chunks(2)
            .map(|pair| pair.iter().copied().fold(Bucket::EMPTY, Bucket::merge))
            .collect();
        self.bucket_ms *= 2.0;
    }

    /// One sample: `bytes` in the pipe at `t_ms` since the start.
    pub(crate) fn sample(&mut self, t_ms: f64, bytes: u64) {
        self.samples += 1;
        if bytes == 0 {
            self.empty += 1;
        }
        if bytes >= Occupancy::full_threshold(self.capacity, self.slot) {
            self.full += 1;
        }
        let bucket = self.bucket(t_ms);
        bucket.min = bucket.min.min(bytes);
        bucket.max = bucket.max.max(bytes);
        bucket.filled = true;
    }

    /// Voluntary context switches of each end counted since the previous call, at `t_ms`.
    pub(crate) fn sleeps(&mut self, t_ms: f64, writer: u64, reader: u64) {
        self.writer_sleeps += writer;
        self.reader_sleeps += reader;
        let bucket = self.bucket(t_ms);
        bucket.writer_sleeps += writer;
        bucket.reader_sleeps += reader;
    }

    /// The series and its summary, at most [`MAX_POINTS`] points.
    pub(crate) fn finish(mut self) -> Occupancy {
        while self.buckets.len() > MAX_POINTS {
            self.halve();
        }
        let share = |n: u64| match self.samples {
            0 => 0.0,
            total => n as f64 / total as f64,
        };
        let mut series = OccupancySeries::default();
        for (i, b) in self.buckets.iter().enumerate() {
            // A bucket without a sample (the observer was not scheduled) is left out
            // rather than drawn as an empty pipe; its sleeps go to the next point.
            if !b.filled {
                if let (Some(w), Some(r)) = (
                    series.writer_sleeps.last_mut(),
                    series.reader_sleeps.last_mut(),
                ) {
                    *w += b.writer_sleeps;
                    *r += b.reader_sleeps;
                }
                continue;
            }
            series
                .t_ms
                .push((i as f64 * self.bucket_ms * 1000.0).round() / 1000.0);
            series.min.push(b.min);
            series.max.push(b.max);
            series.writer_sleeps.push(b.writer_sleeps);
            series.reader_sleeps.push(b.reader_sleeps);
        }
        Occupancy {
            capacity: self.capacity,
            interval_ms: self.interval_ms,
            samples: self.samples,
            full_share: share(self.full),
            empty_share: share(self.empty),
            writer_sleeps: self.writer_sleeps,
            reader_sleeps: self.reader_sleeps,
            bucket_ms: self.bucket_ms,
            alternating: false,
            slot_bytes: self.slot,
            series,
        }
    }
}

/// Why watching the pipe could not start.
#[derive(Debug, thiserror::Error)]
#[error("cannot watch the pipe's occupancy: {0}")]
pub(crate) struct WatchError(#[from] std::io::Error);

/// One end's voluntary context switches, read again and again from its status file.
#[derive(Debug)]
struct Sleeps {
    status: File,
    last: u64,
}

impl Sleeps {
    fn open(pid: u32) -> Option<Sleeps> {
        let status = File::open(format!("/proc/{pid}/status")).ok()?;
        let mut sleeps = Sleeps { status, last: 0 };
        sleeps.last = sleeps.read()?;
        Some(sleeps)
    }

    /// The count now, read with pread from the start of the kept-open file (the
    /// kernel regenerates it), so no open per sample.
    fn read(&mut self) -> Option<u64> {
        let mut buf = [0u8; 2048];
        let n = self.status.read_at(&mut buf, 0).ok()?;
        voluntary_switches(&buf[..n])
    }

    /// Switches since the previous call (0 once the process is gone).
    fn delta(&mut self) -> u64 {
        match self.read() {
            Some(now) => {
                let d = now.saturating_sub(self.last);
                self.last = now;
                d
            }
            None => 0,
        }
    }
}

/// `voluntary_ctxt_switches` from the text of a `/proc/PID/status` file.
pub(crate) fn voluntary_switches(status: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(status).ok()?;
    text.lines()
        .find_map(|line| line.strip_prefix("voluntary_ctxt_switches:"))
        .and_then(|v| v.trim().parse().ok())
}

/// How often the ends' sleeps are read, in milliseconds of the run: the status
/// file costs far more than FIONREAD, so not at every sample.
const SLEEPS_EVERY_MS: f64 = 50.0;

/// The harness's watch on a running pipe: a read-end duplicate for FIONREAD, the
/// ends' status files, and the recorder. Lives inside a `RunHandle`.
#[derive(Debug)]
pub(crate) struct PipeWatch {
    pipe: Option<OwnedFd>,
    interval_ms: f64,
    writer: Option<Sleeps>,
    reader: Option<Sleeps>,
    recorder: Option<Recorder>,
    /// When the sleeps were last read, milliseconds since the start.
    sleeps_at: f64,
    latest: Option<u64>,
}

impl PipeWatch {
    /// Watches the pipe behind `read_end` (duplicated here, close-on-exec), sampled
    /// about every `interval_ms`.
    pub(crate) fn new(read_end: impl AsFd, interval_ms: f64) -> Result<PipeWatch, WatchError> {
        let pipe = rustix::io::fcntl_dupfd_cloexec(read_end, 100).map_err(std::io::Error::from)?;
        Ok(PipeWatch {
            pipe: Some(pipe),
            interval_ms,
            writer: None,
            reader: None,
            recorder: None,
            sleeps_at: 0.0,
            latest: None,
        })
    }

    /// Starts reading the ends' sleeps once their process ids are known.
    pub(crate) fn set_ends(&mut self, writer: u32, reader: u32) {
        self.writer = Sleeps::open(writer);
        self.reader = Sleeps::open(reader);
    }

    /// The interval samples are meant to be taken at.
    pub(crate) fn interval(&self) -> std::time::Duration {
        std::time::Duration::from_secs_f64(self.interval_ms / 1000.0)
    }

    /// The bytes in the pipe at the latest sample.
    pub(crate) fn latest(&self) -> Option<u64> {
        self.latest
    }

    /// One sample at `t_ms`; `moved` says whether data has started to flow (samples
    /// before the first byte belong to start-up, not to the run, and are skipped).
    pub(crate) fn sample(&mut self, t_ms: f64, moved: bool) {
        let Some(pipe) = &self.pipe else { return };
        let Ok(bytes) = rustix::io::ioctl_fionread(pipe) else {
            return;
        };
        self.latest = Some(bytes);
        if self.recorder.is_none() {
            if !moved && bytes == 0 {
                return;
            }
            // The writer sets the pipe's size before its first byte: read it now.
            let capacity = rustix::pipe::fcntl_getpipe_size(pipe).map_or(0, |c| c as u64);
            self.recorder = Some(Recorder::new(self.interval_ms, capacity));
            // Sleeps from here on: forget those of start-up.
            for end in [&mut self.writer, &mut self.reader].into_iter().flatten() {
                end.delta();
            }
            self.sleeps_at = t_ms;
        }
        let recorder = self.recorder.as_mut().expect("set above");
        recorder.sample(t_ms, bytes);
        if t_ms - self.sleeps_at >= SLEEPS_EVERY_MS {
            self.sleeps_at = t_ms;
            let writer = self.writer.as_mut().map_or(0, Sleeps::delta);
            let reader = self.reader.as_mut().map_or(0, Sleeps::delta);
            recorder.sleeps(t_ms, writer, reader);
        }
    }

    /// Drops the duplicate of the pipe: from here on the harness holds no end of it.
    pub(crate) fn close(&mut self) {
        self.pipe = None;
    }

    /// The series, if any sample was taken after data started to flow.
    pub(crate) fn finish(&mut self) -> Option<Occupancy> {
        self.close();
        self.recorder.take().map(Recorder::finish)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_full_pipe_has_less_than_one_slot_left_whatever_the_page_size() {
        // The default pipe is 16 slots: 64 KiB with 4 KiB pages, 1 MiB with 64 KiB.
        for slot in [4096, 16384, 65536] {
            let capacity = 16 * slot;
            assert_eq!(Occupancy::full_threshold(capacity, slot), 15 * slot);
        }
        // A one-slot pipe is full as soon as a byte is in it.
        assert_eq!(Occupancy::full_threshold(65536, 65536), 1);
        // Results saved before slots were named read as 4 KiB ones.
        let old: Occupancy = serde_json::from_value(serde_json::json!({
            "capacity": 65536, "interval_ms": 5.0, "samples": 1, "full_share": 0.0,
            "empty_share": 1.0, "writer_sleeps": 0, "reader_sleeps": 0, "bucket_ms": 5.0,
            "series": {"t_ms": [], "min": [], "max": [], "writer_sleeps": [], "reader_sleeps": []}
        }))
        .unwrap();
        assert_eq!(old.slot_bytes, 4096);
    }

    use super::*;

    #[test]
    fn buckets_keep_min_and_max_and_stay_bounded() {
        let mut r = Recorder::new(1.0, 65536);
        // A ring that fills and drains every 3 ms for 10 s: 10 000 samples.
        for i in 0..10_000u64 {
            let bytes = match i % 3 {
                0 => 0,
                1 => 32768,
                _ => 65536,
            };
            r.sample(i as f64, bytes);
        }
        let o = r.finish();
        assert!(o.series.t_ms.len() <= MAX_POINTS, "{}", o.series.t_ms.len());
        assert!(o.series.t_ms.len() > MAX_POINTS / 2);
        assert!(o.series.min.iter().all(|&m| m == 0));
        assert!(o.series.max.iter().all(|&m| m == 65536));
        assert_eq!(o.samples, 10_000);
        assert!((o.full_share - 1.0 / 3.0).abs() < 0.01);
        assert!((o.empty_share - 1.0 / 3.0).abs() < 0.01);
        // Times rise by one bucket each.
        let t = &o.series.t_ms;
        assert!(t
            .windows(2)
            .all(|w| (w[1] - w[0] - o.bucket_ms).abs() < 1e-6));
    }

    #[test]
    fn full_means_within_one_page_of_capacity() {
        let mut r = Recorder::new(2.0, 131072);
        r.sample(0.0, 131072 - 4096);
        r.sample(2.0, 131072 - 4097);
        r.sample(4.0, 0);
        r.sample(6.0, 131072);
        let o = r.finish();
        assert_eq!(o.samples, 4);
        assert!((o.full_share - 0.5).abs() < 1e-9);
        assert!((o.empty_share - 0.25).abs() < 1e-9);
    }

    #[test]
    fn sleeps_add_up_and_gaps_are_not_drawn_as_empty() {
        let mut r = Recorder::new(1.0, 65536);
        r.sample(0.0, 4096);
        r.sleeps(0.0, 3, 1);
        // Nothing sampled from 1 to 9 ms, but sleeps counted at 5 ms.
        r.sleeps(5.0, 2, 2);
        r.sample(10.0, 8192);
        let o = r.finish();
        assert_eq!(o.series.t_ms, vec![0.0, 10.0]);
        assert_eq!(o.series.min, vec![4096, 8192]);
        assert_eq!(o.series.writer_sleeps.iter().sum::<u64>(), 5);
        assert_eq!(o.series.reader_sleeps.iter().sum::<u64>(), 3);
        assert_eq!((o.writer_sleeps, o.reader_sleeps), (5, 3));
    }

    #[test]
    fn status_files_give_voluntary_switches() {
        let text = b"Name:\tx\nvoluntary_ctxt_switches:\t42\nnonvoluntary_ctxt_switches:\t7\n";
        assert_eq!(voluntary_switches(text), Some(42));
        assert_eq!(voluntary_switches(b"Name:\tx\n"), None);
        let own = std::fs::read(format!("/proc/{}/status", std::process::id())).unwrap();
        assert!(voluntary_switches(&own).is_some());
    }

    #[test]
    fn fionread_sees_what_sits_in_a_pipe() {
        let (r, w) = rustix::pipe::pipe().unwrap();
        let mut watch = PipeWatch::new(&r, 1.0).unwrap();
        watch.sample(0.0, false);
        assert_eq!(watch.latest(), Some(0));
        rustix::io::write(&w, &[7u8; 5000]).unwrap();
        watch.sample(1.0, true);
        assert_eq!(watch.latest(), Some(5000));
        let o = watch.finish().unwrap();
        assert_eq!(o.samples, 1, "the empty start-up sample is skipped");
        assert_eq!(o.capacity, 65536);
    }
}
