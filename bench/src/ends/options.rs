//! The options of the two ends, as the command line and the step catalog spell them.
//!
//! Every option of the article's C++ programs (write.cpp and read.cpp in the public
//! repository bitonic/pipes-speed-test) has a flag here.
//! The same structs travel three ways: parsed from argv by clap, written back to
//! argv by [`WriterOptions::to_args`] when the harness spawns an end, and serialised
//! into results so a figure always says how it was made.

use std::ffi::OsString;

use clap::Args;
use serde::{Deserialize, Serialize};

use crate::ends::buffer::page_size;
use crate::size::{ByteSize, GIB, KIB};

/// The default chunk: 256 KiB, as in the article.
pub(crate) const DEFAULT_BUF_SIZE: ByteSize = ByteSize(256 * KIB);
/// What the ends pipe when run by hand (`pipebench write | pipebench read`): the
/// reference's `bytes_to_pipe` default, 10 GiB, as the article measured. A harness
/// run has its own, shorter default ([`crate::steps::plan::DEFAULT_RUN_BYTES`]).
pub(crate) const ARTICLE_BYTES: ByteSize = ByteSize(10 * GIB);

/// Where the reference's small-page buffers start past a page boundary: write.cpp
/// and read.cpp take 256 KiB from malloc, which glibc serves from an mmap'd chunk
/// whose first 16 bytes are its header. Huge-page buffers come from aligned_alloc
/// (offset 0), and a splicing reader has no buffer.
pub(crate) const MALLOC_OFFSET: u16 = 16;

/// Options both ends share.
#[derive(Debug, Clone, PartialEq, Eq, Args, Serialize, Deserialize)]
pub struct CommonOptions {
    /// Bytes per call (write, vmsplice, read, splice); the vmsplice double buffer
    /// holds two of these.
    #[arg(long, value_name = "SIZE", default_value_t = DEFAULT_BUF_SIZE)]
    pub buf_size: ByteSize,
    /// How many bytes to pipe, e.g. 10GiB; a plain number is bytes.
    #[arg(long, value_name = "SIZE", default_value_t = ARTICLE_BYTES)]
    pub bytes: ByteSize,
    /// Never sleep in the kernel: non-blocking calls, retried on EAGAIN.
    #[arg(long)]
    pub busy_loop: bool,
    /// Wait for readiness with poll(2) before every call.
    #[arg(long)]
    pub poll: bool,
    /// Pass SPLICE_F_GIFT to vmsplice (writer) or SPLICE_F_MOVE to splice (reader).
    #[arg(long)]
    pub gift: bool,
    /// Put buffers in 2 MiB transparent huge pages (aligned + MADV_HUGEPAGE).
    #[arg(long)]
    pub huge_pages: bool,
    /// mlock(2) the buffers so they can never be paged out.
    #[arg(long)]
    pub lock_memory: bool,
    /// Start each buffer this many bytes past a page boundary; 0 is page-aligned.
    /// Default: where the reference programs' allocators put them (16 bytes in for
    /// malloc'd small-page buffers, 0 for aligned huge-page ones).
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u16).range(0..4096))]
    #[serde(default)]
    pub buffer_offset: Option<u16>,
    /// Write (writer) or check (reader) a position pattern, so every byte is verified.
    #[arg(long)]
    pub verify: bool,
    /// Pin this end to one CPU.
    #[arg(long, value_name = "CPU")]
    pub cpu: Option<usize>,
    /// Leave the kernel's events uncounted (page allocations, wakeups, IPIs, TLB
    /// flushes); context switches and faults are counted anyway, at no cost.
    #[arg(long)]
    #[serde(default)]
    pub no_counts: bool,
    /// Also count the data calls in the kernel (`syscalls:sys_enter_*`), a
    /// cross-check of the end's own tally; it slows every system call of the
    /// machine, so a busy loop loses throughput.
    #[arg(long, conflicts_with = "no_counts")]
    #[serde(default)]
    pub trace_syscalls: bool,
    /// Shared-memory control region from the harness (internal).
    #[arg(long, hide = true, value_name = "FD")]
    pub control_fd: Option<i32>,
    /// Where to write the end's JSON report for the harness (internal).
    #[arg(long, hide = true, value_name = "FD")]
    pub report_fd: Option<i32>,
}

/// Options of `pipebench write`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Args, Serialize, Deserialize)]
pub struct WriterOptions {
    /// Hand pages to the pipe with vmsplice(2) instead of copying them with write(2).
    #[arg(long)]
    pub vmsplice: bool,
    /// Do not fill the buffers before the first call (the page table stays empty).
    #[arg(long)]
    pub dont_touch_pages: bool,
    /// Carve both halves of the double buffer out of one allocation.
    #[arg(long)]
    pub same_buffer: bool,
    /// Pipe capacity via F_SETPIPE_SZ (default: the kernel's 64KiB for write; half of
    /// --buf-size with --vmsplice, as the reference programs force it).
    #[arg(long, value_name = "SIZE")]
    pub pipe_size: Option<ByteSize>,
    /// Experiment: one buffer, rewritten right after each vmsplice (unsafe on purpose).
    #[arg(long, requires = "vmsplice")]
    pub reuse_early: bool,
    /// Options shared with the reader.
    #[command(flatten)]
    #[serde(flatten)]
    pub common: CommonOptions,
}

/// Options of `pipebench read`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Args, Serialize, Deserialize)]
pub struct ReaderOptions {
    /// Move pages to /dev/null with splice(2) instead of copying them out with read(2).
    #[arg(long)]
    pub splice: bool,
    /// With --verify: count corrupted bytes instead of stopping at the first one.
    #[arg(long, requires = "verify")]
    pub count_corrupt: bool,
    /// Print the report as JSON on stdout.
    #[arg(long)]
    #[serde(skip)]
    pub json: bool,
    /// Options shared with the writer.
    #[command(flatten)]
    #[serde(flatten)]
    pub common: CommonOptions,
}

impl Default for CommonOptions {
    fn default() -> Self {
        CommonOptions {
            buf_size: DEFAULT_BUF_SIZE,
            bytes: ARTICLE_BYTES,
            busy_loop: false,
            poll: false,
            gift: false,
            huge_pages: false,
            lock_memory: false,
            buffer_offset: None,
            verify: false,
            cpu: None,
            no_counts: false,
            trace_syscalls: false,
            control_fd: None,
            report_fd: None,
        }
    }
}

/// Appends `--flag` when `on`.
fn push_flag(args: &mut Vec<OsString>, on: bool, flag: &str) {
    if on {
        args.push(flag.into());
    }
}

/// Appends `--flag value` when a value is present.
fn push_value(args: &mut Vec<OsString>, flag: &str, value: Option<impl ToString>) {
    if let Some(value) = value {
        args.push(flag.into());
        args.push(value.to_string().into());
    }
}

impl CommonOptions {
    fn push_args(&self, args: &mut Vec<OsString>) {
        push_value(args, "--buf-size", Some(self.buf_size.bytes()));
        push_value(args, "--bytes", Some(self.bytes.bytes()));
        push_flag(args, self.busy_loop, "--busy-loop");
        push_flag(args, self.poll, "--poll");
        push_flag(args, self.gift, "--gift");
        push_flag(args, self.huge_pages, "--huge-pages");
        push_flag(args, self.lock_memory, "--lock-memory");
        push_value(args, "--buffer-offset", self.buffer_offset);
        push_flag(args, self.verify, "--verify");
        push_value(args, "--cpu", self.cpu);
        push_flag(args, self.no_counts, "--no-counts");
        push_flag(args, self.trace_syscalls, "--trace-syscalls");
        push_value(args, "--control-fd", self.control_fd);
        push_value(args, "--report-fd", self.report_fd);
    }

    /// Where each buffer starts past a page boundary: `--buffer-offset` when given,
    /// else where the reference programs' allocators put it (malloc's 16-byte
    /// header for small pages, none for aligned huge pages), so `pipebench write |
    /// pipebench read` places its buffers as `./write | ./read` did.
    pub(crate) fn effective_buffer_offset(&self) -> u16 {
        self.buffer_offset
            .unwrap_or(if self.huge_pages { 0 } else { MALLOC_OFFSET })
    }

    /// The options as a short human summary, such as `256KiB busy-loop huge-pages`.
    pub fn describe(&self) -> Vec<String> {
        let mut parts = vec![format!("buf {}", self.buf_size)];
        let offset = self.effective_buffer_offset();
        if offset != 0 {
            parts.push(format!("buffers at +{offset} bytes"));
        }
        for (on, name) in [
            (self.busy_loop, "busy-loop"),
            (self.poll, "poll"),
            (self.gift, "gift"),
            (self.huge_pages, "huge-pages"),
            (self.lock_memory, "lock-memory"),
            (self.verify, "verify"),
        ] {
            if on {
                parts.push(name.to_string());
            }
        }
        parts
    }
}

impl WriterOptions {
    /// The argv (after `write`) that reproduces these options.
    pub(crate) fn to_args(&self) -> Vec<OsString> {
        let mut args = Vec::new();
        push_flag(&mut args, self.vmsplice, "--vmsplice");
        push_flag(&mut args, self.dont_touch_pages, "--dont-touch-pages");
        push_flag(&mut args, self.same_buffer, "--same-buffer");
        push_value(&mut args, "--pipe-size", self.pipe_size.map(|s| s.bytes()));
        push_flag(&mut args, self.reuse_early, "--reuse-early");
        self.common.push_args(&mut args);
        args
    }

    /// The pipe capacity this writer asks for, as the reference writer decides it:
    /// explicit when given; else, with vmsplice, half of one buffer (and at least one
    /// page), so a completed vmsplice of one whole buffer means the pipe has already
    /// let go of the other one (the double-buffering argument); else none at all, and
    /// plain write(2) runs on the kernel's default pipe (16 slots, 64 KiB).
    pub(crate) fn effective_pipe_size(&self) -> Option<ByteSize> {
        self.pipe_size.or_else(|| {
            self.vmsplice
                .then(|| ByteSize((self.common.buf_size.bytes() / 2).max(page_size() as u64)))
        })
    }

    /// How many bytes each call hands over: one chunk of `--buf-size`.
    pub(crate) fn chunk_size(&self) -> usize {
        self.common.buf_size.as_usize()
    }

    /// Bytes of buffer the writer allocates (`writer::allocate_buffers`): two
    /// chunks for the vmsplice double buffer or `--same-buffer`, one otherwise.
    pub(crate) fn buffer_bytes(&self) -> u64 {
        let chunks = if self.same_buffer || (self.vmsplice && !self.reuse_early) {
            2
        } else {
            1
        };
        chunks * self.common.buf_size.bytes()
    }
}

impl ReaderOptions {
    /// The argv (after `read`) that reproduces these options.
    pub(crate) fn to_args(&self) -> Vec<OsString> {
        let mut args = Vec::new();
        push_flag(&mut args, self.splice, "--splice");
        push_flag(&mut args, self.count_corrupt, "--count-corrupt");
        push_flag(&mut args, self.json, "--json");
        self.common.push_args(&mut args);
        args
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct WriterCli {
        #[command(flatten)]
        options: WriterOptions,
    }

    #[derive(Parser)]
    struct ReaderCli {
        #[command(flatten)]
        options: ReaderOptions,
    }

    #[test]
    fn writer_flags_round_trip_through_argv() {
        let parsed = WriterCli::try_parse_from([
            "write",
            "--vmsplice",
            "--huge-pages",
            "--busy-loop",
            "--buf-size",
            "1MiB",
            "--bytes",
            "3GiB",
            "--pipe-size",
            "512KiB",
            "--gift",
            "--cpu",
            "1",
        ])
        .unwrap()
        .options;
        assert_eq!(parsed.common.buf_size, ByteSize(1 << 20));
        assert_eq!(parsed.common.bytes, ByteSize(3 << 30));
        assert_eq!(parsed.effective_pipe_size(), Some(ByteSize(512 << 10)));
        let mut argv: Vec<OsString> = vec!["write".into()];
        argv.extend(parsed.to_args());
        let again = WriterCli::try_parse_from(argv).unwrap().options;
        assert_eq!(parsed, again);
    }

    #[test]
    fn reader_flags_round_trip_through_argv() {
        let parsed = ReaderCli::try_parse_from(["read", "--splice", "--verify", "--count-corrupt"])
            .unwrap()
            .options;
        assert!(parsed.splice && parsed.common.verify && parsed.count_corrupt);
        let mut argv: Vec<OsString> = vec!["read".into()];
        argv.extend(parsed.to_args());
        assert_eq!(ReaderCli::try_parse_from(argv).unwrap().options, parsed);
    }

    #[test]
    fn defaults_follow_the_article() {
        let w = WriterCli::try_parse_from(["write"]).unwrap().options;
        assert_eq!(w, WriterOptions::default());
        assert_eq!(w.common.buf_size, ByteSize(256 << 10));
        assert_eq!(w.common.bytes, ByteSize(10 << 30));
        // write(2) leaves the kernel's default pipe alone, as write.cpp does.
        assert_eq!(w.effective_pipe_size(), None);
        let v = WriterOptions {
            vmsplice: true,
            ..Default::default()
        };
        // vmsplice: half of one 256 KiB buffer, as write.cpp forces it.
        assert_eq!(v.effective_pipe_size(), Some(ByteSize(128 << 10)));
        assert_eq!(v.chunk_size(), 256 << 10);
    }

    #[test]
    fn buffers_sit_where_the_reference_allocators_put_them() {
        let parse = |argv: &[&str]| WriterCli::try_parse_from(argv).unwrap().options.common;
        // malloc'd: 16 bytes into a page; aligned_alloc'd huge pages: on the boundary.
        assert_eq!(parse(&["write"]).effective_buffer_offset(), MALLOC_OFFSET);
        assert_eq!(
            parse(&["write", "--huge-pages"]).effective_buffer_offset(),
            0
        );
        let aligned = parse(&["write", "--buffer-offset", "0"]);
        assert_eq!(aligned.effective_buffer_offset(), 0);
        // An explicit placement survives the trip to a spawned end.
        let mut argv: Vec<OsString> = vec!["write".into()];
        argv.extend(
            WriterOptions {
                common: aligned.clone(),
                ..Default::default()
            }
            .to_args(),
        );
        assert_eq!(
            WriterCli::try_parse_from(argv).unwrap().options.common,
            aligned
        );
        assert!(WriterCli::try_parse_from(["write", "--buffer-offset", "4096"]).is_err());
    }

    #[test]
    fn bad_flags_and_sizes_are_refused() {
        assert!(WriterCli::try_parse_from(["write", "--bytes", "ten"]).is_err());
        assert!(WriterCli::try_parse_from(["write", "--frobnicate"]).is_err());
        assert!(WriterCli::try_parse_from(["write", "--reuse-early"]).is_err());
        assert!(ReaderCli::try_parse_from(["read", "--count-corrupt"]).is_err());
        let err = WriterCli::try_parse_from(["write", "--buf-size", "12 apples"])
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("apples"), "{err}");
    }
}
