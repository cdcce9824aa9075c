//! `pipebench ipc-end SPEC`: the child side of the lab. It takes the
//! descriptors of the one map ([`crate::process::launch`]), counts its own
//! window ([`crate::process::counts`]), runs its mechanism's end, and writes its
//! report as its one outcome line.

use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::ExitCode;

use super::end::{EndFds, IpcEndError, IpcEndReport, IpcEndSpec, Received};
use super::{files, pipes, shared, sockets, sysv, zerocopy, Mechanism};
use crate::ends::control::ControlRegion;
use crate::ends::usage::self_usage;
use crate::process::counts::{Counting, Request};
use crate::process::launch::{send_outcome, CONTROL_FD, DATA_FD, DST_FD, REPORT_FD, SRC_FD};

/// `pipebench ipc-end SPEC`: runs one end and sends its report as its outcome line.
pub(crate) fn end_main(spec_json: &str) -> ExitCode {
    let spec: IpcEndSpec = match serde_json::from_str(spec_json) {
        Ok(spec) => spec,
        Err(e) => {
            eprintln!("pipebench ipc-end: error: bad end spec: {e}");
            return ExitCode::from(2);
        }
    };
    // SAFETY: the launcher put these descriptors there for us (the harness's
    // `launch_end` says which); we take ownership of each exactly once.
    let mut fds = unsafe {
        EndFds {
            data: spec.has_fd.then(|| OwnedFd::from_raw_fd(DATA_FD)),
            src: spec.has_src.then(|| File::from_raw_fd(SRC_FD)),
            dst: spec.has_dst.then(|| File::from_raw_fd(DST_FD)),
        }
    };
    // The harness wrote the source through the same open file: read it from
    // its start.
    if let Some(src) = &mut fds.src {
        if let Err(e) = src.seek(SeekFrom::Start(0)) {
            eprintln!("pipebench ipc-end: error: lseek (source): {e}");
            return ExitCode::from(2);
        }
    }
    let control = if spec.has_control {
        ControlRegion::attach(CONTROL_FD)
    } else {
        ControlRegion::local()
    };
    let received = match control {
        Ok(control) => Received(control),
        Err(e) => {
            eprintln!("pipebench ipc-end: error: {e}");
            return ExitCode::from(2);
        }
    };
    // The end's own window: opened before its mechanism's set-up and loop,
    // closed after. The perf events are opened before the window starts, so
    // opening them is not counted.
    let request = Request {
        calls: Vec::new(),
        // The card's "Count kernel events" switch (`--no-counts` off) decides.
        per_wakeup: true,
        trace_syscalls: false,
    };
    let mut window = if spec.no_counts {
        Counting::off(&request)
    } else {
        Counting::open(&request)
    };
    window.start();
    match run_end(&spec, fds, &received) {
        Ok(mut report) => {
            report.counts = Some(window.stop(std::mem::take(&mut report.calls)));
            report.usage = self_usage();
            if send_outcome(REPORT_FD, &report).is_err() {
                return ExitCode::from(1);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("pipebench ipc-end {}: error: {e}", spec.role.name());
            ExitCode::from(1)
        }
    }
}

fn run_end(
    spec: &IpcEndSpec,
    fds: EndFds,
    received: &Received,
) -> Result<IpcEndReport, IpcEndError> {
    use Mechanism::*;
    match spec.mechanism {
        SysvMsgqueue => sysv::msgqueue_end(spec, received),
        FifoRw | FifoSplice | PipeRw | PipeSplice => pipes::end(spec, fds, received),
        TcpRw | TcpSendfile | TcpSplice | UnixStream => sockets::end(spec, fds, received),
        FileFlock | FileMmap | SysvShm | PosixShm | MemfdScm => {
            shared::end(spec, fds.data, received)
        }
        LinesMmap | LinesRead | DirectIo | BufferedIo | CowFork => {
            files::end(spec, fds.src, received)
        }
        TcpMsgZerocopy | TcpZerocopyReceive | UringSendZc | CopyFileRange | Ficlone => {
            zerocopy::end(spec, fds, received)
        }
    }
}
