//! The "Your machine" chapter: the results table, and the machine panel with its
//! findings and the wakeup it measures on request.

use std::time::Duration;

use serde_json::Value;

use super::queries;
use super::run_card::{start_run, wait_until_done};
use super::{
    in_fresh_page, js, js_async, open, require_chapter, screenshot_element, Page, TestResult,
    RUN_CHAPTER, RUN_STEP,
};

pub(super) const MACHINE_CHAPTER: &str = "your-machine";

/// The results table's rows once it lists `step`: `{step: {runs, name, best}}`.
pub(super) async fn result_rows(page: &Page, step: &str) -> TestResult<Value> {
    queries::results_rows_listing(step)
        .wait(
            &page.client,
            Duration::from_secs(10),
            "the results table's rows",
        )
        .await
}

/// The results table's rows once its row of `step` counts more than `before` runs.
pub(super) async fn rows_once_more_runs(page: &Page, step: &str, before: u64) -> TestResult<Value> {
    queries::results_rows_beyond(step, before)
        .wait(
            &page.client,
            Duration::from_secs(10),
            "the results table to list the run",
        )
        .await
}

/// How many results of `step` the server's history holds, fetched by the page.
pub(super) async fn history_runs(page: &Page, step: &str) -> TestResult<u64> {
    let counted = js_async(&page.client, &queries::history_runs(step))
        .await
        .map_err(|e| format!("reading the history from the page: {e}"))?;
    counted
        .as_u64()
        .ok_or_else(|| format!("the history could not be read: {counted}"))
}

#[tokio::test]
async fn the_results_table_lists_a_run_made_from_the_page() {
    in_fresh_page("results-table", results_table).await;
}

#[tokio::test]
async fn the_machine_panel_leads_with_findings_and_measures_a_wakeup() {
    in_fresh_page("machine-panel", machine_panel).await;
}

/// A run made with the run card shows in the results table (the server's history
/// merged with what the page just finished): one more run of the step than the
/// history held before it.
async fn results_table(page: &Page) -> TestResult {
    let (client, base) = (&page.client, page.base.as_str());
    require_chapter(RUN_CHAPTER)?;
    require_chapter(MACHINE_CHAPTER)?;
    open(client, base, RUN_CHAPTER).await?;
    let before = history_runs(page, RUN_STEP).await?;
    start_run(client, "0.5").await?;
    wait_until_done(client, Duration::from_secs(90)).await?;
    open(client, base, MACHINE_CHAPTER).await?;
    let runs = rows_once_more_runs(page, RUN_STEP, before).await?[RUN_STEP]["runs"].clone();
    println!("results table: {RUN_STEP} has {runs} run(s), {before} before this test's");
    Ok(())
}

/// The machine report leads with its findings, each with its evidence; a wakeup
/// measured from the page queues like a run and adds its finding.
async fn machine_panel(page: &Page) -> TestResult {
    let (client, base) = (&page.client, page.base.as_str());
    require_chapter(MACHINE_CHAPTER)?;
    open(client, base, MACHINE_CHAPTER).await?;
    let findings = queries::system_findings()
        .wait(
            client,
            Duration::from_secs(10),
            "the machine's findings to be listed",
        )
        .await?;
    let ids = findings.to_string();
    if !ids.contains("kernel-") || !(ids.contains("virtualised") || ids.contains("bare-metal")) {
        return Err(format!(
            "the findings should cover the kernel and virtualisation: {ids}"
        ));
    }
    js(client, &queries::scroll_to_findings()).await?;
    // Measure a wakeup from the page: it queues like a run and adds its finding.
    js(client, &queries::click_wakeup()).await?;
    let measured = queries::wakeup_result()
        .wait(
            client,
            Duration::from_secs(60),
            "the wakeup measurement to finish",
        )
        .await?;
    let text = measured.as_str().unwrap_or("");
    if !text.starts_with("Round trip between CPUs") {
        return Err(format!(
            "the wakeup measurement did not report round trips: {measured}"
        ));
    }
    let path = screenshot_element(client, ".pipebook-system", "machine-findings").await?;
    println!("findings: {ids}; wakeup: {text}; {}", path.display());
    Ok(())
}
