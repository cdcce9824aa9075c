//! The sweep card: one step over several pipe sizes, its curve growing a point
//! per value as the runs come back.

use std::time::{Duration, Instant};

use fantoccini::Locator;
use serde_json::json;

use super::queries;
use super::{
    in_fresh_page, js, open, require_chapter, screenshot_element, Page, TestResult, RUN_CHAPTER,
};

#[tokio::test]
async fn a_sweep_grows_its_curve_point_by_point() {
    in_fresh_page("sweep", run_sweep).await;
}

/// Runs a small sweep from the page and watches the curve grow point by point.
async fn run_sweep(page: &Page) -> TestResult {
    let client = &page.client;
    require_chapter(RUN_CHAPTER)?;
    open(client, &page.base, RUN_CHAPTER).await?;
    let root = ".pipebook-sweep[data-step=\"write-read\"][data-param=\"pipe_size\"]";
    js(client, &queries::sweep_fill(root))
        .await?
        .as_bool()
        .filter(|found| *found)
        .ok_or_else(|| format!("{RUN_CHAPTER}.html has no pipe_size sweep of write-read"))?;
    client
        .find(Locator::Css(&format!(
            "{root} button.pipebook-sweep-button"
        )))
        .await
        .map_err(|e| e.to_string())?
        .click()
        .await
        .map_err(|e| e.to_string())?;
    let probe = queries::sweep_card(root);
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut seen = Vec::new();
    let last = loop {
        let s = js(client, &probe).await?;
        let points = s["points"].as_u64().unwrap_or(0);
        if seen.last() != Some(&points) {
            seen.push(points);
            if points == 1 {
                screenshot_element(client, root, "sweep-growing").await?;
            }
        }
        let state = s["state"].as_str().unwrap_or("").to_string();
        if matches!(state.as_str(), "done" | "error" | "cancelled") {
            break s;
        }
        if Instant::now() > deadline {
            return Err(format!("the sweep did not finish within 60 s: {s}"));
        }
        tokio::time::sleep(Duration::from_millis(30)).await;
    };
    if last["state"] != json!("done") {
        return Err(format!(
            "the sweep ended as {}: {}",
            last["state"], last["status"]
        ));
    }
    // The curve grew one point at a time, to one point per value, all drawn.
    if seen != [0, 1, 2, 3] {
        return Err(format!(
            "the curve should grow 0, 1, 2, 3 points; it went {seen:?}"
        ));
    }
    if last["drawn"] != json!(3) || last["dots"] != json!(3) || last["rows"] != json!(4) {
        return Err(format!(
            "the finished sweep should draw 3 points and list 3 rows: {last}"
        ));
    }
    let path = screenshot_element(client, root, "sweep-done").await?;
    println!("sweep: points {seen:?}; {}", path.display());
    Ok(())
}
