//! The A/A card in "Comparing runs": write-read against itself, on a tiny
//! budget (two tries of 8 MiB runs, six quiet pairs each, through the runner's
//! queue). The card counts the runner's verdicts as they come: every "faster"
//! or "slower" is a false claim, since both sides are the same program. The
//! count it shows must be the count of the verdicts it lists; the chapter and
//! the finished card are axe-clean.

use std::time::Duration;

use serde_json::Value;

use super::queries;
use super::{in_fresh_page, js, open, require_chapter, screenshot_element, Page, TestResult};

const CHAPTER: &str = "comparing-runs";
const ROOT: &str = ".pipebook-aa[data-step=\"write-read\"]";

#[tokio::test]
async fn the_a_a_card_runs_a_step_against_itself_and_counts_the_false_claims() {
    in_fresh_page("aa-card", count_claims).await;
}

async fn count_claims(page: &Page) -> TestResult {
    let (client, base) = (&page.client, page.base.as_str());
    require_chapter(CHAPTER)?;
    open(client, base, CHAPTER).await?;
    queries::card_idle(ROOT)
        .wait(client, Duration::from_secs(10), "the A/A card")
        .await?;
    let axe = crate::a11y::axe_source();
    crate::a11y::audit(client, &axe, "comparing runs, card idle").await?;
    js(client, &queries::aa_start(ROOT)).await?;
    // While it runs, the status says where it is, politely, for a screen reader.
    let busy = queries::aa_busy(ROOT)
        .wait(client, Duration::from_secs(30), "the first try to start")
        .await?;
    if busy["live"] != "polite" || busy["stop"] != true {
        return Err(format!(
            "a running card should announce politely and offer Stop: {busy}"
        ));
    }
    let done = queries::aa_done(ROOT)
        .wait(
            client,
            Duration::from_secs(180),
            "two tries of write-read against itself",
        )
        .await?;
    if done.as_str().is_some_and(|s| s.starts_with("error")) {
        return Err(format!("the tries failed: {done}"));
    }
    check_count(&done)?;
    let path = screenshot_element(client, ROOT, "aa-card-done").await?;
    crate::a11y::audit(client, &axe, "comparing runs, card done").await?;
    println!(
        "A/A card: {} | {:?}; {}",
        done["count"],
        done["items"],
        path.display()
    );
    Ok(())
}

/// The card's count is the count of the runner's verdicts it lists: two tries,
/// each a verdict over six pairs, and as many claims as "faster" or "slower".
fn check_count(done: &Value) -> TestResult {
    let verdicts: Vec<&str> = done["verdicts"]
        .as_array()
        .map(|v| v.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let claimed = verdicts
        .iter()
        .filter(|v| matches!(**v, "faster" | "slower"))
        .count();
    let judged = verdicts.len() == 2
        && verdicts
            .iter()
            .all(|v| matches!(*v, "faster" | "slower" | "not_resolved"));
    let items_say_six = done["items"].as_array().is_some_and(|items| {
        items
            .iter()
            .all(|i| i.as_str().is_some_and(|t| t.contains("6 pairs")))
    });
    if !judged || !items_say_six || done["tries"] != 2 {
        return Err(format!(
            "two tries, each judged by the runner over six pairs: {done}"
        ));
    }
    let count = done["count"].as_str().unwrap_or("");
    let expected = format!(
        "{claimed} false claim{} in 2 tries",
        if claimed == 1 { "" } else { "s" }
    );
    if done["claims"] != claimed || !count.starts_with(&expected) {
        return Err(format!(
            "the count should be the listed verdicts' claims ({expected}): {done}"
        ));
    }
    if !done["status"].as_str().unwrap_or("").starts_with("Done: ") {
        return Err(format!("the status should say it is done: {done}"));
    }
    Ok(())
}
