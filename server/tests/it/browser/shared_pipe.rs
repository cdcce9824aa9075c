//! The shared-pipe card on small sizes: two writers and two readers on one
//! pipe at two message sizes at or below PIPE_BUF, each point profiled; it
//! runs, draws each point with what every writer got through and the ends'
//! context switches, tears no message, shows each point's profile (the
//! writers' and readers' flame graphs, or why there is none), and passes
//! axe-core.

use std::time::Duration;

use serde_json::{json, Value};

use super::past::{click_and_sample, CHAPTER};
use super::queries;
use super::{in_fresh_page, js, open, require_chapter, screenshot_element, Page, TestResult};

#[tokio::test]
async fn the_shared_pipe_card_draws_per_writer_totals_and_tears_nothing() {
    in_fresh_page("shared-pipe-card", shared_card).await;
}

async fn shared_card(page: &Page) -> TestResult {
    require_chapter(CHAPTER)?;
    open(&page.client, &page.base, CHAPTER).await?;
    let root = ".pipebook-shared-pipe";
    let probe = queries::shared_pipe_card(root);
    // Two points of 16 MiB each (the runner's default per point).
    let samples = click_and_sample(
        page,
        root,
        "r.querySelector('input.pipebook-shared-writers').value = '2';
         r.querySelector('input.pipebook-shared-readers').value = '2';
         r.querySelector('input.pipebook-shared-sizes').value = '4KiB,1KiB';
         r.querySelector('input.pipebook-shared-profile').checked = true;",
        "button.pipebook-shared-button",
        Duration::from_secs(120),
        &probe,
    )
    .await?;
    let last = samples.last().cloned().unwrap_or_default();
    if last["state"] != json!("done") || last["points"] != json!(2) {
        return Err(format!("the shared-pipe card ended as {last}"));
    }
    if last["torn"] != json!("0") {
        return Err(format!("a message at or below PIPE_BUF was torn: {last}"));
    }
    let rows = last["rows"].as_array().cloned().unwrap_or_default();
    if rows.len() != 2 {
        return Err(format!("a row per point: {last}"));
    }
    for row in &rows {
        let cells: Vec<&str> = row
            .as_array()
            .map(|c| c.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        // writers, readers, message, GiB/s, received per writer, torn, sleeps,
        // context switches, wakeups, totals add up
        let [writers, readers, message, _gib, per_writer, torn, _sleeps, switches, _wakeups, adds_up] =
            cells[..]
        else {
            return Err(format!("a point's row has 10 cells: {row}"));
        };
        // Context switches are counted for any user: a figure a side.
        let sides: Vec<&str> = switches.split(" / ").collect();
        if sides.len() != 2
            || sides
                .iter()
                .any(|s| s.parse::<u64>().is_err() && !s.contains(','))
        {
            return Err(format!(
                "each side's context switches should be drawn: {row}"
            ));
        }
        if writers != "2" || readers != "2" || !message.contains("PIPE_BUF") {
            return Err(format!("the row does not say its point: {row}"));
        }
        // One total per writer, each something.
        let totals: Vec<&str> = per_writer.split(", ").collect();
        if totals.len() != 2
            || totals
                .iter()
                .any(|t| t.trim().is_empty() || t.starts_with("0 "))
        {
            return Err(format!("each writer's total should be drawn: {row}"));
        }
        if torn != "0" || adds_up != "yes" {
            return Err(format!("torn messages or totals that do not add up: {row}"));
        }
    }
    if !last["status"]
        .as_str()
        .unwrap_or("")
        .contains("0 torn messages")
    {
        return Err(format!("the status does not say nothing was torn: {last}"));
    }
    // A profile per point, just as the runner sent them: both sides' flame
    // graphs where perf samples here, else the reason, said per point.
    if pipebench::profile::perf_installed() && crate::common::perf_can_sample() {
        let flames = last["flames"].as_array().cloned().unwrap_or_default();
        if last["profilePoints"] != json!(2)
            || last["profiles"] != json!(2)
            || flames.len() != 4
            || flames.iter().filter(|r| *r == "writers").count() != 2
        {
            return Err(format!(
                "each point's writers' and readers' flame graphs: {last}"
            ));
        }
    } else if last["why"].as_array().is_none_or(|w| w.is_empty()) {
        return Err(format!("no profile, and no reason said: {last}"));
    }
    js(&page.client, &queries::open_profile_point(root)).await?;
    crate::a11y::audit(
        &page.client,
        &crate::a11y::axe_source(),
        "shared-pipe card done",
    )
    .await?;
    let path = screenshot_element(&page.client, root, "shared-pipe-done").await?;
    println!("shared-pipe card: {last}; {}", path.display());
    Ok(())
}
