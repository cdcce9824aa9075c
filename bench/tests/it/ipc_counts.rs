//! What the kernel did in real IPC runs, against the zero-copy chapter's
//! explanation of each mechanism: every prediction holds on real runs of tens of
//! MiB, the same counts altered the way another path would leave them do not, and
//! `--no-counts` leaves the kernel's events out with the reason.

use std::path::Path;

use serde_json::Value;

use pipebench::engine::counts::ModelVerdict;
use pipebench::ipc::{self, model, IpcParams, IpcResult, Mechanism};
use pipebench::process::counts::EndCounts;
use pipebench::process::launch::EndProgram;
use pipebench::size::{ByteSize, MIB};

use crate::common::{cpus, pipebench, stderr, stdout};

fn params(bytes: u64, dir: &Path) -> IpcParams {
    IpcParams {
        bytes: ByteSize(bytes),
        dir: Some(dir.to_path_buf()),
        program: Some(EndProgram {
            exe: crate::common::exe(),
            prefix: Vec::new(),
        }),
        ..Default::default()
    }
}

fn verdict(result: &IpcResult, id: &str) -> ModelVerdict {
    model::judge(
        Mechanism::parse(&result.mechanism).unwrap(),
        result.bytes,
        &result.ends,
        result.counts.as_ref(),
    )
    .iter()
    .find(|p| p.judgement.id == id)
    .unwrap_or_else(|| panic!("{}: no {id}", result.mechanism))
    .judgement
    .verdict
}

fn end_mut<'a>(result: &'a mut IpcResult, role: &str) -> &'a mut ipc::IpcEnd {
    result.ends.iter_mut().find(|e| e.role == role).unwrap()
}

/// An end's counts, kept once in the record under its role.
fn counts_mut<'a>(result: &'a mut IpcResult, role: &str) -> &'a mut EndCounts {
    result
        .counts
        .as_mut()
        .and_then(|c| c.ends.get_mut(role))
        .unwrap()
}

#[test]
fn each_mechanisms_predictions_hold_on_real_runs_and_altered_counts_break_them() {
    let _cpus = cpus();
    let dir = tempfile::tempdir().unwrap();
    let mechanisms = [
        Mechanism::PipeRw,
        Mechanism::FifoRw,
        Mechanism::PipeSplice,
        Mechanism::SysvMsgqueue,
        Mechanism::UnixStream,
        Mechanism::TcpRw,
        Mechanism::TcpSendfile,
        Mechanism::TcpSplice,
        Mechanism::FileFlock,
        Mechanism::FileMmap,
        Mechanism::SysvShm,
        Mechanism::PosixShm,
        Mechanism::MemfdScm,
    ];
    let mut runs = Vec::new();
    for mechanism in mechanisms {
        let result = ipc::run(mechanism, &params(32 * MIB, dir.path()))
            .unwrap_or_else(|e| panic!("{mechanism}: {e}"));
        assert!(
            result.model.len() >= 2,
            "{mechanism}: a prediction per end at least: {:?}",
            result.model
        );
        for p in &result.model {
            assert_eq!(
                p.judgement.verdict,
                ModelVerdict::Agrees,
                "{mechanism}: {:?}; ends {:?}",
                p,
                result.ends
            );
        }
        // The tally is the calls' own: every byte the consumer took went through
        // its calls exactly as often as the chapter says (checked above), and
        // the kinds are the ones the mechanism uses.
        let consumer = result.ends.iter().find(|e| e.role == "consumer").unwrap();
        let kinds: Vec<&str> = consumer.call_bytes.keys().map(String::as_str).collect();
        let expected: &[&str] = match mechanism {
            Mechanism::SysvMsgqueue => &["msgrcv"],
            Mechanism::PipeSplice => &["splice"],
            Mechanism::FileFlock => &["pread"],
            Mechanism::FileMmap
            | Mechanism::SysvShm
            | Mechanism::PosixShm
            | Mechanism::MemfdScm => &[],
            _ => &["read", "write"],
        };
        assert_eq!(kinds, expected, "{mechanism}: {consumer:?}");
        runs.push(result);
    }
    let find = |m: &str| runs.iter().find(|r| r.mechanism == m).unwrap().clone();

    // A copy path that handed only half the bytes through its writes.
    let mut pipe = find("pipe-rw");
    *end_mut(&mut pipe, "producer")
        .call_bytes
        .get_mut("write")
        .unwrap() /= 2;
    assert_eq!(
        verdict(&pipe, "producer_call_bytes"),
        ModelVerdict::Disagrees
    );
    assert_eq!(verdict(&pipe, "consumer_call_bytes"), ModelVerdict::Agrees);

    // A blocking queue whose receiver slept twice per message.
    let mut queue = find("sysv-msgqueue");
    let counts = counts_mut(&mut queue, "consumer");
    counts.voluntary_switches = 2 * counts.syscalls["msgrcv"];
    assert_eq!(verdict(&queue, "consumer_sleeps"), ModelVerdict::Disagrees);

    // Stream sockets whose sender slept three times per write.
    for id in ["tcp-rw", "unix-stream"] {
        let mut socket = find(id);
        let counts = counts_mut(&mut socket, "producer");
        counts.voluntary_switches = 3 * counts.syscalls["write"];
        assert_eq!(verdict(&socket, "producer_sleeps"), ModelVerdict::Disagrees);
        assert_eq!(verdict(&socket, "consumer_sleeps"), ModelVerdict::Agrees);
    }

    // Shared memory on huge pages: one fault per 2 MiB, not per page.
    let mut shm = find("posix-shm");
    counts_mut(&mut shm, "producer").page_faults = 32 * MIB / (2 * MIB);
    assert_eq!(verdict(&shm, "producer_faults"), ModelVerdict::Disagrees);

    // A mapping that copied the data after all.
    let mut mapped = find("memfd-scm");
    end_mut(&mut mapped, "consumer")
        .call_bytes
        .insert("read".into(), 32 * MIB);
    assert_eq!(
        verdict(&mapped, "consumer_call_bytes"),
        ModelVerdict::Disagrees
    );
}

/// The zero-copy sockets, on real runs: each sender hands every byte through one
/// call (`send(MSG_ZEROCOPY)`, io_uring's `SEND_ZC`), the mapping receiver takes
/// each byte once, mapped or copied, and the same counts altered the way a
/// copying path would leave them do not hold. Where this kernel refuses a
/// mechanism, the refusal is typed.
#[test]
fn zero_copy_sockets_predictions_hold_on_real_runs_and_altered_counts_break_them() {
    let _cpus = cpus();
    let dir = tempfile::tempdir().unwrap();
    let bytes = 16 * MIB;
    let mut ran = 0;
    for mechanism in [
        Mechanism::TcpMsgZerocopy,
        Mechanism::UringSendZc,
        Mechanism::TcpZerocopyReceive,
    ] {
        let mut result = match ipc::run(mechanism, &params(bytes, dir.path())) {
            Ok(result) => result,
            Err(err) => {
                assert_eq!(
                    err.kind(),
                    ipc::IpcErrorKind::Unsupported,
                    "{mechanism}: {err}"
                );
                println!("{mechanism}: refused here, typed: {err}");
                continue;
            }
        };
        ran += 1;
        assert!(result.checksum_ok, "{mechanism}");
        let ids: Vec<&str> = result
            .model
            .iter()
            .map(|p| p.judgement.id.as_str())
            .collect();
        assert_eq!(
            ids,
            ["producer_call_bytes", "consumer_call_bytes"],
            "{mechanism}"
        );
        for p in &result.model {
            assert_eq!(
                p.judgement.verdict,
                ModelVerdict::Agrees,
                "{mechanism}: {p:?}; ends {:?}",
                result.ends
            );
        }
        if mechanism == Mechanism::TcpZerocopyReceive {
            // A receiver that read again every byte it had mapped.
            let consumer = end_mut(&mut result, "consumer");
            let mapped = consumer.call_bytes.get("getsockopt").copied().unwrap_or(0);
            *consumer.call_bytes.entry("recv".into()).or_default() += mapped.max(bytes / 2);
            assert_eq!(
                verdict(&result, "consumer_call_bytes"),
                ModelVerdict::Disagrees
            );
            assert_eq!(
                verdict(&result, "producer_call_bytes"),
                ModelVerdict::Agrees
            );
        } else {
            // A sender that also wrote every byte through a buffer.
            end_mut(&mut result, "producer")
                .call_bytes
                .insert("write".into(), bytes);
            assert_eq!(
                verdict(&result, "producer_call_bytes"),
                ModelVerdict::Disagrees
            );
            assert_eq!(
                verdict(&result, "consumer_call_bytes"),
                ModelVerdict::Agrees
            );
        }
    }
    println!("{ran} of 3 zero-copy socket mechanisms ran here");
}

#[test]
fn no_counts_leaves_the_kernels_events_out_and_says_so() {
    let _cpus = cpus();
    let dir = tempfile::tempdir().unwrap();
    let dir_arg = dir.path().to_str().unwrap();
    let run = |extra: &[&str]| -> Value {
        let mut args = vec![
            "ipc",
            "pipe-rw",
            "--bytes",
            "8MiB",
            "--repeats",
            "1",
            "--json",
            "--dir",
            dir_arg,
        ];
        args.extend_from_slice(extra);
        let output = pipebench(&args);
        assert!(output.status.success(), "{args:?}: {}", stderr(&output));
        let json: Value = serde_json::from_str(&stdout(&output)).unwrap();
        json["runs"][0].clone()
    };
    let off = run(&["--no-counts"]);
    let on = run(&[]);
    // One place for the counts: the record's `counts`, keyed by role; none in
    // `ends`.
    let counted = &off["counts"];
    for end in off["ends"].as_array().unwrap() {
        assert!(end.get("counts").is_none(), "{end}");
        let counts = &counted[end["role"].as_str().unwrap()];
        // What costs nothing is still there: the calls, faults and switches.
        assert!(counts["page_faults"].is_u64(), "{end}");
        assert!(counts["voluntary_switches"].is_u64(), "{end}");
        assert!(counts["syscalls"]["read"].as_u64().unwrap() > 0, "{end}");
        if end["role"] == "producer" {
            // One read of the source per 64 KiB chunk.
            assert_eq!(counts["syscalls"]["read"], 8 * MIB / (64 << 10), "{end}");
        }
        assert!(
            end["call_bytes"]["write"].as_u64().unwrap() == 8 * MIB,
            "{end}"
        );
        // The kernel's events are absent (never 0) and the reason says why.
        for event in ["wakeups", "ipis", "tlb_flushes"] {
            assert!(counts.get(event).is_none(), "{event}: {end}");
            let said = counted["missing"].as_array().unwrap().iter().any(|m| {
                m["reason"]["kind"] == "turned_off"
                    && m["counts"].as_array().unwrap().iter().any(|c| c == event)
                    && !m["message"].as_str().unwrap().is_empty()
            });
            assert!(said, "{event}: {counted}");
        }
    }
    // Counted, the same ends say nothing was turned off.
    let missing = on["counts"]["missing"].as_array().unwrap();
    assert!(
        !missing.iter().any(|m| m["reason"]["kind"] == "turned_off"),
        "{on}"
    );
    for end in on["ends"].as_array().unwrap() {
        assert!(on["counts"][end["role"].as_str().unwrap()]["page_faults"].is_u64());
    }
    // The model reads the counts that cost nothing, so it is there either way.
    assert!(
        off["model"].as_array().is_some_and(|m| !m.is_empty()),
        "{off}"
    );
}
