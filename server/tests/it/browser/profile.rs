//! "Profile this step" on the run card: flame graphs drawn as images and the
//! article's profile beside this machine's, or the typed reason there is none.

use std::time::Duration;

use serde_json::json;

use super::queries;
use super::{
    in_fresh_page, js, open, require_chapter, screenshot_element, Page, TestResult, RUN_CHAPTER,
    RUN_STEP,
};

#[tokio::test]
async fn profile_this_step_draws_flame_graphs_beside_the_article() {
    in_fresh_page("profile", profile_step).await;
}

/// "Profile this step" on the baseline: a flame graph drawn as an image and the
/// article's profile beside this one (or, without perf, the reason).
async fn profile_step(page: &Page) -> TestResult {
    let client = &page.client;
    require_chapter(RUN_CHAPTER)?;
    open(client, &page.base, RUN_CHAPTER).await?;
    let root = format!(".pipebook-run[data-step=\"{RUN_STEP}\"]");
    js(client, &queries::profile_start(&root)).await?;
    let probe = queries::profile_done(&root);
    probe
        .wait(client, Duration::from_secs(60), "the profile")
        .await?;
    // Let the images decode before the picture is taken.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let seen = js(client, &probe).await?;
    let path = screenshot_element(client, &format!("{root} .pipebook-profile"), "profile").await?;
    println!("profile: {seen}; {}", path.display());
    if !pipebench::profile::perf_installed() {
        return match seen["state"].as_str() {
            Some("unavailable") if seen["notes"] == json!(["not_installed"]) => Ok(()),
            _ => Err(format!("without perf the card must say why: {seen}")),
        };
    }
    if seen["state"] != json!("done") {
        return Err(format!("the profile did not come: {seen}"));
    }
    let images = seen["images"].as_array().cloned().unwrap_or_default();
    if images.len() != 2 || images.iter().any(|i| i["loaded"] != json!(true)) {
        return Err(format!("both flame graphs should load as images: {seen}"));
    }
    if seen["compare"] != json!(6) {
        return Err(format!(
            "the article's six write-read functions should be listed: {seen}"
        ));
    }
    Ok(())
}
