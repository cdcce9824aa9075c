//! `pipebench shared-pipe`: real writer and reader processes on one real pipe.

use crate::common::{cpus, pipebench, stderr, stdout};
use serde_json::Value;

#[test]
fn no_message_up_to_pipe_buf_is_torn_and_every_writers_bytes_arrive() {
    let _cpus = cpus();
    let output = pipebench(&[
        "shared-pipe",
        "--writers",
        "1,4",
        "--readers",
        "1,2",
        "--msg-size",
        "512,4KiB,64KiB",
        "--bytes",
        "8MiB",
        "--json",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let result: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let points = result["points"].as_array().unwrap();
    assert_eq!(points.len(), 12, "{result}");
    let numbers = |v: &Value| -> Vec<u64> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .collect()
    };
    for p in points {
        let msg = p["msg_size"].as_u64().unwrap();
        let writers = p["writers"].as_u64().unwrap() as usize;
        let written = numbers(&p["written"]);
        let received = numbers(&p["received"]);
        let per_reader = numbers(&p["per_reader"]);
        assert_eq!(written.len(), writers, "{p}");
        assert_eq!(per_reader.len() as u64, p["readers"].as_u64().unwrap());
        // Each writer's bytes all arrived, and the totals add up.
        assert_eq!(written, received, "{p}");
        let total: u64 = written.iter().sum();
        assert_eq!(total, p["bytes"].as_u64().unwrap(), "{p}");
        assert_eq!(per_reader.iter().sum::<u64>(), total, "{p}");
        // Whole messages, split evenly between the writers.
        let each = (8u64 << 20) / writers as u64 / msg * msg;
        assert!(written.iter().all(|&w| w == each), "{p}");
        if msg <= 4096 {
            assert_eq!(p["atomic"], true);
            assert_eq!(p["torn_messages"], 0, "{p}");
        }
        assert!(p["gib_per_s"].as_f64().unwrap() > 0.0, "{p}");
    }
    // 4 writers and 2 readers are more processes than this machine's CPUs when
    // it has fewer than 6: the result says so.
    let cpus = result["cpus"].as_u64().unwrap();
    let warned = !result["warnings"].as_array().unwrap().is_empty();
    assert_eq!(warned, cpus < 6, "{result}");
}

#[test]
fn bad_counts_and_sizes_exit_2() {
    for args in [
        ["shared-pipe", "--writers", "0", "--msg-size", "4KiB"],
        ["shared-pipe", "--writers", "x", "--msg-size", "4KiB"],
        ["shared-pipe", "--writers", "1", "--msg-size", "100"],
    ] {
        let output = pipebench(&args);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
    }
}
