//! Bad flags, sizes and situations get a clear message and a clean exit.

use std::process::Command;

use crate::common::{assert_exits_saying, exe, pipebench, pipeline, stderr, stdout};

#[test]
fn bad_flags_and_sizes_exit_2_with_the_culprit_named() {
    for (args, needle) in [
        (vec!["write", "--bytes", "ten"], "ten"),
        (vec!["read", "--buf-size", "12 apples"], "apples"),
        (vec!["write", "--frobnicate"], "--frobnicate"),
        (vec!["run", "no-such-step"], "write-read"),
        (vec!["run", "write-read", "--bytes", "999TiB"], "bytes"),
        (
            vec!["run", "write-read", "--buf-size", "10000"],
            "10000 bytes",
        ),
        (vec!["run", "write-read", "--seconds=-3"], "seconds"),
        (vec!["pages", "--address", "0xnope"], "0xnope"),
    ] {
        let output = pipebench(&args);
        assert_exits_saying(&output, 2, needle, &format!("{args:?}"));
    }
}

#[test]
fn vmsplice_onto_a_file_says_it_needs_a_pipe() {
    let file = tempfile::tempfile().unwrap();
    let output = Command::new(exe())
        .args(["write", "--vmsplice", "--bytes", "1MiB"])
        .stdout(file)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let message = stderr(&output);
    assert!(
        message.contains("not a pipe") && message.contains("pipebench write --vmsplice |"),
        "{message}"
    );
}

#[test]
fn a_pipe_size_over_the_limit_says_what_to_do() {
    let limit = pipebench::ends::pipe_setup::pipe_max_size()
        .unwrap()
        .bytes();
    let too_big = (limit * 2).to_string();
    let (writer, reader) = pipeline(
        &["--pipe-size", &too_big, "--bytes", "1MiB"],
        &["--bytes", "1MiB"],
    );
    assert_eq!(writer.status.code(), Some(2));
    let message = stderr(&writer);
    assert!(
        message.contains("pipe-max-size") && message.contains("sysctl"),
        "{message}"
    );
    // The reader, starved, reports how much it got.
    assert_exits_saying(&reader, 1, "got 0 of the 1048576 bytes", "");
}

#[test]
fn an_early_eof_reports_how_much_arrived() {
    let (writer, reader) = pipeline(&["--bytes", "1MiB"], &["--bytes", "3MiB"]);
    assert!(writer.status.success());
    assert_exits_saying(&reader, 1, "got 1048576 of the 3145728 bytes", "");
}

#[test]
fn splice_from_a_file_says_it_needs_a_pipe() {
    let file = tempfile::tempfile().unwrap();
    let output = Command::new(exe())
        .args(["read", "--splice", "--bytes", "1MiB"])
        .stdin(file)
        .output()
        .unwrap();
    assert_exits_saying(&output, 1, "stdin is not a pipe", "");
}

#[test]
fn pinning_to_a_missing_cpu_names_the_allowed_ones() {
    let output = pipebench(&[
        "run",
        "write-read",
        "--bytes",
        "1MiB",
        "--writer-cpu",
        "4095",
    ]);
    assert_exits_saying(&output, 2, "allowed", "");
}

#[test]
fn a_one_cpu_machine_gets_a_warning_and_still_runs() {
    use std::os::unix::process::CommandExt;
    let mut command = Command::new(exe());
    command.args(["run", "write-read", "--bytes", "8MiB"]);
    // SAFETY: sched_setaffinity on the child between fork and exec is
    // async-signal-safe; it makes the child see a one-CPU machine.
    unsafe {
        command.pre_exec(|| {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(0, &mut set);
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let output = command.output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let warning = stderr(&output);
    assert!(
        warning.contains("warning: only 1 CPU available"),
        "{warning}"
    );
    assert!(stdout(&output).contains("8MiB in"), "{}", stdout(&output));
}
