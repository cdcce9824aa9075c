//! The paging chapter's two cards: the page-table walk of an address (no runner
//! needed) and the page inspector, which allocates a step's buffers in a child
//! and shows every page of them (also in the huge-pages chapter).

use std::time::Duration;

use fantoccini::Client;
use serde_json::{json, Value};

use super::queries;
use super::{in_fresh_page, js, open, require_chapter, screenshot_element, Page, TestResult};

#[tokio::test]
async fn the_walk_splits_an_address_and_refuses_a_non_canonical_one() {
    in_fresh_page("walk", check_walk).await;
}

#[tokio::test]
async fn the_page_inspector_shows_small_huge_and_untouched_pages() {
    in_fresh_page("page-inspector", inspect_pages).await;
}

/// The paging chapter's walk: the article's address by default (57 bits, so five
/// levels), a refusal for a non-canonical address, four levels for a user address.
async fn check_walk(page: &Page) -> TestResult {
    let client = &page.client;
    require_chapter("paging")?;
    open(client, &page.base, "paging").await?;
    let root = ".pipebook-walk";
    let probe = queries::walk(root);
    let first = probe
        .wait(client, Duration::from_secs(10), "the walk drawing")
        .await?;
    if first["levels"] != json!("5") || first["indices"] != json!("0,484,449,215,405") {
        return Err(format!(
            "the article's address should walk 5 levels, 0,484,449,215,405: {first}"
        ));
    }
    js(client, &queries::scroll_to_start(root)).await?;
    screenshot_element(client, root, "walk-article").await?;
    js(client, &queries::walk_type(root, "0x0100000000000000")).await?;
    let refused = js(client, &probe).await?;
    let message = refused["error"].as_str().unwrap_or_default();
    if refused["state"] != json!("error") || !message.contains("not canonical") {
        return Err(format!(
            "a non-canonical address should be refused: {refused}"
        ));
    }
    screenshot_element(client, root, "walk-refused").await?;
    js(client, &queries::walk_type(root, "0x00007f705af953c0")).await?;
    let user = js(client, &probe).await?;
    if user["levels"] != json!("4") || user["indices"] != json!("254,449,215,405") {
        return Err(format!("a user address should walk 4 levels: {user}"));
    }
    Ok(())
}

/// Waits for the page inspector's panels and returns each one's grid counts.
async fn check_pages(client: &Client, name: &str) -> TestResult<Value> {
    let root = ".pipebook-pages";
    let probe = queries::page_panels(root);
    let panels = probe
        .wait(client, Duration::from_secs(30), "the page inspector")
        .await?;
    js(client, &queries::scroll_to_start(root)).await?;
    let path = screenshot_element(client, root, name).await?;
    println!("{name}: {panels}; {}", path.display());
    for panel in panels.as_array().into_iter().flatten() {
        if panel["state"] != json!("done") {
            return Err(format!("{name}: a panel failed: {panel}"));
        }
    }
    Ok(panels)
}

/// The inspector in the paging chapter (4 KiB pages against one huge page) and in
/// the huge-pages chapter (written against untouched).
async fn inspect_pages(page: &Page) -> TestResult {
    let (client, base) = (&page.client, page.base.as_str());
    let thp =
        std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
    let root = rustix::process::geteuid().is_root();
    require_chapter("paging")?;
    require_chapter("huge-pages")?;
    open(client, base, "paging").await?;
    let panels = check_pages(client, "pages-small-vs-huge").await?;
    let (small, huge) = (&panels[0], &panels[1]);
    if small["step"] != json!("vmsplice-splice")
        || small["cells"] != json!(65)
        || small["present"] != json!(65)
    {
        return Err(format!(
            "step 3's buffer is 65 present small pages: {small}"
        ));
    }
    if huge["cells"] != json!(512) {
        return Err(format!(
            "step 4's buffer is one 2 MiB page, 512 squares: {huge}"
        ));
    }
    if thp.contains("[never]") {
        if !huge["limits"]
            .as_array()
            .is_some_and(|l| l.contains(&json!("thp_disabled")))
        {
            return Err(format!("with THP off the panel must say so: {huge}"));
        }
    } else if !root {
        // Frames and their flags are root's to see: the panel says they are hidden.
        if !huge["limits"]
            .as_array()
            .is_some_and(|l| l.contains(&json!("frames_hidden")))
        {
            return Err(format!(
                "without root the panel must say frames are hidden: {huge}"
            ));
        }
    } else if !huge["limits"]
        .as_array()
        .is_some_and(|l| l.contains(&json!("no_huge_pages")))
        && (huge["heads"] != json!(1) || huge["tails"] != json!(511))
    {
        return Err(format!(
            "a touched huge page is 1 head and 511 tails: {huge}"
        ));
    }
    // "Walk this address" hands the huge buffer's address to the walk: 2 MiB, three tables.
    let walked = js(client, &queries::walk_second_panel()).await?;
    if walked["input"] != walked["where"]
        || walked["tables"] != json!(3)
        || walked["levels"] != json!("4")
    {
        return Err(format!(
            "the huge buffer's address should walk 3 tables: {walked}"
        ));
    }
    screenshot_element(client, ".pipebook-walk", "walk-buffer").await?;
    open(client, base, "huge-pages").await?;
    let panels = check_pages(client, "pages-touched-vs-untouched").await?;
    if panels[1]["present"] != json!(0)
        || !panels[1]["limits"]
            .as_array()
            .is_some_and(|l| l.contains(&json!("nothing_present")))
    {
        return Err(format!(
            "an untouched buffer has nothing present: {}",
            panels[1]
        ));
    }
    Ok(())
}
