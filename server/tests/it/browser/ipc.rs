//! The IPC lab's cards: one mechanism run from its chapter, and the matrix that
//! runs every mechanism in turn and charts them beside the survey.

use std::time::{Duration, Instant};

use serde_json::json;

use super::queries;
use super::{
    in_fresh_page, ipc_card_finished, js, open, require_chapter, screenshot_element, start_ipc_at,
    start_ipc_card, Page, TestResult,
};

/// The chapter whose IPC card the test runs, the mechanism, and the bytes it moves.
const IPC_CHAPTER: &str = "zero-copy-shared";
const IPC_MECHANISM: &str = "posix-shm";
const IPC_BYTES: &str = "8MiB";

/// The chapter with the matrix card.
const MATRIX_CHAPTER: &str = "zero-copy";

#[tokio::test]
async fn an_ipc_card_runs_its_mechanism_and_lists_the_run() {
    in_fresh_page("ipc-card", run_ipc).await;
}

#[tokio::test]
async fn the_ipc_matrix_runs_every_mechanism_beside_the_survey() {
    in_fresh_page("ipc-matrix", run_ipc_matrix).await;
}

/// Runs one IPC mechanism from its card, with a small size typed into the card's
/// own control, and reads the result the card shows.
async fn run_ipc(page: &Page) -> TestResult {
    let client = &page.client;
    require_chapter(IPC_CHAPTER)?;
    open(client, &page.base, IPC_CHAPTER).await?;
    let root = format!(".pipebook-ipc[data-mechanism=\"{IPC_MECHANISM}\"]");
    // How many runs of the mechanism the history held before this one: the card
    // must list one more afterwards, whatever other tests ran before.
    let before = queries::ipc_earlier_runs(&root)
        .wait(
            client,
            Duration::from_secs(10),
            "the IPC card to read the history",
        )
        .await?;
    let before: u64 = before
        .as_str()
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| format!("the IPC card's earlier runs are not a count: {before}"))?;
    start_ipc_card(client, IPC_CHAPTER, IPC_MECHANISM, IPC_BYTES).await?;
    let probe = queries::ipc_card(&root);
    let last = ipc_card_finished(client, &probe).await?;
    if last["state"] != json!("done") || last["checksum"] != json!("ok") {
        return Err(format!("the IPC card ended as {last}"));
    }
    if !last["mibs"].as_f64().is_some_and(|m| m > 0.0) {
        return Err(format!("the IPC card shows no rate: {last}"));
    }
    // The runner's progress reached the card while the run lasted (the first
    // sample comes as the harness starts), and the bar went away at the end.
    if last["progress"].as_u64().is_none_or(|n| n < 1) || last["barHidden"] != json!(true) {
        return Err(format!(
            "the IPC card showed no progress, or kept its bar: {last}"
        ));
    }
    // A watched run says so beside its figure.
    if last["watched"] != json!("true")
        || !last["summary"]
            .as_str()
            .unwrap_or("")
            .contains("A watched run")
    {
        return Err(format!(
            "the IPC card should say the run was watched: {last}"
        ));
    }
    // The table names the bytes moved, the checksum, and both ends' counters,
    // beside the survey's 1373 ms.
    let cells = last["cells"].to_string();
    for needle in [
        "8 MiB",
        "OK",
        "producer",
        "consumer",
        "faults",
        "1.37 s for 200 MiB",
    ] {
        if !cells.contains(needle) {
            return Err(format!("the IPC result table lacks {needle:?}: {cells}"));
        }
    }
    // Under it, what the kernel did for each end, per GiB: both ends as
    // columns, the always-available counts as numbers.
    let counts = &last["counts"];
    let header = counts[0].to_string();
    let sleeps = counts
        .as_array()
        .and_then(|rows| {
            rows.iter()
                .find(|r| r[0] == json!("sleeps (voluntary switches)"))
        })
        .ok_or_else(|| format!("the IPC card shows no counts table: {counts}"))?;
    if !header.contains("consumer")
        || !header.contains("producer")
        || sleeps[1].as_str().is_none_or(|c| c == "n/a")
    {
        return Err(format!("the IPC card's counts table is wrong: {counts}"));
    }
    // The card then lists the run among the earlier ones, from the history.
    queries::ipc_earlier_runs_reach(&root, before + 1)
        .wait(
            client,
            Duration::from_secs(10),
            "the IPC card to list the run from the history",
        )
        .await?;
    let path = screenshot_element(client, &root, "ipc-done").await?;
    // Again with "Quiet run" ticked: nothing streamed, the bar never shown, and
    // the card says the figure was not watched (the runner's `watched: false`).
    // The card is taller now: its button, not its middle, goes to the centre,
    // clear of mdBook's sticky bar.
    js(client, &queries::ipc_start_quiet(&root, IPC_BYTES)).await?;
    let quiet = ipc_card_finished(client, &probe).await?;
    if quiet["state"] != json!("done") || quiet["checksum"] != json!("ok") {
        return Err(format!("the quiet IPC run ended as {quiet}"));
    }
    if quiet["progress"] != json!(0)
        || quiet["watched"] != json!("false")
        || !quiet["summary"]
            .as_str()
            .unwrap_or("")
            .contains("A quiet run")
    {
        return Err(format!(
            "a quiet IPC run should stream nothing and say it was not watched: {quiet}"
        ));
    }
    let quiet_path = screenshot_element(client, &root, "ipc-quiet-done").await?;
    let axe = crate::a11y::axe_source();
    crate::a11y::audit(client, &axe, "IPC card after a quiet run").await?;
    println!(
        "ipc: {IPC_MECHANISM} at {} MiB/s watched, {} quiet; {} {}",
        last["mibs"],
        quiet["mibs"],
        path.display(),
        quiet_path.display()
    );
    Ok(())
}

/// Runs every IPC mechanism in turn from the matrix card, small, and checks the
/// chart got a bar of this machine for each beside the survey's.
async fn run_ipc_matrix(page: &Page) -> TestResult {
    let client = &page.client;
    require_chapter(MATRIX_CHAPTER)?;
    open(client, &page.base, MATRIX_CHAPTER).await?;
    let root = ".pipebook-ipc-matrix";
    start_ipc_at(client, root, "2MiB")
        .await
        .map_err(|_| "zero-copy.html has no runnable matrix card".to_string())?;
    let probe = queries::ipc_matrix(root);
    let deadline = Instant::now() + Duration::from_secs(120);
    let last = loop {
        let s = js(client, &probe).await?;
        if matches!(s["state"].as_str(), Some("done" | "error" | "cancelled")) {
            break s;
        }
        if Instant::now() > deadline {
            return Err(format!("the IPC matrix did not finish within 120 s: {s}"));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    // Every producer/consumer mechanism has a row; each one this machine can
    // run has a bar of its own (the zero-copy ones need kernel features, which
    // the lab checks the same way). The survey has figures for thirteen of them
    // (not the Unix domain socket, nor the zero-copy ones it does not measure).
    let pairs: Vec<_> = pipebench::ipc::mechanisms()
        .into_iter()
        .filter(|m| m.pair)
        .collect();
    let runnable = pairs
        .iter()
        .filter(|m| pipebench::ipc::harness::check_here(m.mechanism, &Default::default()).is_ok())
        .count();
    if last["state"] != json!("done")
        || last["rows"] != json!(runnable)
        || last["mine"] != json!(runnable)
        || last["survey"] != json!(13)
        || last["table"] != json!(pairs.len() + 1)
    {
        return Err(format!("the IPC matrix ended as {last}"));
    }
    // One run of each on this page: its ratio to the survey says it is one run
    // (and, as the runner said, too few for an interval).
    if !last["vsSurvey"]
        .as_str()
        .is_some_and(|t| t.contains("× (one run"))
    {
        return Err(format!("a row of one run should say so: {last}"));
    }
    let path = screenshot_element(client, root, "ipc-matrix-done").await?;
    println!("ipc matrix: {last}; {}", path.display());
    Ok(())
}
