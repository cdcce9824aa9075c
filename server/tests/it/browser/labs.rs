//! Labs completed from their pages: a prediction, the tasks' real runs, the
//! checks judged, progress kept across a reload, and the export.

use std::time::Duration;

use fantoccini::Client;
use serde_json::{json, Value};

use super::queries;
use super::{
    click, in_fresh_page, js, js_async, open, require_chapter, screenshot_element, Page, TestResult,
};

/// The lab the test completes end to end, from its page.
const LAB_CHAPTER: &str = "lab-vmsplice-safety";

/// The lab whose tasks are IPC runs.
const IPC_LAB_CHAPTER: &str = "lab-choose-ipc";

#[tokio::test]
async fn a_lab_is_completed_from_its_page_and_exported() {
    in_fresh_page("lab", do_lab).await;
}

#[tokio::test]
async fn the_ipc_lab_runs_its_tasks_and_compares_the_choice() {
    in_fresh_page("ipc-lab", do_ipc_lab).await;
}

/// Fills a lab card's prediction (and any run fields) with `fill`, JavaScript
/// run with the card as `r`, saves it, and waits until the card shows `shown` as
/// the saved prediction and unlocks its runs.
pub(super) async fn save_prediction(
    client: &Client,
    root: &str,
    fill: &str,
    shown: &str,
) -> TestResult {
    js(client, &queries::lab_fill(root, fill)).await?;
    click(client, &format!("{root} .pipebook-prediction-save")).await?;
    queries::lab_prediction_saved(root, shown)
        .wait(client, Duration::from_secs(10), "the saved prediction")
        .await?;
    Ok(())
}

/// Clicks a lab task's run button and waits until the card is idle again with
/// `measurements` runs recorded in all (or says the error it showed).
pub(super) async fn run_lab_task(
    client: &Client,
    root: &str,
    task: &str,
    measurements: usize,
) -> TestResult {
    click(
        client,
        &format!("{root} button.pipebook-lab-run[data-task=\"{task}\"]"),
    )
    .await?;
    let state = queries::lab_idle_with(root, measurements)
        .wait(
            client,
            Duration::from_secs(60),
            &format!("the lab's {task} runs"),
        )
        .await?;
    match state.as_str() {
        Some(err) => Err(err.to_string()),
        None => Ok(()),
    }
}

/// A lab card's checks as shown: the raw list, and (id, status) pairs.
pub(super) async fn lab_checks(
    client: &Client,
    root: &str,
) -> Result<(Value, Vec<(String, String)>), String> {
    let checks = js(client, &queries::lab_check_statuses(root)).await?;
    let statuses = serde_json::from_value(checks.clone()).map_err(|e| format!("{e}: {checks}"))?;
    Ok((checks, statuses))
}

/// Opens `chapter`, waits until the card of lab `lab` is idle, scrolls to it
/// and reads its tasks (`tasks`: each one's id, command and whether its run is
/// locked) and `extra`, more fields of the returned object in JavaScript with
/// the card as `r`. Returns the card's selector and what was read.
pub(super) async fn open_lab(
    page: &Page,
    chapter: &str,
    lab: &str,
    extra: &str,
) -> TestResult<(String, Value)> {
    let client = &page.client;
    require_chapter(chapter)?;
    let root = format!(".pipebook-lab[data-lab=\"{lab}\"]");
    open(client, &page.base, chapter).await?;
    let idle = queries::card_idle(&root);
    idle.wait(client, Duration::from_secs(10), &format!("{lab}'s card"))
        .await?;
    let card = js(client, &queries::lab_tasks(&root, extra)).await?;
    Ok((root, card))
}

/// Checks that a card read by [`open_lab`] lists exactly the tasks `expected`,
/// in order, each command as `reads` accepts (given the task and its command)
/// and each run locked until a prediction is saved; `name` is the lab in errors.
pub(super) fn tasks_wait_for_a_prediction(
    card: &Value,
    expected: &[&str],
    name: &str,
    reads: impl Fn(&str, &str) -> bool,
) -> TestResult {
    let tasks = card["tasks"].as_array().cloned().unwrap_or_default();
    let ids: Vec<&str> = tasks.iter().filter_map(|t| t["task"].as_str()).collect();
    if ids != expected {
        return Err(format!(
            "{name}'s tasks are {ids:?}, expected {expected:?}: {card}"
        ));
    }
    for t in &tasks {
        let text = t["text"].as_str().unwrap_or("");
        if !reads(t["task"].as_str().unwrap_or("?"), text) {
            return Err(format!("{name}'s task reads {text:?}: {t}"));
        }
        if t["locked"] != json!(true) {
            return Err(format!("{name}'s runs wait for a prediction: {t}"));
        }
    }
    Ok(())
}

/// What a lab card shows once its runs are in: the verdict on the prediction,
/// the runs table's column heads and row count, and the status line.
pub(super) struct LabOutcome {
    pub verdict: String,
    pub head: Vec<String>,
    pub rows: u64,
    pub status: String,
    /// All of it, for errors.
    pub shown: Value,
}

/// Reads a lab card's [`LabOutcome`].
pub(super) async fn lab_outcome(client: &Client, root: &str) -> TestResult<LabOutcome> {
    let shown = js(client, &queries::lab_runs_table(root)).await?;
    let text = |key: &str| shown[key].as_str().unwrap_or("").to_string();
    Ok(LabOutcome {
        verdict: text("verdict"),
        head: shown["head"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|h| h.as_str().map(str::to_string))
            .collect(),
        rows: shown["rows"].as_u64().unwrap_or(0),
        status: text("status"),
        shown,
    })
}

/// Lab 6 from its page: its four IPC tasks, locked until a prediction (a
/// choice) is saved; then every task's runs (real IPC runs, capped at 8 MiB),
/// the checks judged and the choice compared with the fastest mechanism.
async fn do_ipc_lab(page: &Page) -> TestResult {
    let client = &page.client;
    let expected = ["pipe-rw", "unix-stream", "posix-shm", "memfd-scm"];
    let (root, card) = open_lab(page, IPC_LAB_CHAPTER, "choose-ipc", "").await?;
    tasks_wait_for_a_prediction(&card, &expected, "lab 6", |task, text| {
        text.starts_with(&format!("IPC {task}"))
    })?;
    let root = root.as_str();
    let ids = expected;
    let path = screenshot_element(client, root, "lab-choose-ipc").await?;
    println!("lab 6: tasks {ids:?}; {}", path.display());

    save_prediction(
        client,
        root,
        "r.querySelector('select.pipebook-prediction-input').value = 'posix-shm';
         r.querySelector('.pipebook-lab-bytes').value = '8MiB';",
        "posix-shm",
    )
    .await?;
    for (index, task) in expected.iter().enumerate() {
        // Six runs a task (the fewest that can resolve its checks), one after another.
        run_lab_task(client, root, task, 6 * (index + 1)).await?;
    }
    // Judged on this machine's runs: passed, failed, or (three runs of 8 MiB on
    // a shared machine) not resolved yet, with its interval; none left waiting.
    let (checks, statuses) = lab_checks(client, root).await?;
    // Two checks on speed (judged on their intervals, so possibly not resolved yet)
    // and two on the ends' counts, which the runner always takes.
    if statuses.len() != 4
        || statuses
            .iter()
            .any(|(_, s)| !matches!(s.as_str(), "pass" | "fail" | "not_resolved"))
    {
        return Err(format!("lab 6's checks should all be judged: {checks}"));
    }
    // Every run the card made was quiet, so its speed checks compare unwatched runs.
    let recorded = js_async(client, &queries::lab_runs_watched())
        .await
        .map_err(|e| format!("reading /api/labs: {e}"))?;
    let watched = recorded.as_array().cloned().unwrap_or_default();
    if watched.len() < 24 || watched.iter().any(|w| *w != json!(false)) {
        return Err(format!(
            "lab 6's twenty-four runs should all be quiet (watched: false): {recorded}"
        ));
    }
    // The two throughput ratios each state their interval or why there is none
    // (the count checks have none), and the card says what this machine's state would do to them before
    // any run.
    let said = js(client, &queries::lab_check_details(root)).await?;
    let details: Vec<String> = serde_json::from_value(said["details"].clone()).unwrap_or_default();
    // As the runner judged them: an interval at the look's level (a planned
    // look spends its share of the 5%), or (too few runs a side to reach it)
    // the runner saying so, never a verdict without one.
    if details
        .iter()
        .filter(|d| {
            d.contains("% rank-sum interval") && d.contains("look 1 of 3")
                || d.contains("cannot resolve at")
        })
        .count()
        != 2
    {
        return Err(format!(
            "lab 6's checks should state their intervals: {said}"
        ));
    }
    if !said["precheck"]
        .as_str()
        .unwrap_or("")
        .starts_with("Machine check: ")
    {
        return Err(format!("lab 6 should show the machine check: {said}"));
    }
    let verdict = js(client, &queries::lab_verdict(root)).await?;
    let verdict = verdict.as_str().unwrap_or("");
    if !verdict.contains("You predicted posix-shm") || !verdict.contains("fastest") {
        return Err(format!(
            "lab 6 should compare the choice with the fastest mechanism: {verdict}"
        ));
    }
    js(client, &queries::scroll_to_top()).await?;
    let path = screenshot_element(client, root, "lab-choose-ipc-done").await?;
    println!("lab 6: checks {checks}, {verdict}; {}", path.display());
    Ok(())
}

/// Completes one lab from its page: a prediction, its two runs (small), the
/// checks judged, progress kept across a reload, and the export fetched from the
/// page and checked (schema and digest) by the same code `pipebook report` uses.
async fn do_lab(page: &Page) -> TestResult {
    let (client, base) = (&page.client, page.base.as_str());
    require_chapter(LAB_CHAPTER)?;
    let root = ".pipebook-lab[data-lab=\"vmsplice-safety\"]";
    open(client, base, LAB_CHAPTER).await?;
    let idle = queries::card_idle(root);
    idle.wait(client, Duration::from_secs(10), "the lab card")
        .await?;
    // Runs stay locked until a prediction is saved.
    let locked = js(client, &queries::lab_run_locked(root)).await?;
    if locked != json!(true) {
        return Err("the lab's runs should wait for a prediction".into());
    }
    save_prediction(
        client,
        root,
        "r.scrollIntoView({ block: 'start' });
         r.querySelector('.pipebook-prediction-input').value = '0.3';
         r.querySelector('.pipebook-lab-bytes').value = '16MiB';
         r.querySelector('input.pipebook-seconds').value = '1';",
        "0.3",
    )
    .await?;
    for (task, count) in [("verified", 1), ("reuse", 2)] {
        run_lab_task(client, root, task, count).await?;
    }
    let (checks, statuses) = lab_checks(client, root).await?;
    if !statuses.contains(&("double-buffer-clean".into(), "pass".into()))
        || statuses.iter().any(|(_, s)| s == "pending")
    {
        return Err(format!(
            "the checks should be judged, double buffering clean: {checks}"
        ));
    }
    let verdict = js(client, &queries::lab_verdict(root)).await?;
    if !verdict.as_str().unwrap_or("").contains("You predicted 0.3") {
        return Err(format!(
            "the prediction should be compared with the measurement: {verdict}"
        ));
    }
    // From the top, so mdBook's sticky bar does not cover the card.
    js(client, &queries::scroll_to_top()).await?;
    let path = screenshot_element(client, root, "lab-done").await?;
    println!("lab: checks {checks}, {verdict}; {}", path.display());

    // A reload shows the same lab, from the runner.
    open(client, base, LAB_CHAPTER).await?;
    queries::lab_judged(
        root,
        &statuses
            .iter()
            .map(|(_, s)| s.as_str())
            .collect::<Vec<_>>()
            .join(","),
    )
    .wait(
        client,
        Duration::from_secs(10),
        "the lab's progress after a reload",
    )
    .await?;

    // The export, fetched by the page from the link it offers.
    js(client, &queries::lab_student_name(root)).await?;
    let fetched = js_async(client, &queries::lab_export_json(root))
        .await
        .map_err(|e| format!("fetching the export: {e}"))?;
    if fetched["status"] != json!(200) {
        return Err(format!("the export failed: {fetched}"));
    }
    let report: Value = serde_json::from_str(fetched["text"].as_str().unwrap_or(""))
        .map_err(|e| format!("the export is not JSON: {e}"))?;
    if report["schema"] != json!("pipebook-lab-report")
        || report["schema_version"] != json!(1)
        || report["student"] != json!("Test Student")
    {
        return Err(format!(
            "the export's schema and name: {} {} {}",
            report["schema"], report["schema_version"], report["student"]
        ));
    }
    pipebook::labs::export::verify_digest(&report)
        .map_err(|e| format!("the export's digest: {e}"))?;
    // The card ran every task quiet: no run its checks compare was watched.
    let measurements = report["labs"]
        .as_array()
        .and_then(|labs| labs.iter().find(|l| l["id"] == json!("vmsplice-safety")))
        .map(|l| l["measurements"].as_array().cloned().unwrap_or_default())
        .unwrap_or_default();
    if measurements.is_empty()
        || measurements
            .iter()
            .any(|m| m["result"]["watched"] != json!(false))
    {
        return Err(format!(
            "the lab's runs should be quiet (watched: false): {measurements:?}"
        ));
    }
    let html = js(client, &queries::lab_export_href(root)).await?;
    println!(
        "lab export: {} bytes, digest ok, HTML at {html}",
        fetched["text"].as_str().unwrap_or("").len()
    );
    Ok(())
}
