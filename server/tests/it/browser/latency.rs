//! The latency lab's cards: one mechanism timed from its chapter with the
//! distribution drawn as it fills, and the matrix that times every mechanism.

use std::time::{Duration, Instant};

use fantoccini::Locator;
use serde_json::json;

use super::queries::{self, Query};
use super::{in_fresh_page, js, open, require_chapter, screenshot_element, Page, TestResult};

const CHAPTER: &str = "latency";

#[tokio::test]
async fn a_latency_card_times_round_trips_and_draws_their_distribution() {
    in_fresh_page("latency-card", run_card).await;
}

#[tokio::test]
async fn the_latency_matrix_times_every_mechanism() {
    in_fresh_page("latency-matrix", run_matrix).await;
}

/// Sets the card's inputs, clicks its button and waits for its end state.
async fn click_and_wait(
    page: &Page,
    root: &str,
    setup: &str,
    limit: Duration,
    probe: &Query,
) -> Result<serde_json::Value, String> {
    let client = &page.client;
    js(client, &queries::latency_setup(root, setup))
        .await?
        .as_bool()
        .filter(|found| *found)
        .ok_or_else(|| format!("{CHAPTER}.html has no runnable {root}"))?;
    client
        .find(Locator::Css(&format!(
            "{root} button.pipebook-latency-button"
        )))
        .await
        .map_err(|e| e.to_string())?
        .click()
        .await
        .map_err(|e| e.to_string())?;
    let deadline = Instant::now() + limit;
    loop {
        let s = js(client, probe).await?;
        if matches!(s["state"].as_str(), Some("done" | "error" | "cancelled")) {
            return Ok(s);
        }
        if Instant::now() > deadline {
            return Err(format!("{root} did not finish within {limit:?}: {s}"));
        }
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
}

async fn run_card(page: &Page) -> TestResult {
    require_chapter(CHAPTER)?;
    open(&page.client, &page.base, CHAPTER).await?;
    let root = ".pipebook-latency[data-mechanism=\"pipe\"]";
    let probe = queries::latency_card(root);
    let last = click_and_wait(
        page,
        root,
        "r.querySelector('input.pipebook-latency-trips').value = '2000';
         r.querySelector('input.pipebook-latency-size').value = '64';",
        Duration::from_secs(60),
        &probe,
    )
    .await?;
    if last["state"] != json!("done") {
        return Err(format!("the latency card ended as {last}"));
    }
    let (p50, p99) = (
        last["p50"].as_f64().unwrap_or(0.0),
        last["p99"].as_f64().unwrap_or(0.0),
    );
    if !(p50 > 0.0 && p50 <= p99) {
        return Err(format!("the card's percentiles are not in order: {last}"));
    }
    // The distribution was drawn from the runner's progress: bars on the page.
    if last["progress"].as_u64().is_none_or(|n| n < 1)
        || last["rects"].as_u64().is_none_or(|n| n < 1)
    {
        return Err(format!("the card drew no distribution: {last}"));
    }
    let cells = last["cells"].to_string();
    for needle in [
        "p50",
        "p99.9",
        "2000",
        "CPU per round trip",
        "sleeps per round trip",
    ] {
        if !cells.contains(needle) {
            return Err(format!("the latency table lacks {needle:?}: {cells}"));
        }
    }
    let path = screenshot_element(&page.client, root, "latency-done").await?;
    println!("latency card: {last}; {}", path.display());
    Ok(())
}

async fn run_matrix(page: &Page) -> TestResult {
    require_chapter(CHAPTER)?;
    open(&page.client, &page.base, CHAPTER).await?;
    let root = ".pipebook-latency-matrix";
    let probe = queries::latency_matrix(root);
    let last = click_and_wait(
        page,
        root,
        "r.querySelector('input.pipebook-latency-trips').value = '200';",
        Duration::from_secs(180),
        &probe,
    )
    .await?;
    // Every mechanism in each mode it has and this kernel allows (the ring is
    // busy only; io_uring may be switched off): the configurations that check.
    let runnable = runnable_at_64_bytes();
    if last["state"] != json!("done")
        || last["rows"] != json!(runnable)
        || last["table"] != json!(runnable + 1)
    {
        return Err(format!("the latency matrix ended as {last}"));
    }
    if last["rects"].as_u64().is_none_or(|n| n < 1) {
        return Err(format!("the matrix drew no distribution: {last}"));
    }
    // Its order is one run of each, and it says how little that settles.
    let note = last["note"].as_str().unwrap_or("");
    if !(note.starts_with("One run of each configuration")
        && note.contains("on its interval at looks planned in advance"))
    {
        return Err(format!(
            "the matrix should say its order is one run each: {last}"
        ));
    }
    let path = screenshot_element(&page.client, root, "latency-matrix-done").await?;
    println!("latency matrix: {last}; {}", path.display());
    Ok(())
}

/// The configurations at 64 bytes this machine can run, as the engine checks them.
fn runnable_at_64_bytes() -> usize {
    use pipebench::latency::{default_cpus, LatencyConfig, LatencyMechanism, Mode};
    LatencyMechanism::ALL
        .into_iter()
        .flat_map(|mechanism| [Mode::Blocking, Mode::Busy].map(|mode| (mechanism, mode)))
        .filter(|&(mechanism, mode)| {
            LatencyConfig {
                mechanism,
                mode,
                size: 64,
                cpus: default_cpus(),
                round_trips: 200,
            }
            .check()
            .is_ok()
        })
        .count()
}
