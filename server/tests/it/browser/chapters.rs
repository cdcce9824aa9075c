//! The book as a whole: every chapter, a second visit, and the navy theme.

use serde_json::json;

use super::queries;
use super::{
    chapters, check_page, in_fresh_page, js, open, require_chapter, screenshot, set_theme, Page,
    TestResult,
};

/// Chapters also shot in mdBook's navy theme.
const DARK_CHAPTERS: &[&str] = &["baseline", "inside-a-pipe"];

#[tokio::test]
async fn every_chapter_loads_only_from_the_server_and_draws_its_diagrams() {
    in_fresh_page("chapters", every_chapter).await;
}

#[tokio::test]
async fn a_second_visit_is_fast_and_fetches_nothing_large_again() {
    in_fresh_page("second-visit", second_visit).await;
}

#[tokio::test]
async fn chapters_in_navy_draw_diagrams_in_mermaids_dark_theme() {
    in_fresh_page("navy", navy).await;
}

/// Every chapter: local only, no CSP violation, no console error, diagrams drawn
/// (and the Mermaid bundle fetched by the pages with a diagram, and only them).
async fn every_chapter(page: &Page) -> TestResult {
    let (client, base) = (&page.client, page.base.as_str());
    let chapters = chapters();
    let mut diagrams = 0;
    for chapter in &chapters {
        open(client, base, chapter).await?;
        check_page(client, base, chapter).await?;
        let counts = js(client, &queries::diagrams_drawn()).await?;
        let total = counts["total"].as_u64().unwrap_or(0);
        // The 3.5 MB Mermaid bundle is fetched by pages with a diagram, and only them.
        let fetched_mermaid = js(client, &queries::mermaid_fetched()).await?;
        if fetched_mermaid != json!(total > 0) {
            return Err(format!(
                "{chapter}: {total} diagram(s), but Mermaid fetched: {fetched_mermaid}"
            ));
        }
        if counts["drawn"].as_u64() != Some(total) {
            return Err(format!(
                "{chapter}: Mermaid did not draw every diagram ({} of {total}); errors: {}",
                counts["drawn"], counts["errors"]
            ));
        }
        diagrams += total;
        let path = screenshot(client, chapter).await?;
        println!(
            "{chapter}: {total} diagram(s), screenshot {}",
            path.display()
        );
    }
    if diagrams == 0 {
        return Err("no chapter has a Mermaid diagram (pre.mermaid) to check".into());
    }
    Ok(())
}

/// A second visit to a page with diagrams is fast: nothing large comes again.
async fn second_visit(page: &Page) -> TestResult {
    let (client, base) = (&page.client, page.base.as_str());
    let chapter = "inside-a-pipe";
    require_chapter(chapter)?;
    open(client, base, chapter).await?;
    open(client, base, chapter).await?;
    let timing = js(client, &queries::load_timing()).await?;
    println!("{chapter}, second visit: {timing}");
    let load_ms = timing["load_ms"].as_f64().unwrap_or(f64::MAX);
    let mermaid_bytes = timing["mermaid_bytes"].as_f64().unwrap_or(f64::MAX);
    if load_ms >= 1000.0 || mermaid_bytes > 10_000.0 {
        return Err(format!(
            "{chapter}: a second visit should load in under 1 s without fetching Mermaid again: {timing}"
        ));
    }
    Ok(())
}

/// A few pages in the navy theme: diagrams drawn with Mermaid's dark theme.
async fn navy(page: &Page) -> TestResult {
    let (client, base) = (&page.client, page.base.as_str());
    set_theme(client, "navy").await?;
    let mut with_diagrams = 0;
    for chapter in DARK_CHAPTERS {
        require_chapter(chapter)?;
        open(client, base, chapter).await?;
        let theme = js(client, &queries::navy_diagram_theme()).await?;
        let has_diagrams = js(client, &queries::has_diagram()).await?;
        if has_diagrams == json!(true) {
            with_diagrams += 1;
            if theme != json!("dark") {
                return Err(format!(
                    "{chapter}: in navy, diagrams should use Mermaid's dark theme: {theme}"
                ));
            }
        }
        check_page(client, base, chapter).await?;
        let path = screenshot(client, &format!("{chapter}-navy")).await?;
        println!("{chapter} (navy): screenshot {}", path.display());
    }
    set_theme(client, "light").await?;
    if with_diagrams == 0 {
        return Err(format!(
            "none of {DARK_CHAPTERS:?} has a diagram to check the dark theme on"
        ));
    }
    Ok(())
}
