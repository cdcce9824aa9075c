//! Lab 7 from its page: five latency tasks (64-byte round trips, 5000 each, so
//! every run is short), locked until a choice is saved; then every task's real
//! runs, the checks judged, the choice compared with the mechanism that had the
//! lowest 99th percentile, and the finished card axe-core clean.

use serde_json::json;

use super::labs::{
    lab_checks, lab_outcome, open_lab, run_lab_task, save_prediction, tasks_wait_for_a_prediction,
    LabOutcome,
};
use super::queries;
use super::{in_fresh_page, js, screenshot_element, Page, TestResult};

const CHAPTER: &str = "lab-latency-tail";

/// The tasks in the lab's order.
const TASKS: [&str; 5] = ["pipe", "futex", "unix-stream", "pipe-busy", "shm-ring"];

#[tokio::test]
async fn the_tail_lab_runs_its_tasks_and_names_the_lowest_p99() {
    in_fresh_page("latency-tail-lab", do_tail_lab).await;
}

async fn do_tail_lab(page: &Page) -> TestResult {
    let client = &page.client;
    let extra = "options: [...r.querySelectorAll('select.pipebook-prediction-input option')]
                   .map((o) => o.value).filter((v) => v),";
    let (root, card) = open_lab(page, CHAPTER, "latency-tail", extra).await?;
    let root = root.as_str();
    tasks_wait_for_a_prediction(&card, &TASKS, "lab 7", |_, text| {
        text.starts_with("latency ") && text.contains("64 B messages, 5000 round trips")
    })?;
    // The choice is among the five tasks.
    if card["options"] != json!(TASKS) {
        return Err(format!("lab 7's choices: {card}"));
    }
    save_prediction(
        client,
        root,
        "r.querySelector('select.pipebook-prediction-input').value = 'shm-ring';",
        "shm-ring",
    )
    .await?;
    for (index, task) in TASKS.iter().enumerate() {
        // Six runs a task, one after another.
        run_lab_task(client, root, task, 6 * (index + 1)).await?;
    }
    // Every check is judged on these runs: none waits, and none is unavailable
    // (they read percentiles, which every run has). Each compares two tasks'
    // medians on its interval at a planned look, so six runs a side may leave one not
    // resolved yet on a noisy machine, which the card says with its interval.
    let (checks, statuses) = lab_checks(client, root).await?;
    let detail = js(
        client,
        &queries::check_detail(root, "polling-beats-sleeping"),
    )
    .await?;
    let detail = detail.as_str().unwrap_or_default().to_owned();
    let judged: Vec<&str> = statuses.iter().map(|(id, _)| id.as_str()).collect();
    if judged
        != [
            "polling-beats-sleeping",
            "wakeup-sets-the-pace",
            "ring-beats-calls",
        ]
        || statuses
            .iter()
            .any(|(_, s)| !["pass", "fail", "not_resolved"].contains(&s.as_str()))
        // The runner's interval at its first planned look (at that look's
        // share of the 5%), or its word that too few runs a side cannot reach it.
        || !(detail.contains("% rank-sum interval") && detail.contains("look 1 of 3")
            || detail.contains("cannot resolve at"))
    {
        return Err(format!(
            "lab 7's checks should all be judged: {checks}; {detail}"
        ));
    }
    let LabOutcome {
        verdict,
        head,
        rows,
        shown,
        ..
    } = lab_outcome(client, root).await?;
    let named = TASKS
        .iter()
        .any(|t| verdict.contains(&format!("{t} had the lowest 99th percentile")));
    if !verdict.starts_with("You predicted shm-ring") || !named {
        return Err(format!("lab 7's verdict names no lowest tail: {shown}"));
    }
    for column in ["median", "99th percentile"] {
        if !head.iter().any(|h| h == column) {
            return Err(format!("lab 7's runs table lacks “{column}”: {shown}"));
        }
    }
    // A header row and thirty runs (six a task).
    if rows != 31 {
        return Err(format!("lab 7's runs table: {shown}"));
    }
    crate::a11y::audit(client, &crate::a11y::axe_source(), "lab 7 done").await?;
    js(client, &queries::scroll_to_top()).await?;
    let path = screenshot_element(client, root, "lab-latency-tail-done").await?;
    println!("lab 7: checks {checks}, {verdict}; {}", path.display());
    Ok(())
}
