//! The book's explanation of each IPC mechanism, as predictions about the counts
//! of a run, judged against what its ends counted.
//!
//! The zero-copy chapter explains each mechanism by the path its bytes take: a
//! copy path hands every byte through calls (read in, write out), splice and
//! sendfile hand it on by page reference in one call, mapped shared memory
//! moves it with no call at all but faults each page in once, and a blocking
//! queue puts an end to sleep only when it is full or empty. [`judge`] states
//! each of those once, for the mechanisms it is about, and says whether this
//! run agrees: where the machine disagrees, that is a finding about it, not a
//! failure of the run.

use serde::{Deserialize, Serialize};

use super::{IpcEnd, Mechanism};
use crate::process::counts::{Counts, EndCounts, ModelCheck, ModelVerdict};

/// One prediction judged: the fields of a pipe run's [`ModelCheck`], and for a
/// verdict of `unknown`, why it cannot be told.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IpcModelCheck {
    /// The prediction, the figure and the verdict.
    #[serde(flatten)]
    pub judgement: ModelCheck,
    /// Why the verdict is `unknown` (no counts from that end, nothing moved).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// How a mechanism's end hands the data on, as the chapter tells it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Path {
    /// Each byte goes through the end's buffer: read in, written out.
    Copy,
    /// Each byte is handed on once by a call (a message, a write into a shared
    /// file, a splice or sendfile by page reference).
    Once,
    /// splice file -> pipe, then pipe -> socket: two calls per byte, no buffer.
    TwoSplices,
    /// Mapped memory both ends share: no call moves a byte.
    Mapped,
    /// A zero-copy send (`send(MSG_ZEROCOPY)`, io_uring's `SEND_ZC`): one call
    /// hands each byte to the socket by pinning its page, not by copying it in.
    ZeroCopySend,
    /// `getsockopt(TCP_ZEROCOPY_RECEIVE)`: each byte arrives once, mapped into
    /// the end, or copied by `recv` where the kernel cannot map it.
    MappedReceive,
}

/// What the chapter says each end of `mechanism` does with the bytes, for the
/// mechanisms whose ends this module has predictions for: (producer, consumer).
fn paths(mechanism: Mechanism) -> Option<(Path, Path)> {
    use Mechanism::*;
    Some(match mechanism {
        FifoRw | PipeRw | TcpRw | UnixStream => (Path::Copy, Path::Copy),
        FifoSplice | PipeSplice => (Path::Once, Path::Once),
        TcpSendfile => (Path::Once, Path::Copy),
        TcpSplice => (Path::TwoSplices, Path::Copy),
        SysvMsgqueue | FileFlock => (Path::Once, Path::Once),
        FileMmap | SysvShm | PosixShm | MemfdScm => (Path::Mapped, Path::Mapped),
        TcpMsgZerocopy | UringSendZc => (Path::ZeroCopySend, Path::Copy),
        TcpZerocopyReceive => (Path::Copy, Path::MappedReceive),
        _ => return None,
    })
}

/// The calls that take or leave the channel, per role, for the mechanisms whose
/// ends block on it (sleep when it is full or empty): (producer's, consumer's).
fn blocking_calls(mechanism: Mechanism) -> Option<(&'static str, &'static str)> {
    use Mechanism::*;
    match mechanism {
        SysvMsgqueue => Some(("msgsnd", "msgrcv")),
        // A stream socket blocks like a pipe: the sender when the socket's
        // send buffer (or, on loopback, the receiver's) is full, the receiver
        // when nothing has arrived.
        FifoRw | PipeRw | TcpRw | UnixStream => Some(("write", "read")),
        _ => None,
    }
}

/// The page size faults are counted in (the kernel's: 4 KiB on x86-64).
fn page_size() -> u64 {
    crate::ends::buffer::page_size() as u64
}

/// A prediction before it is judged.
struct IpcRule {
    id: String,
    end: &'static str,
    what: &'static str,
    model: String,
    /// The figure, or why there is none.
    measured: Result<f64, String>,
    holds: Box<dyn Fn(f64) -> bool>,
}

/// The book's predictions for a run of `mechanism` that moved `bytes`, judged
/// against the counts of its `ends` (as the result names them: `producer`,
/// `consumer`). Empty for mechanisms the chapter makes no prediction about (the
/// one-process experiments and the file copies, whose notes say what happened)
/// and when no end counted.
pub fn judge(
    mechanism: Mechanism,
    bytes: u64,
    ends: &[IpcEnd],
    counts: Option<&Counts>,
) -> Vec<IpcModelCheck> {
    judge_with_pages(mechanism, bytes, ends, counts, page_size())
}

/// [`judge`] with the page size given (the tests judge other kernels' pages).
fn judge_with_pages(
    mechanism: Mechanism,
    bytes: u64,
    ends: &[IpcEnd],
    counts: Option<&Counts>,
    page: u64,
) -> Vec<IpcModelCheck> {
    let Some((producer, consumer)) = paths(mechanism) else {
        return Vec::new();
    };
    let Some(counts) = counts.filter(|c| !c.ends.is_empty()) else {
        return Vec::new();
    };
    let mut rules = Vec::new();
    for (role, path) in [("producer", producer), ("consumer", consumer)] {
        let through: u64 = ends
            .iter()
            .find(|e| e.role == role)
            .map_or(0, |e| e.call_bytes.values().sum());
        rules.push(call_bytes_rule(
            role,
            path,
            bytes,
            through,
            counted(counts, role),
        ));
        if path == Path::Mapped {
            rules.push(faults_rule(
                mechanism,
                role,
                bytes,
                page,
                counted(counts, role),
            ));
        }
    }
    if let Some((send, receive)) = blocking_calls(mechanism) {
        for (role, call) in [("producer", send), ("consumer", receive)] {
            rules.push(sleeps_rule(role, call, counted(counts, role)));
        }
    }
    rules.into_iter().map(judged).collect()
}

/// The counts of the end in `role`, or why there are none.
fn counted<'a>(counts: &'a Counts, role: &str) -> Result<&'a EndCounts, String> {
    counts.ends.get(role).ok_or_else(|| {
        format!("the {role} sent no counts (an end that ran without counting, or an older runner)")
    })
}

fn nothing_moved() -> String {
    "the run moved no bytes".to_string()
}

impl Path {
    /// Bytes through an end's data calls per byte moved, and the chapter's words for it.
    fn call_bytes(self) -> (f64, &'static str) {
        match self {
            Path::Copy => (
                2.0,
                "2: each byte is read into the end's buffer and written out of it, \
                 two of the path's copies",
            ),
            Path::Once => (
                1.0,
                "1: each byte is handed on by one call (a message, a write or read \
                 of the shared file, or a splice or sendfile by page reference)",
            ),
            Path::TwoSplices => (
                2.0,
                "2: splice moves each byte's page from the file into a pipe, then \
                 from the pipe into the socket, with no buffer in between",
            ),
            Path::Mapped => (
                0.0,
                "0: no call moves the data; both ends read and write the same pages",
            ),
            Path::ZeroCopySend => (
                1.0,
                "1: one zero-copy send hands each byte to the socket by pinning the page \
                 it lies in, with no copy into the socket's buffer at the call (the kernel \
                 may still copy later, as it does for a local receiver, and says so in the \
                 completions)",
            ),
            Path::MappedReceive => (
                1.0,
                "1: each byte arrives once, mapped into the end by \
                 getsockopt(TCP_ZEROCOPY_RECEIVE) or, where it cannot be mapped (a part \
                 page), copied by recv; never both",
            ),
        }
    }
}

/// Bytes through the end's data calls (`through`), per byte moved.
fn call_bytes_rule(
    role: &'static str,
    path: Path,
    bytes: u64,
    through: u64,
    counted: Result<&EndCounts, String>,
) -> IpcRule {
    let (expected, model) = path.call_bytes();
    let measured = counted.and_then(|_| {
        (bytes > 0)
            .then(|| through as f64 / bytes as f64)
            .ok_or_else(nothing_moved)
    });
    IpcRule {
        id: format!("{role}_call_bytes"),
        end: role,
        what: "bytes through data calls per byte moved",
        model: model.to_string(),
        measured,
        holds: Box::new(move |x| (x - expected).abs() <= 0.02 * expected + 0.001),
    }
}

/// Page faults per page of data, for an end that maps the data.
fn faults_rule(
    mechanism: Mechanism,
    role: &'static str,
    bytes: u64,
    page: u64,
    counted: Result<&EndCounts, String>,
) -> IpcRule {
    let page_words = crate::size::ByteSize(page).to_string();
    let pages = bytes.div_ceil(page.max(1)) as f64;
    let faults = counted.and_then(|c| {
        (pages > 0.0)
            .then(|| c.page_faults as f64 / pages)
            .ok_or_else(nothing_moved)
    });
    let (model, holds): (String, Box<dyn Fn(f64) -> bool>) =
        if role == "producer" && mechanism == Mechanism::FileMmap {
            // The page cache may hold a file in large folios (ext4 and xfs do
            // on recent kernels), and one write fault then maps a whole folio.
            (
                format!(
                    "more than none and at most one: its first write to each {page_words} \
                     page faults it in, and fewer where the file system caches the file \
                     in large folios (one fault maps the whole folio)"
                ),
                Box::new(|x| x > 0.0 && x <= 1.2),
            )
        } else if role == "producer" {
            (
                format!(
                    "about one: its first write to each {page_words} page faults the page \
                     in; fewer only where shared memory is backed by huge pages"
                ),
                Box::new(|x| (0.8..=1.2).contains(&x)),
            )
        } else {
            (
                format!(
                    "more than none and at most one: reading a {page_words} page the \
                     producer already made faults it in, and one fault may map its \
                     neighbours too (fault-around)"
                ),
                Box::new(|x| x > 0.0 && x <= 1.1),
            )
        };
    IpcRule {
        id: format!("{role}_faults"),
        end: role,
        what: "page faults per page of data",
        model,
        measured: faults,
        holds,
    }
}

/// Sleeps per message, for an end that blocks on the channel's `call`.
fn sleeps_rule(role: &'static str, call: &str, counted: Result<&EndCounts, String>) -> IpcRule {
    let measured = counted.and_then(|c| {
        let calls = c.syscalls.get(call).copied().unwrap_or(0);
        (calls > 0)
            .then(|| c.voluntary_switches as f64 / calls as f64)
            .ok_or_else(|| format!("the {role} made no {call} call"))
    });
    let producer = role == "producer";
    IpcRule {
        id: format!("{role}_sleeps"),
        end: role,
        what: if producer {
            "sleeps (voluntary context switches) per message sent"
        } else {
            "sleeps (voluntary context switches) per message received"
        },
        model: format!(
            "at most about one per {call}: an end sleeps only when the queue is {} \
             and is woken once the other end has {}",
            if producer { "full" } else { "empty" },
            if producer {
                "taken a message"
            } else {
                "put one in"
            },
        ),
        measured,
        holds: Box::new(|x| x <= 1.2),
    }
}

/// A rule judged: its figure, or why there is none, and the verdict.
fn judged(rule: IpcRule) -> IpcModelCheck {
    let (measured, why) = match rule.measured {
        Ok(x) => (Some(x), None),
        Err(why) => (None, Some(why)),
    };
    IpcModelCheck {
        judgement: ModelCheck {
            verdict: ModelVerdict::of(measured, &rule.holds),
            id: rule.id,
            end: rule.end.to_string(),
            what: rule.what.to_string(),
            measured,
            model: rule.model,
        },
        why,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::ends::report::EndUsage;
    use crate::process::counts::{Counted, EndCounts};

    const MIB64: u64 = 64 << 20;

    /// An end as its report comes in: what the record keeps of it, and its
    /// counted window, which the record keeps under its role in `counts`.
    #[derive(Clone)]
    struct End {
        end: IpcEnd,
        counts: Option<Counted>,
    }

    /// The record's ends and counts of `ends`, judged.
    fn judge_ends(mechanism: Mechanism, bytes: u64, ends: &[End], page: u64) -> Vec<IpcModelCheck> {
        let (plain, counts) = record_of(ends);
        judge_with_pages(mechanism, bytes, &plain, counts.as_ref(), page)
    }

    fn record_of(ends: &[End]) -> (Vec<IpcEnd>, Option<Counts>) {
        let plain = ends.iter().map(|e| e.end.clone()).collect();
        let counts = Counts::of(
            ends.iter()
                .map(|e| (e.end.role.as_str(), e.counts.as_ref())),
        );
        (plain, counts)
    }

    fn end(role: &str, calls: &[(&str, u64, u64)], faults: u64, sleeps: u64) -> End {
        End {
            end: IpcEnd {
                role: role.into(),
                usage: EndUsage::default(),
                call_bytes: calls
                    .iter()
                    .map(|(c, _, b)| (c.to_string(), *b))
                    .collect::<BTreeMap<_, _>>(),
            },
            counts: Some(Counted {
                counts: EndCounts {
                    syscalls: calls.iter().map(|(c, n, _)| (c.to_string(), *n)).collect(),
                    voluntary_switches: sleeps,
                    context_switches: sleeps,
                    page_faults: faults,
                    ..EndCounts::default()
                },
                missing: Vec::new(),
            }),
        }
    }

    fn verdict(judged: &[IpcModelCheck], id: &str) -> ModelVerdict {
        judged
            .iter()
            .find(|p| p.judgement.id == id)
            .unwrap_or_else(|| panic!("no {id} in {judged:?}"))
            .judgement
            .verdict
    }

    #[test]
    fn a_copy_path_that_hands_bytes_through_two_calls_per_end_agrees() {
        let calls = [("read", 1024, MIB64), ("write", 1024, MIB64)];
        let ends = [
            end("consumer", &calls, 40, 900),
            end("producer", &calls, 40, 1000),
        ];
        let judged = judge_ends(Mechanism::PipeRw, MIB64, &ends, 4096);
        for id in [
            "producer_call_bytes",
            "consumer_call_bytes",
            "producer_sleeps",
            "consumer_sleeps",
        ] {
            assert_eq!(
                verdict(&judged, id),
                ModelVerdict::Agrees,
                "{id}: {judged:?}"
            );
        }
        // Half the bytes through the calls, or two sleeps per write: not the model.
        let half = [("read", 512, MIB64 / 2), ("write", 1024, MIB64 / 2)];
        let ends = [
            end("consumer", &calls, 40, 900),
            end("producer", &half, 40, 2048),
        ];
        let judged = judge_ends(Mechanism::PipeRw, MIB64, &ends, 4096);
        assert_eq!(
            verdict(&judged, "producer_call_bytes"),
            ModelVerdict::Disagrees
        );
        assert_eq!(verdict(&judged, "producer_sleeps"), ModelVerdict::Disagrees);
        assert_eq!(verdict(&judged, "consumer_sleeps"), ModelVerdict::Agrees);
    }

    #[test]
    fn mapped_memory_moves_nothing_through_calls_and_faults_each_page_once() {
        let pages = MIB64 / 4096;
        let ends = [
            end("consumer", &[], pages / 16, 0),
            end("producer", &[], pages + 30, 0),
        ];
        let judged = judge_ends(Mechanism::PosixShm, MIB64, &ends, 4096);
        for id in [
            "producer_call_bytes",
            "consumer_call_bytes",
            "producer_faults",
            "consumer_faults",
        ] {
            assert_eq!(
                verdict(&judged, id),
                ModelVerdict::Agrees,
                "{id}: {judged:?}"
            );
        }
        assert!(!judged.iter().any(|p| p.judgement.id.ends_with("_sleeps")));
        // A producer on huge pages (one fault per 2 MiB), a consumer that copied
        // the data with read(2): the model does not hold, and says which part.
        let ends = [
            end("consumer", &[("read", 1024, MIB64)], pages / 16, 0),
            end("producer", &[], pages / 512, 0),
        ];
        let judged = judge_ends(Mechanism::PosixShm, MIB64, &ends, 4096);
        assert_eq!(verdict(&judged, "producer_faults"), ModelVerdict::Disagrees);
        assert_eq!(
            verdict(&judged, "consumer_call_bytes"),
            ModelVerdict::Disagrees
        );
        assert_eq!(
            verdict(&judged, "producer_call_bytes"),
            ModelVerdict::Agrees
        );
        // Faults are per page of the kernel's size: the same count on 16 KiB pages
        // is four times too many.
        let ends = [
            end("consumer", &[], pages / 16, 0),
            end("producer", &[], pages, 0),
        ];
        let judged = judge_ends(Mechanism::PosixShm, MIB64, &ends, 16 << 10);
        assert_eq!(verdict(&judged, "producer_faults"), ModelVerdict::Disagrees);
    }

    #[test]
    fn zero_copy_sockets_hand_each_byte_through_one_call_and_stream_sockets_sleep_like_pipes() {
        let copy = [("read", 1024, MIB64), ("write", 1024, MIB64)];
        for (mechanism, call) in [
            (Mechanism::TcpMsgZerocopy, "send"),
            (Mechanism::UringSendZc, "io_uring_enter"),
        ] {
            let ends = [
                end("producer", &[(call, 1024, MIB64)], 40, 100),
                end("consumer", &copy, 40, 100),
            ];
            let judged = judge_ends(mechanism, MIB64, &ends, 4096);
            assert_eq!(
                verdict(&judged, "producer_call_bytes"),
                ModelVerdict::Agrees
            );
            assert_eq!(
                verdict(&judged, "consumer_call_bytes"),
                ModelVerdict::Agrees
            );
            // A sender that copied each byte into a buffer with a write too.
            let ends = [
                end(
                    "producer",
                    &[(call, 1024, MIB64), ("write", 1024, MIB64)],
                    40,
                    100,
                ),
                end("consumer", &copy, 40, 100),
            ];
            let judged = judge_ends(mechanism, MIB64, &ends, 4096);
            assert_eq!(
                verdict(&judged, "producer_call_bytes"),
                ModelVerdict::Disagrees,
                "{mechanism}"
            );
        }
        // Mapped or copied, each byte once: a receiver whose bytes were both
        // mapped and then read again is not the model.
        let split = [("getsockopt", 900, MIB64 - 4096), ("recv", 4, 4096)];
        let ends = [
            end("producer", &copy, 40, 100),
            end("consumer", &split, 40, 100),
        ];
        let judged = judge_ends(Mechanism::TcpZerocopyReceive, MIB64, &ends, 4096);
        assert_eq!(
            verdict(&judged, "consumer_call_bytes"),
            ModelVerdict::Agrees
        );
        assert_eq!(
            verdict(&judged, "producer_call_bytes"),
            ModelVerdict::Agrees
        );
        let twice = [("getsockopt", 900, MIB64), ("recv", 1024, MIB64)];
        let ends = [
            end("producer", &copy, 40, 100),
            end("consumer", &twice, 40, 100),
        ];
        let judged = judge_ends(Mechanism::TcpZerocopyReceive, MIB64, &ends, 4096);
        assert_eq!(
            verdict(&judged, "consumer_call_bytes"),
            ModelVerdict::Disagrees
        );
        // Stream sockets: at most about one sleep per write and per read.
        for mechanism in [Mechanism::TcpRw, Mechanism::UnixStream] {
            let ends = [
                end("producer", &copy, 40, 1000),
                end("consumer", &copy, 40, 1024),
            ];
            let judged = judge_ends(mechanism, MIB64, &ends, 4096);
            assert_eq!(verdict(&judged, "producer_sleeps"), ModelVerdict::Agrees);
            assert_eq!(verdict(&judged, "consumer_sleeps"), ModelVerdict::Agrees);
            let ends = [
                end("producer", &copy, 40, 3 * 1024),
                end("consumer", &copy, 40, 1024),
            ];
            let judged = judge_ends(mechanism, MIB64, &ends, 4096);
            assert_eq!(verdict(&judged, "producer_sleeps"), ModelVerdict::Disagrees);
            assert_eq!(verdict(&judged, "consumer_sleeps"), ModelVerdict::Agrees);
        }
    }

    #[test]
    fn an_end_without_counts_cannot_tell_and_says_why() {
        let mut producer = end("producer", &[("msgsnd", 8192, MIB64)], 10, 100);
        producer.counts = None;
        let ends = [
            end("consumer", &[("msgrcv", 8192, MIB64)], 10, 100),
            producer,
        ];
        let judged = judge_ends(Mechanism::SysvMsgqueue, MIB64, &ends, 4096);
        let sleeps = judged
            .iter()
            .find(|p| p.judgement.id == "producer_sleeps")
            .unwrap();
        assert_eq!(sleeps.judgement.verdict, ModelVerdict::Unknown);
        assert!(sleeps.why.as_deref().unwrap().contains("producer"));
        assert_eq!(verdict(&judged, "consumer_sleeps"), ModelVerdict::Agrees);
        assert_eq!(
            verdict(&judged, "consumer_call_bytes"),
            ModelVerdict::Agrees
        );
        // No predictions at all where the chapter makes none, or nothing counted.
        assert!(judge_ends(Mechanism::CowFork, MIB64, &ends, 4096).is_empty());
        let mut none = ends.clone();
        none[0].counts = None;
        assert!(judge_ends(Mechanism::SysvMsgqueue, MIB64, &none, 4096).is_empty());
    }
}
