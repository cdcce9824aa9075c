//! The IPC card's "Count kernel events" switch: unchecked, the run leaves the
//! kernel's events uncounted (as `pipebench ipc --no-counts`), the card says
//! which counts were turned off, its command line carries `--no-counts`, and
//! the card is axe-core clean.

use serde_json::json;

use super::queries;
use super::{
    click, in_fresh_page, ipc_card_finished, js, open, require_chapter, screenshot_element,
    start_ipc_card, Page, TestResult,
};

/// A copy path whose ends would count wakeups: their absence is the switch's doing.
const CHAPTER: &str = "zero-copy-pipes";
const MECHANISM: &str = "pipe-rw";

#[tokio::test]
async fn an_ipc_card_can_turn_counting_off() {
    in_fresh_page("ipc-counts-off", run).await;
}

async fn run(page: &Page) -> TestResult {
    let client = &page.client;
    require_chapter(CHAPTER)?;
    open(client, &page.base, CHAPTER).await?;
    let root = format!(".pipebook-ipc[data-mechanism=\"{MECHANISM}\"]");
    // The switch is there, on by default; the test turns it off.
    let found = js(client, &queries::ipc_counts_box(&root)).await?;
    if found != json!(true) {
        return Err(format!(
            "{CHAPTER}.html's {MECHANISM} card has no counting switch checked by default: {found}"
        ));
    }
    // Unchecked by a click, as a reader would, then run as every IPC card is.
    click(client, &format!("{root} input.pipebook-ipc-counts")).await?;
    start_ipc_card(client, CHAPTER, MECHANISM, "4MiB").await?;
    let probe = queries::ipc_counts_off(&root);
    let last = ipc_card_finished(client, &probe).await?;
    if last["state"] != json!("done") {
        return Err(format!("the IPC card ended as {last}"));
    }
    if !last["command"]
        .as_str()
        .is_some_and(|c| c.contains("--no-counts"))
    {
        return Err(format!("the command line does not say --no-counts: {last}"));
    }
    // The card names the turned-off events (wakeups among them) and why.
    let missing: Vec<String> = last["missing"]
        .as_array()
        .map(|m| {
            m.iter()
                .filter_map(|t| t.as_str().map(str::to_lowercase))
                .collect()
        })
        .unwrap_or_default();
    if !missing
        .iter()
        .any(|t| t.contains("wakeups") && t.contains("turned off"))
    {
        return Err(format!(
            "the card does not say the wakeups were turned off: {last}"
        ));
    }
    // What costs nothing is still shown: the counts table is there.
    if last["counts"].as_array().map_or(0, Vec::len) < 2 {
        return Err(format!("no counts table after the run: {last}"));
    }
    crate::a11y::audit(client, &crate::a11y::axe_source(), "IPC card, counts off").await?;
    let path = screenshot_element(client, &root, "ipc-counts-off").await?;
    println!("ipc counts off: {missing:?}; {}", path.display());
    Ok(())
}
