//! Lab 8 from its page: two latency tasks (the pipes blocking and busy), no
//! seconds or byte cap to give, locked until the prediction is saved; then the
//! real runs, the checks judged, the runs table with the latency figures and
//! the prediction set beside the measured CPU time per round trip.

use serde_json::json;

use super::labs::{
    lab_checks, lab_outcome, open_lab, run_lab_task, save_prediction, tasks_wait_for_a_prediction,
    LabOutcome,
};
use super::queries;
use super::{in_fresh_page, js, screenshot_element, Page, TestResult};

const CHAPTER: &str = "lab-latency-cpu";

#[tokio::test]
async fn the_latency_lab_runs_its_tasks_and_weighs_the_prediction() {
    in_fresh_page("latency-lab", do_latency_lab).await;
}

async fn do_latency_lab(page: &Page) -> TestResult {
    let client = &page.client;
    let extra = "seconds: !!r.querySelector('input.pipebook-seconds'),
                 bytes: !!r.querySelector('.pipebook-lab-bytes'),
                 unit: r.querySelector('.pipebook-lab-prediction label').textContent,";
    let (root, card) = open_lab(page, CHAPTER, "latency-cpu", extra).await?;
    let root = root.as_str();
    let ids = ["blocking", "busy"];
    tasks_wait_for_a_prediction(&card, &ids, "lab 8", |mode, text| {
        text.starts_with(&format!(
            "latency pipe, {mode}, 64 B messages, 5000 round trips"
        ))
    })?;
    // A latency run takes neither a time budget nor a byte cap.
    if card["seconds"] != json!(false) || card["bytes"] != json!(false) {
        return Err(format!("lab 8 offers a field its runs do not take: {card}"));
    }
    if !card["unit"].as_str().unwrap_or("").contains("(ns)") {
        return Err(format!("lab 8's prediction names its unit: {card}"));
    }
    let path = screenshot_element(client, root, "lab-latency-cpu").await?;
    println!("lab 8: tasks {ids:?}; {}", path.display());

    save_prediction(
        client,
        root,
        "r.querySelector('.pipebook-prediction-input').value = '2500';",
        "2500",
    )
    .await?;
    for (index, task) in ids.iter().enumerate() {
        run_lab_task(client, root, task, 6 * (index + 1)).await?;
    }
    let (checks, statuses) = lab_checks(client, root).await?;
    let detail = js(client, &queries::check_detail(root, "busy-faster")).await?;
    let detail = detail.as_str().unwrap_or_default().to_owned();
    // The busy-faster check compares two medians on its interval at a planned look: six
    // runs a side may leave it not resolved yet on a noisy machine.
    if statuses.len() != 4
        || statuses
            .iter()
            .any(|(_, s)| !["pass", "fail", "not_resolved"].contains(&s.as_str()))
        // The runner's interval at its first planned look (at that look's
        // share of the 5%), or its word that too few runs a side cannot reach it.
        || !(detail.contains("% rank-sum interval") && detail.contains("look 1 of 3")
            || detail.contains("cannot resolve at"))
    {
        return Err(format!(
            "lab 8's checks should all be judged: {checks}; {detail}"
        ));
    }
    let LabOutcome {
        verdict,
        head,
        rows,
        status,
        shown,
    } = lab_outcome(client, root).await?;
    if !(verdict.starts_with("You predicted 2500 ns; you measured ") && verdict.contains(" ns (")) {
        return Err(format!("lab 8's verdict: {shown}"));
    }
    for column in [
        "median",
        "99th percentile",
        "CPU per round trip",
        "sleeps per round trip",
    ] {
        if !head.iter().any(|h| h == column) {
            return Err(format!("lab 8's runs table lacks “{column}”: {shown}"));
        }
    }
    if head.iter().any(|h| h == "GiB/s") || rows != 13 {
        return Err(format!("lab 8's runs table: {shown}"));
    }
    if !status.contains("99th percentile") {
        return Err(format!(
            "lab 8's status names the last run's figures: {shown}"
        ));
    }
    js(client, &queries::scroll_to_top()).await?;
    let path = screenshot_element(client, root, "lab-latency-cpu-done").await?;
    println!("lab 8: checks {checks}, {verdict}; {}", path.display());
    Ok(())
}
