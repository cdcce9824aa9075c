//! Past the article's cards: the tuning card searches on a small budget and
//! draws its heat map while it runs, then offers the best configuration as a
//! run card of its own; the tool card runs a program of the runner's table and
//! shows the bytes pipebench's end verified.

use std::time::{Duration, Instant};

use fantoccini::Locator;
use serde_json::{json, Value};

use super::queries::{self, Query};
use super::{in_fresh_page, js, open, require_chapter, screenshot_element, Page, TestResult};

pub(super) const CHAPTER: &str = "past-the-article";

/// The chapter's tuning card.
pub(super) const TUNE_ROOT: &str = ".pipebook-tune[data-step=\"busy-loop\"]";

/// Opens the chapter and runs its tuning card's search on the smallest budget
/// (one configuration and the step's own, six runs), sampling `probe` (a
/// script body that sees the card as `r` and returns an object with at least
/// its `state`) until the search ends; every sample is kept.
pub(super) async fn search_on_smallest_budget(
    page: &Page,
    probe: &Query,
) -> Result<Vec<Value>, String> {
    search_on_budget(page, 2, probe).await
}

/// [`search_on_smallest_budget`] with a budget of `seconds`.
pub(super) async fn search_on_budget(
    page: &Page,
    seconds: u32,
    probe: &Query,
) -> Result<Vec<Value>, String> {
    require_chapter(CHAPTER)?;
    open(&page.client, &page.base, CHAPTER).await?;
    click_and_sample(
        page,
        TUNE_ROOT,
        &format!("r.querySelector('input.pipebook-tune-budget').value = '{seconds}';"),
        "button.pipebook-tune-button",
        Duration::from_secs(240),
        &queries::on(TUNE_ROOT, probe),
    )
    .await
}

/// The tuned step's run card the finished search offers.
pub(super) fn tuned_variant() -> String {
    format!("{TUNE_ROOT} .pipebook-tune-variant .pipebook-run")
}

/// Runs the offered tuned step for a second from its own card, sampling
/// `probe` (as for [`search_on_smallest_budget`], `r` being the run card);
/// its last sample, once the run is done.
pub(super) async fn run_tuned_variant(page: &Page, probe: &Query) -> Result<Value, String> {
    let variant = tuned_variant();
    let runs = click_and_sample(
        page,
        &variant,
        "r.querySelector('input.pipebook-seconds').value = '1';",
        "button.pipebook-run-button",
        Duration::from_secs(60),
        &queries::on(&variant, probe),
    )
    .await?;
    let end = runs.last().cloned().unwrap_or_default();
    if end["state"] != json!("done") {
        return Err(format!("the tuned step's run ended as {end}"));
    }
    Ok(end)
}

#[tokio::test]
async fn the_tuning_card_draws_its_search_and_offers_the_best_as_a_step() {
    in_fresh_page("tune-card", tune_card).await;
}

#[tokio::test]
async fn the_tool_card_runs_a_tool_and_shows_the_verified_bytes() {
    in_fresh_page("tool-card", tool_card).await;
}

/// Runs `setup` on the card `root`, clicks `button`, and samples `probe` until
/// the card ends; every sample is kept (the heat map is checked while it runs).
pub(super) async fn click_and_sample(
    page: &Page,
    root: &str,
    setup: &str,
    button: &str,
    limit: Duration,
    probe: &Query,
) -> Result<Vec<Value>, String> {
    let client = &page.client;
    // The tool card fills its list from the runner first: wait for its button.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let ready = js(client, &queries::past_setup(root, button, setup)).await?;
        if ready == json!(true) {
            break;
        }
        if Instant::now() > deadline {
            return Err(format!("{CHAPTER}.html has no runnable {root}"));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    client
        .find(Locator::Css(&format!("{root} {button}")))
        .await
        .map_err(|e| e.to_string())?
        .click()
        .await
        .map_err(|e| e.to_string())?;
    let deadline = Instant::now() + limit;
    let mut samples = Vec::new();
    loop {
        let s = js(client, probe).await?;
        let end = matches!(s["state"].as_str(), Some("done" | "error" | "cancelled"));
        samples.push(s);
        if end {
            return Ok(samples);
        }
        if Instant::now() > deadline {
            return Err(format!(
                "{root} did not finish within {limit:?}: {:?}",
                samples.last()
            ));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn tune_card(page: &Page) -> TestResult {
    let root = TUNE_ROOT;
    // Four seconds afford three configurations: busy-loop's writer vmsplices,
    // so the first sizes with its buffers in huge pages and in small ones.
    let samples = search_on_budget(page, 4, &queries::tune_search()).await?;
    let last = samples.last().cloned().unwrap_or_default();
    if last["state"] != json!("done") {
        return Err(format!("the tuning card ended as {last}"));
    }
    // While it ran, the map already had measured cells before the last run ended.
    let live = samples.iter().any(|s| {
        s["state"] == json!("running")
            && s["measured"].as_u64().is_some_and(|n| n >= 1)
            && s["trials"].as_u64() < last["trials"].as_u64()
    });
    if !live {
        return Err(format!(
            "the heat map was never drawn while the search ran: {samples:?}"
        ));
    }
    let cells = last["cells"].as_u64().unwrap_or(0);
    if cells < 1 || last["measured"].as_u64() != Some(cells) {
        return Err(format!(
            "every configuration should be measured at the end: {last}"
        ));
    }
    // One map per setting of the writer's pages, each named.
    if last["maps"] != json!(["huge", "small"])
        || last["captions"].as_array().map(Vec::len) != Some(2)
    {
        return Err(format!("a heat map per page setting: {last}"));
    }
    // A row per configuration, the step's own and the header.
    if last["rows"].as_u64() != Some(cells + 2) {
        return Err(format!("the table does not list the search: {last}"));
    }
    if last["best"] != json!("tuned-busy-loop") || last["variant"] != json!("tuned-busy-loop") {
        return Err(format!("the best is not offered as its own step: {last}"));
    }
    if !last["summary"]
        .as_str()
        .unwrap_or("")
        .contains("per call into a")
    {
        return Err(format!("the card does not say what it found: {last}"));
    }
    // The finished card (heat map, table, the tuned step's card) passes axe-core.
    crate::a11y::audit(&page.client, &crate::a11y::axe_source(), "tuning card done").await?;
    let path = screenshot_element(&page.client, root, "tune-done").await?;
    println!("tuning card: {last}; {}", path.display());

    // The best runs again from its own card, under its own id.
    run_tuned_variant(page, &queries::run_figure()).await?;
    Ok(())
}

async fn tool_card(page: &Page) -> TestResult {
    require_chapter(CHAPTER)?;
    open(&page.client, &page.base, CHAPTER).await?;
    let root = ".pipebook-tool";
    let probe = queries::tool_card(root);
    let samples = click_and_sample(
        page,
        root,
        "const s = r.querySelector('select.pipebook-tool-select');
         s.value = 'cat'; s.dispatchEvent(new Event('change'));
         r.querySelector('select.pipebook-tool-side').value = 'writer';
         r.querySelector('input.pipebook-tool-bytes').value = '8MiB';",
        "button.pipebook-tool-button",
        Duration::from_secs(60),
        &probe,
    )
    .await?;
    let last = samples.last().cloned().unwrap_or_default();
    if last["state"] != json!("done") || last["bytes"] != json!(8 << 20) {
        return Err(format!("the tool card ended as {last}"));
    }
    let table = last["table"].to_string();
    for needle in [
        "Bytes verified by pipebench's end",
        "8,388,608",
        "Throughput",
        "Data calls on the pipe",
        "cat",
        // The tool's own counts, read under its end's name.
        "The tool's kernel counts",
        "context switches",
    ] {
        if !table.contains(needle) {
            return Err(format!("the tool result lacks {needle:?}: {table}"));
        }
    }
    crate::a11y::audit(&page.client, &crate::a11y::axe_source(), "tool card done").await?;
    let path = screenshot_element(&page.client, root, "tool-done").await?;
    println!("tool card: {last}; {}", path.display());
    Ok(())
}
