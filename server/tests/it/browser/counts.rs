//! "What the kernel did": the counts table a run card shows after a run, and the
//! steps compared by their counts in "Your machine vs the article".

use std::time::Duration;

use serde_json::Value;

use super::queries;
use super::run_card::{start_run, wait_until_done};
use super::{
    in_fresh_page, js, open, require_chapter, screenshot_element, Page, TestResult, RUN_CHAPTER,
    RUN_STEP,
};

const MACHINE_CHAPTER: &str = "your-machine";

#[tokio::test]
async fn a_run_card_shows_what_the_kernel_did_and_the_results_chapter_compares_steps() {
    in_fresh_page("kernel-counts", kernel_counts).await;
}

/// A number as the tables write it ("4,096", "0.875").
fn figure(text: &Value) -> Option<f64> {
    text.as_str()?.replace(',', "").parse().ok()
}

async fn kernel_counts(page: &Page) -> TestResult {
    let (client, base) = (&page.client, page.base.as_str());
    require_chapter(RUN_CHAPTER)?;
    require_chapter(MACHINE_CHAPTER)?;
    open(client, base, RUN_CHAPTER).await?;
    start_run(client, "1").await?;
    wait_until_done(client, Duration::from_secs(90)).await?;
    let root = format!(".pipebook-run[data-step=\"{RUN_STEP}\"]");
    let table = queries::kernel_counts_table(&root)
        .wait(client, Duration::from_secs(10), "the card's counts table")
        .await?;
    println!("counts table: {table}");
    if !table["caption"]
        .as_str()
        .is_some_and(|c| c.contains("What the kernel did"))
    {
        return Err(format!("the counts table has no caption: {table}"));
    }
    let scoped = |key: &str, scope: &str| {
        table[key]
            .as_array()
            .is_some_and(|a| !a.is_empty() && a.iter().all(|s| s == scope))
    };
    if !scoped("cols", "col") || !scoped("rows", "row") {
        return Err(format!("every header cell needs its scope: {table}"));
    }
    // write-read writes 256 KiB a call: 4096 calls per GiB, whatever the machine.
    let calls = figure(&table["writerCallsPerGib"])
        .ok_or_else(|| format!("no writer data calls per GiB: {table}"))?;
    if (calls - 4096.0).abs() > 4096.0 * 0.01 {
        return Err(format!(
            "the writer should make 4096 write calls per GiB, the card shows {calls}"
        ));
    }
    if figure(&table["readerCallsPerCall"]) != Some(1.0) {
        return Err(format!(
            "the reader's data calls per data call must read 1: {table}"
        ));
    }
    let model = table["model"].as_array().cloned().unwrap_or_default();
    if !model.iter().any(|m| m[0] == "reads_per_write") {
        return Err(format!(
            "the model's reads per write is not beside the counts: {table}"
        ));
    }
    // Page allocations are counted where the kernel permits it; otherwise the card
    // says why, and the model's verdict is "unknown", not a guess.
    match figure(&table["allocsPerGib"]) {
        Some(allocs) if allocs > 0.0 => {}
        Some(allocs) => return Err(format!("write-read allocated {allocs} pages per GiB")),
        None => {
            let said = table["missing"].as_array().is_some_and(|m| {
                m.iter()
                    .any(|r| r[1].as_str().is_some_and(|t| t.contains("pages allocated")))
            });
            if !said {
                return Err(format!(
                    "page allocations are neither shown nor said to be missing: {table}"
                ));
            }
        }
    }
    screenshot_element(client, &root, "widget-kernel-counts").await?;

    // A plain run left the kernel's events out, on request: ticked, the box
    // the card names for them traces them, the pages are counted where the
    // kernel permits it (else the card says why), and the figure says that
    // tracing slowed it.
    let ticked = js(client, &queries::tick_trace_box(&root)).await?;
    if ticked != serde_json::json!(true) {
        return Err(format!(
            "the card has no 'Trace kernel events' box to tick: {ticked}"
        ));
    }
    start_run(client, "1").await?;
    let traced = queries::traced_run_counts(&root)
        .wait(
            client,
            Duration::from_secs(90),
            "the traced run, its warning and its counts",
        )
        .await?;
    println!("traced run: {traced}");
    match figure(&traced["allocs"]) {
        Some(allocs) if allocs > 0.0 => {}
        _ => {
            let refused = traced["missing"].as_array().is_some_and(|m| {
                m.iter().any(|r| {
                    matches!(
                        r.as_str(),
                        Some("not_permitted" | "no_tracefs" | "no_such_event" | "blocked")
                    )
                })
            });
            if !refused {
                return Err(format!(
                    "a traced run neither counted its pages nor said why not: {traced}"
                ));
            }
        }
    }

    open(client, base, MACHINE_CHAPTER).await?;
    let compare = queries::kernel_compare_table()
        .wait(
            client,
            Duration::from_secs(10),
            "the comparison of steps by their counts",
        )
        .await?;
    println!("steps compared: {compare}");
    let calls = figure(&compare["calls"])
        .ok_or_else(|| format!("no {RUN_STEP} column with counts: {compare}"))?;
    if (calls - 4096.0).abs() > 4096.0 * 0.01 {
        return Err(format!(
            "the comparison should show 4096 writer calls per GiB for {RUN_STEP}: {compare}"
        ));
    }
    if compare["steps"].as_array().map_or(0, Vec::len) < 5 {
        return Err(format!(
            "the comparison should cover the article's five steps: {compare}"
        ));
    }
    Ok(())
}
