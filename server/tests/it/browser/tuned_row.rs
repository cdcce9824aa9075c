//! A tuned step's own row in the results table: a search on the smallest budget
//! in the page, its best run again from the card it offers, and "Your machine"
//! then counts that run under `tuned-busy-loop`, named as the step tuned on this
//! machine, and not under the article's `busy-loop`. The card also says the best
//! found is kept for the runner's next start, and the tuned step's own card sets
//! it against `busy-loop` head to head until resolved, with its interval.

use std::time::Duration;

use serde_json::{json, Value};

use super::intervals::{check_stated, run_until, Stated};
use super::machine::{history_runs, result_rows, MACHINE_CHAPTER};
use super::past::{run_tuned_variant, search_on_smallest_budget, tuned_variant, TUNE_ROOT};
use super::queries;
use super::{in_fresh_page, js, open, require_chapter, screenshot_element, Page, TestResult};

const TUNED: &str = "tuned-busy-loop";
const BASE: &str = "busy-loop";

#[tokio::test]
async fn a_tuned_step_run_from_its_card_gets_its_own_row_in_the_results_table() {
    in_fresh_page("tuned-row", tuned_row).await;
}

fn runs(rows: &Value, step: &str) -> u64 {
    rows[step]["runs"].as_u64().unwrap_or(0)
}

async fn tuned_row(page: &Page) -> TestResult {
    require_chapter(MACHINE_CHAPTER)?;
    let (client, base) = (&page.client, page.base.as_str());
    open(client, base, MACHINE_CHAPTER).await?;
    let before = result_rows(page, BASE).await?;

    let root = TUNE_ROOT;
    let samples = search_on_smallest_budget(page, &queries::tune_best()).await?;
    let last = samples.last().cloned().unwrap_or_default();
    if last["state"] != json!("done") || last["best"] != json!(TUNED) {
        return Err(format!("the search ended as {last}"));
    }
    // The `saved {store: "tuned"}` follows the result: wait for the card to say it.
    let kept = queries::tune_kept(root)
        .wait(
            client,
            Duration::from_secs(10),
            "the card to say whether the best is kept",
        )
        .await?;
    if kept["kept"] != json!("yes")
        || !kept["text"]
            .as_str()
            .unwrap_or("")
            .contains("after a restart")
    {
        return Err(format!("the card does not say the best is kept: {kept}"));
    }

    // The offered card is the tuned step's own, not the article's.
    let variant = tuned_variant();
    let head = js(client, &queries::variant_heading(&variant)).await?;
    if head["step"] != json!(TUNED)
        || head["id"] != json!(TUNED)
        || !head["title"]
            .as_str()
            .unwrap_or("")
            .contains("tuned on this machine")
    {
        return Err(format!("the offered card is not the tuned step's: {head}"));
    }
    run_tuned_variant(page, &queries::run_state()).await?;

    // The variant's card sets it against its own step, not the baseline: two
    // quiet pairs head to head (the server runs the tuned side at its
    // search's sizes), the interval stated and drawn.
    let part = format!("{variant} .pipebook-baseline");
    run_until(
        client,
        &part,
        &format!("document.querySelector('{variant} input.pipebook-seconds').value = '0.5';"),
        "pipebook-baseline",
        6,
    )
    .await?;
    let stated = Stated::of(&part, "pipebook-baseline");
    let done = stated
        .ended(client, "", "the tuned step against its own step to end")
        .await?;
    check_stated(
        &done,
        &[TUNED, "busy-loop, its step's own configuration", "6 pairs"],
        "the tuned step against its own step",
    )?;
    if done["text"].as_str().unwrap_or("").contains("baseline") {
        return Err(format!("a tuned step is set against its own step: {done}"));
    }

    // Its runs (the card's one and the head-to-head's six) are counted in a row
    // of its own, named after the step it tunes; the search and these added to
    // the article step's row only the head-to-head's six runs of it. The
    // history has the runs once their `saved` came: wait for them there.
    let want = runs(&before, TUNED) + 7;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while history_runs(page, TUNED).await? < want {
        if std::time::Instant::now() > deadline {
            return Err(format!("the history never had {want} run(s) of {TUNED}"));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    open(client, base, MACHINE_CHAPTER).await?;
    let after = result_rows(page, BASE).await?;
    let row = &after[TUNED];
    if runs(&after, TUNED) != want {
        return Err(format!(
            "the tuned row should count seven more runs: before {}, after {row}",
            before[TUNED]
        ));
    }
    let name = row["name"].as_str().unwrap_or("");
    if !name.contains("tuned on this machine") || !name.contains(TUNED) {
        return Err(format!(
            "the tuned row is not named as the tuned step: {row}"
        ));
    }
    if row["best"] == json!("—") {
        return Err(format!("the tuned row has no figure: {row}"));
    }
    if runs(&after, BASE) != runs(&before, BASE) + 6 {
        return Err(format!(
            "{BASE}'s row should count the head-to-head's six runs only: before {}, after {}",
            before[BASE], after[BASE]
        ));
    }
    crate::a11y::audit(
        client,
        &crate::a11y::axe_source(),
        "results table with a tuned row",
    )
    .await?;
    js(client, &queries::scroll_to_results_row(TUNED)).await?;
    let path = screenshot_element(
        client,
        ".pipebook-results .pipebook-results-table",
        "results-tuned-row",
    )
    .await?;
    println!("tuned row: {row}; {}", path.display());
    Ok(())
}
