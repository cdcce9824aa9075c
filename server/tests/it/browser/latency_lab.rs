//! Lab 8 from its page: two latency tasks (the pipes blocking and busy), no
//! seconds or byte cap to give, locked until the prediction is saved; then the
//! real runs, the checks judged, the runs table with the latency figures and
//! the prediction set beside the measured CPU time per round trip.

use std::time::Duration;

use serde_json::json;

use super::labs::{lab_checks, run_lab_task, save_prediction};
use super::{
    in_fresh_page, js, open, require_chapter, screenshot_element, wait_js, Page, TestResult,
};

const CHAPTER: &str = "lab-latency-cpu";

#[tokio::test]
async fn the_latency_lab_runs_its_tasks_and_weighs_the_prediction() {
    in_fresh_page("latency-lab", do_latency_lab).await;
}

async fn do_latency_lab(page: &Page) -> TestResult {
    let (client, base) = (&page.client, page.base.as_str());
    require_chapter(CHAPTER)?;
    let root = ".pipebook-lab[data-lab=\"latency-cpu\"]";
    open(client, base, CHAPTER).await?;
    let idle = format!("return document.querySelector('{root}')?.dataset.state === 'idle';");
    wait_js(client, &idle, Duration::from_secs(10), "lab 8's card").await?;
    let card = js(
        client,
        &format!(
            "const r = document.querySelector('{root}');
             r.scrollIntoView({{ block: 'start' }});
             return {{
               tasks: [...r.querySelectorAll('.pipebook-lab-tasks li[data-task]')].map((li) => ({{
                 task: li.dataset.task,
                 text: li.querySelector('code').textContent,
                 locked: li.querySelector('button.pipebook-lab-run').disabled,
               }})),
               seconds: !!r.querySelector('input.pipebook-seconds'),
               bytes: !!r.querySelector('.pipebook-lab-bytes'),
               unit: r.querySelector('.pipebook-lab-prediction label').textContent,
             }};"
        ),
    )
    .await?;
    let tasks = card["tasks"].as_array().cloned().unwrap_or_default();
    let ids: Vec<&str> = tasks.iter().filter_map(|t| t["task"].as_str()).collect();
    if ids != ["blocking", "busy"] {
        return Err(format!("lab 8's tasks are {ids:?}: {card}"));
    }
    for t in &tasks {
        let mode = t["task"].as_str().unwrap_or("?");
        let text = t["text"].as_str().unwrap_or("");
        if !text.starts_with(&format!(
            "latency pipe, {mode}, 64 B messages, 5000 round trips"
        )) {
            return Err(format!("lab 8's task reads {text:?}: {t}"));
        }
        if t["locked"] != json!(true) {
            return Err(format!("lab 8's run waits for a prediction: {t}"));
        }
    }
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
    for (index, task) in ["blocking", "busy"].iter().enumerate() {
        run_lab_task(client, root, task, 3 * (index + 1)).await?;
    }
    let (checks, statuses) = lab_checks(client, root).await?;
    if statuses.len() != 4 || statuses.iter().any(|(_, s)| s != "pass" && s != "fail") {
        return Err(format!("lab 8's checks should all be judged: {checks}"));
    }
    let shown = js(
        client,
        &format!(
            "const r = document.querySelector('{root}');
             return {{
               verdict: r.querySelector('.pipebook-lab-verdict').textContent,
               head: [...r.querySelectorAll('table.pipebook-lab-runs th')].map((th) => th.textContent),
               rows: r.querySelectorAll('table.pipebook-lab-runs tr').length,
               status: r.querySelector('.pipebook-lab-status').textContent,
             }};"
        ),
    )
    .await?;
    let verdict = shown["verdict"].as_str().unwrap_or("");
    if !(verdict.starts_with("You predicted 2500 ns; you measured ") && verdict.contains(" ns (")) {
        return Err(format!("lab 8's verdict: {shown}"));
    }
    let head: Vec<&str> = shown["head"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|h| h.as_str())
        .collect();
    for column in [
        "median",
        "99th percentile",
        "CPU per round trip",
        "sleeps per round trip",
    ] {
        if !head.contains(&column) {
            return Err(format!("lab 8's runs table lacks “{column}”: {shown}"));
        }
    }
    if head.contains(&"GiB/s") || shown["rows"] != json!(7) {
        return Err(format!("lab 8's runs table: {shown}"));
    }
    if !shown["status"]
        .as_str()
        .unwrap_or("")
        .contains("99th percentile")
    {
        return Err(format!(
            "lab 8's status names the last run's figures: {shown}"
        ));
    }
    js(client, "window.scrollTo(0, 0); return true;").await?;
    let path = screenshot_element(client, root, "lab-latency-cpu-done").await?;
    println!("lab 8: checks {checks}, {verdict}; {}", path.display());
    Ok(())
}
