//! The IPC card's "What the kernel did": after a real run, each end's bytes per
//! data call, and the chapter's predictions judged against the ends' counts.

use serde_json::{json, Value};

use super::queries;
use super::{
    in_fresh_page, ipc_card_finished, open, require_chapter, screenshot_element, start_ipc_card,
    Page, TestResult,
};

/// The chapter and mechanism: a copy path, whose ends make read and write calls
/// and whose queue (the pipe) puts them to sleep.
const CHAPTER: &str = "zero-copy-pipes";
const MECHANISM: &str = "pipe-rw";

#[tokio::test]
async fn an_ipc_card_shows_calls_and_the_chapters_predictions_judged() {
    in_fresh_page("ipc-model", run).await;
}

async fn run(page: &Page) -> TestResult {
    let client = &page.client;
    require_chapter(CHAPTER)?;
    open(client, &page.base, CHAPTER).await?;
    let root = start_ipc_card(client, CHAPTER, MECHANISM, "16MiB").await?;
    let probe = queries::ipc_model(&root);
    let last = ipc_card_finished(client, &probe).await?;
    if last["state"] != json!("done") {
        return Err(format!("the IPC card ended as {last}"));
    }
    // Bytes per call: both ends read and write the card's 64 KiB chunks.
    let per_call = last["counts"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r[0] == json!("bytes per data call")))
        .ok_or_else(|| format!("no bytes-per-call row: {last}"))?;
    if per_call[1] != json!("64.0 KiB") && per_call[1] != json!("63.9 KiB")
        || per_call[2] != json!("64.0 KiB") && per_call[2] != json!("63.9 KiB")
    {
        return Err(format!(
            "bytes per call are not the 64 KiB chunks: {per_call}"
        ));
    }
    // The chapter's predictions for a copy path with a blocking queue, each
    // judged on this run; on this machine each holds.
    let model = last["model"].as_array().cloned().unwrap_or_default();
    let ids: Vec<&str> = model.iter().filter_map(|m| m["id"].as_str()).collect();
    for id in [
        "producer_call_bytes",
        "consumer_call_bytes",
        "producer_sleeps",
        "consumer_sleeps",
    ] {
        if !ids.contains(&id) {
            return Err(format!("the card does not judge {id}: {model:?}"));
        }
    }
    let not_holding: Vec<&Value> = model.iter().filter(|m| m["verdict"] != "agrees").collect();
    if !not_holding.is_empty()
        || !model
            .iter()
            .all(|m| m["cells"][3].as_str().is_some_and(|t| t == "Holds"))
    {
        return Err(format!("a prediction does not hold here: {model:?}"));
    }
    let path = screenshot_element(client, &root, "ipc-model").await?;
    println!(
        "ipc model: {} predictions hold; {}",
        model.len(),
        path.display()
    );
    Ok(())
}
