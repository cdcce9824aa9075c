//! The compare card in "Your machine vs the article": two steps head to head in
//! quiet pairs, run until resolved on a small budget (the runner's sequential
//! design, which the card names and links to the chapter that explains it), the
//! runner's verdict in words and its interval drawn against 1.0; then "More
//! pairs" takes the same comparison up to the next look of its plan (its pairs
//! counted), after which the card says the verdict is final; axe-core clean
//! once done.

use std::time::Duration;

use super::queries;
use super::{in_fresh_page, js, open, require_chapter, screenshot_element, Page, TestResult};

const MACHINE_CHAPTER: &str = "your-machine";
const ROOT: &str = ".pipebook-compare[data-a=\"busy-loop\"][data-b=\"write-read\"]";

#[tokio::test]
async fn the_compare_card_resolves_a_comparison_on_a_small_budget() {
    in_fresh_page("compare-card", resolve).await;
}

/// busy-loop against write-read, 16 MiB a run, six pairs first (the fewest that
/// can resolve at 95%) and at most twelve: the runner resolves it and the card
/// says busy-loop is faster.
async fn resolve(page: &Page) -> TestResult {
    let (client, base) = (&page.client, page.base.as_str());
    require_chapter(MACHINE_CHAPTER)?;
    open(client, base, MACHINE_CHAPTER).await?;
    queries::card_idle(ROOT)
        .wait(client, Duration::from_secs(10), "the compare card")
        .await?;
    // The machine check is said before anything runs.
    let precheck = queries::compare_precheck(ROOT)
        .wait(client, Duration::from_secs(10), "the machine check")
        .await?;
    js(client, &queries::compare_start(ROOT)).await?;
    let done = queries::compare_verdict(ROOT)
        .wait(client, Duration::from_secs(120), "the comparison's verdict")
        .await?;
    if done.as_str().is_some_and(|s| s.starts_with("error")) {
        return Err(format!("the comparison failed: {done}"));
    }
    let sentence = done["sentence"].as_str().unwrap_or("");
    if done["verdict"] != "faster" || !sentence.contains("busy-loop is faster") {
        return Err(format!("busy-loop should resolve as faster: {done}"));
    }
    if done["drawn"] != true || done["label"].as_str() != Some(sentence) {
        return Err(format!(
            "the interval should be drawn, named by the verdict: {done}"
        ));
    }
    if done["design"] != "comparing-runs.html" {
        return Err(format!(
            "Run until resolved should name its design and link the chapter: {done}"
        ));
    }
    // More pairs: the same comparison goes on to the next look of its plan
    // (6, 9 and 12 pairs), its earlier pairs counted; after the last look the
    // card says the verdict is final and offers no more pairs.
    let before = done["status"].as_str().unwrap_or("").to_string();
    let earlier: u64 = before
        .strip_prefix("Done: ")
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| format!("the status should say how many pairs ran: {before}"))?;
    let offer = queries::compare_offer(ROOT);
    let offered = js(client, &offer).await?;
    if earlier < 12 {
        if offered["more"] != "More pairs (to 12, look 3 of 3)" || !offered["final"].is_null() {
            return Err(format!(
                "a verdict at {earlier} pairs should offer its last look: {offered}"
            ));
        }
        js(client, &queries::compare_more(ROOT)).await?;
        let more = queries::compare_taken_up(ROOT, &before)
            .wait(client, Duration::from_secs(120), "the comparison taken up")
            .await?;
        let expected = format!(
            "Done: 12 pairs of quiet runs ({earlier} taken up, {} new).",
            12 - earlier
        );
        if !more["status"].as_str().unwrap_or("").starts_with(&expected)
            || !more["sentence"]
                .as_str()
                .unwrap_or("")
                .contains("Look 3 of 3")
        {
            return Err(format!(
                "More pairs should take the comparison up to its last look, 12 pairs: {more}"
            ));
        }
    }
    let offered = js(client, &offer).await?;
    if !offered["more"].is_null()
        || !offered["final"].as_str().is_some_and(|f| {
            f.starts_with("This verdict is final: it took the last of its 3 planned looks")
        })
    {
        return Err(format!(
            "after the last look the card should say the verdict is final: {offered}"
        ));
    }
    let path = screenshot_element(client, ROOT, "compare-card-done").await?;
    let axe = crate::a11y::axe_source();
    crate::a11y::audit(client, &axe, "compare card done").await?;
    println!("compare card: {sentence} ({precheck}); {}", path.display());
    Ok(())
}
