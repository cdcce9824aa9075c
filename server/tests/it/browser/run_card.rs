//! The "Run this step" card: a run with the card's own controls, streamed live,
//! and the pipe's occupancy it draws afterwards.

use std::time::{Duration, Instant};

use fantoccini::{Client, Locator};
use serde_json::{json, Value};

use super::queries;
use super::{
    in_fresh_page, js, open, require_chapter, screenshot_element, Page, TestResult, RUN_CHAPTER,
    RUN_STEP,
};

/// The run card's root element.
fn card() -> String {
    format!(".pipebook-run[data-step=\"{RUN_STEP}\"]")
}

#[tokio::test]
async fn the_run_card_streams_progress_and_shows_the_result() {
    in_fresh_page("run-card", run_step).await;
}

#[tokio::test]
async fn the_run_card_draws_the_pipes_occupancy_after_a_run() {
    in_fresh_page("occupancy", async |page: &Page| {
        require_chapter(RUN_CHAPTER)?;
        open(&page.client, &page.base, RUN_CHAPTER).await?;
        start_run(&page.client, "1").await?;
        wait_until_done(&page.client, Duration::from_secs(90)).await?;
        check_occupancy(&page.client, &card()).await
    })
    .await;
}

/// Opens nothing: on the run chapter, checks the runner is online, types
/// `seconds` into the card's own control and clicks Run (which must be enabled).
pub(super) async fn start_run(client: &Client, seconds: &str) -> TestResult {
    let root = card();
    let online = js(client, &queries::ready_state()).await?;
    if online != json!("online") {
        return Err(format!(
            "the widgets say the runner is {online}, not online: is the token meta injected and /api/health up?"
        ));
    }
    // Clear of mdBook's sticky menu bar, as a reader would have it on screen.
    js(client, &queries::scroll_to_center(&root)).await?;
    let input = client
        .find(Locator::Css(&format!("{root} input.pipebook-seconds")))
        .await
        .map_err(|e| format!("{RUN_CHAPTER}.html has no widget for {RUN_STEP}: {e}"))?;
    input.clear().await.map_err(|e| e.to_string())?;
    input.send_keys(seconds).await.map_err(|e| e.to_string())?;
    let button = client
        .find(Locator::Css(&format!("{root} button.pipebook-run-button")))
        .await
        .map_err(|e| e.to_string())?;
    if button
        .attr("disabled")
        .await
        .map_err(|e| e.to_string())?
        .is_some()
    {
        return Err("the run button is disabled before a run".into());
    }
    button.click().await.map_err(|e| e.to_string())
}

/// Waits until the card's run ended as `done`; returns what the card shows.
pub(super) async fn wait_until_done(client: &Client, timeout: Duration) -> TestResult<Value> {
    let probe = queries::run_card(&card());
    let deadline = Instant::now() + timeout;
    loop {
        let s = js(client, &probe).await?;
        match s["state"].as_str() {
            Some("done") => return Ok(s),
            Some("error" | "cancelled") => {
                return Err(format!("the run ended as {}: {}", s["state"], s["status"]))
            }
            _ if Instant::now() > deadline => {
                return Err(format!(
                    "the run did not finish within {timeout:?}; last seen: {s}"
                ))
            }
            _ => tokio::time::sleep(Duration::from_millis(40)).await,
        }
    }
}

/// Runs the step with the widget's own controls and checks what the page shows.
async fn run_step(page: &Page) -> TestResult {
    let client = &page.client;
    require_chapter(RUN_CHAPTER)?;
    open(client, &page.base, RUN_CHAPTER).await?;
    let root = card();
    start_run(client, "1").await?;
    let probe = queries::run_card(&card());
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut saw_running = false;
    let mut max_live = 0.0f64;
    let mut shot_running = false;
    let last = loop {
        let s = js(client, &probe).await?;
        let state = s["state"].as_str().unwrap_or("").to_string();
        if state == "running" {
            saw_running = true;
            if !shot_running && s["progress"].as_f64().unwrap_or(0.0) >= 4.0 {
                shot_running = true;
                screenshot_element(client, &root, "widget-running").await?;
            }
            if s["runDisabled"] != json!(true) || s["cancelDisabled"] != json!(false) {
                return Err(format!(
                    "while running, Run should be disabled and Cancel enabled: {s}"
                ));
            }
            if let Some(v) = s["live"].as_str().and_then(|t| t.parse::<f64>().ok()) {
                max_live = max_live.max(v);
            }
        }
        if matches!(state.as_str(), "done" | "error" | "cancelled") {
            break s;
        }
        if Instant::now() > deadline {
            return Err(format!(
                "the run did not finish within 90 s; last seen: {s}"
            ));
        }
        tokio::time::sleep(Duration::from_millis(40)).await;
    };
    println!("run finished: {last}");
    if last["state"] != json!("done") {
        return Err(format!(
            "the run ended as {}: {}",
            last["state"], last["status"]
        ));
    }
    if !saw_running {
        return Err("the widget never showed the running state".into());
    }
    let progress = last["progress"].as_f64().unwrap_or(0.0);
    if progress < 1.0 {
        return Err(format!("no progress message reached the page: {last}"));
    }
    if max_live <= 0.0 {
        return Err("the live GiB/s never showed a positive figure".into());
    }
    let text = last["result"].as_str().unwrap_or("");
    let decimals = text.split('.').nth(1).map(str::len);
    let gibs: f64 = text
        .parse()
        .map_err(|_| format!("`.pipebook-result-gibs` is not a number: {text:?}"))?;
    if gibs <= 0.0 || decimals != Some(2) {
        return Err(format!(
            "`.pipebook-result-gibs` should be a positive figure with 2 decimals: {text:?}"
        ));
    }
    if last["runDisabled"] != json!(false) || last["cancelDisabled"] != json!(true) {
        return Err(format!(
            "after the run, Run should be enabled and Cancel disabled: {last}"
        ));
    }
    // The result is followed by whether the runner's history kept it.
    let saved_probe = queries::run_card_saved(&root);
    let saved = saved_probe
        .wait(client, Duration::from_secs(10), "the card's saved note")
        .await?;
    if saved["saved"] != json!("yes") || saved["hidden"] != json!(false) {
        return Err(format!("the card should say the result was saved: {saved}"));
    }
    let path = screenshot_element(client, &root, "widget-done").await?;
    println!(
        "{RUN_STEP}: {gibs} GiB/s after {progress} progress messages (live peak {max_live}); {}",
        path.display()
    );
    Ok(())
}

/// After a live run the card draws the pipe's occupancy: a band with points, the
/// capacity line named in slots, the legend and the summary.
async fn check_occupancy(client: &Client, root: &str) -> TestResult {
    let occ = js(client, &queries::occupancy(root)).await?;
    if occ.is_null() {
        return Err("the run card has no occupancy chart".into());
    }
    if occ["state"] != json!("done") || occ["points"].as_f64().unwrap_or(0.0) < 1.0 {
        return Err(format!(
            "the occupancy chart has no points after the run: {occ}"
        ));
    }
    if occ["bandPoints"].as_f64().unwrap_or(0.0) < 2.0
        || occ["height"].as_f64().unwrap_or(0.0) < 40.0
    {
        return Err(format!("the occupancy band is not drawn: {occ}"));
    }
    let capacity = occ["capacity"].as_str().unwrap_or("");
    if !capacity.contains("16 slots") {
        return Err(format!(
            "the capacity line should name the 16 slots of {RUN_STEP}'s pipe: {occ}"
        ));
    }
    if occ["legend"] != json!(3) || !occ["note"].as_str().unwrap_or("").starts_with("Full in ") {
        return Err(format!("the occupancy legend or summary is missing: {occ}"));
    }
    let path = screenshot_element(
        client,
        &format!("{root} figure.pipebook-occupancy"),
        "widget-occupancy",
    )
    .await?;
    println!("occupancy: {} points; {}", occ["points"], path.display());
    Ok(())
}
