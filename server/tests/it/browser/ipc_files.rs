//! The single-process file experiments' cards in "Files: mmap, Direct IO and
//! copy-on-write": `copy_file_range` copies a file inside the kernel and its
//! card shows the verified copy; a reflink (`ioctl(FICLONE)`) either shares the
//! blocks, on a file system that can, or its card says why this one cannot.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::queries;
use super::{
    in_fresh_page, js, open, require_chapter, screenshot_element, start_ipc_card, Page, TestResult,
};

const CHAPTER: &str = "zero-copy-files";

#[tokio::test]
async fn the_copy_file_range_and_reflink_cards_run_or_say_why_not() {
    in_fresh_page("ipc-files", run).await;
}

/// Types `bytes` into the card of `mechanism`, clicks Run, and returns the
/// card's state, rate, checksum and status once it has ended.
async fn run_card(page: &Page, mechanism: &str, bytes: &str) -> Result<Value, String> {
    let client = &page.client;
    let root = start_ipc_card(client, CHAPTER, mechanism, bytes).await?;
    let probe = queries::ipc_files_card(&root);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let s = js(client, &probe).await?;
        if matches!(s["state"].as_str(), Some("done" | "error" | "cancelled")) {
            screenshot_element(client, &root, &format!("ipc-files-{mechanism}")).await?;
            return Ok(s);
        }
        if Instant::now() > deadline {
            return Err(format!(
                "the {mechanism} card did not finish within 60 s: {s}"
            ));
        }
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
}

async fn run(page: &Page) -> TestResult {
    require_chapter(CHAPTER)?;
    open(&page.client, &page.base, CHAPTER).await?;
    // copy_file_range works on every local file system: the copy is read back.
    let copy = run_card(page, "copy-file-range", "8MiB").await?;
    if copy["state"] != json!("done")
        || copy["checksum"] != json!("ok")
        || !copy["mibs"].as_f64().is_some_and(|m| m > 0.0)
    {
        return Err(format!("the copy_file_range card ended as {copy}"));
    }
    // A reflink needs a file system that shares blocks (btrfs, xfs with
    // reflink=1): where the runner's folder is on one, the clone is verified;
    // elsewhere the card must say which file system refused and what to use.
    let clone = run_card(page, "ficlone", "8MiB").await?;
    let status = clone["status"].as_str().unwrap_or("");
    let verified = clone["state"] == json!("done") && clone["checksum"] == json!("ok");
    let explained = clone["state"] == json!("error")
        && status.contains("cannot share blocks")
        && status.contains("btrfs");
    if !(verified || explained) {
        return Err(format!("the reflink card ended as {clone}"));
    }
    println!("ipc files: copy_file_range {copy}; ficlone {clone}");
    Ok(())
}
