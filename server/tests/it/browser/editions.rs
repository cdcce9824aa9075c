//! The Chinese edition as a reader meets it: the picker keeps the page and the
//! section, Chinese search finds a chapter and leads to it, and a Chinese chapter
//! runs a step with its card in Chinese.

use std::time::Duration;

use fantoccini::Locator;
use serde_json::json;

use super::queries;
use super::run_card::{start_run, wait_until_done};
use super::{click, in_fresh_page, js, open, screenshot, Page, TestResult, RUN_CHAPTER};

#[tokio::test]
async fn the_language_picker_keeps_the_page_and_its_section() {
    in_fresh_page("edition-picker", picker).await;
}

async fn picker(page: &Page) -> TestResult {
    let client = &page.client;
    let section = "double-buffering";
    client
        .goto(&format!("{}vmsplice.html#{section}", page.base))
        .await
        .map_err(|e| e.to_string())?;
    queries::zh_link_shown()
        .wait(
            client,
            Duration::from_secs(10),
            "the language picker in the menu bar",
        )
        .await?;
    click(client, ".pipebook-language a[hreflang=\"zh-CN\"]").await?;
    let there = queries::zh_landing()
        .wait(client, Duration::from_secs(10), "the Chinese page")
        .await?;
    assert_eq!(there["path"], json!("/zh-CN/vmsplice.html"), "{there}");
    assert_eq!(
        there["hash"],
        json!(format!("#{section}")),
        "the section is kept: {there}"
    );
    let heading = there["heading"].as_str().unwrap_or_default();
    assert!(
        heading
            .chars()
            .any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)),
        "the section's heading is the Chinese one: {there}"
    );
    screenshot(client, "edition-picker-zh").await?;
    click(client, ".pipebook-language a[hreflang=\"en\"]").await?;
    let back = queries::en_landing()
        .wait(client, Duration::from_secs(10), "the English page again")
        .await?;
    assert_eq!(back, json!(format!("/vmsplice.html#{section}")));
    Ok(())
}

#[tokio::test]
async fn a_chinese_word_typed_into_search_finds_its_chapter() {
    in_fresh_page("edition-search", search).await;
}

async fn search(page: &Page) -> TestResult {
    let client = &page.client;
    open(client, &page.base, "zh-CN/index").await?;
    type_search(client, "零拷贝").await?;
    let results = queries::search_hrefs()
        .wait(client, Duration::from_secs(10), "search results for 零拷贝")
        .await?;
    let hrefs: Vec<String> = serde_json::from_value(results.clone()).map_err(|e| e.to_string())?;
    assert!(
        hrefs.iter().any(|h| h.starts_with("zero-copy")),
        "零拷贝 finds the zero-copy chapters: {hrefs:?}"
    );
    // The line that counts them is in Chinese too (mdBook writes it in English).
    let header = js(client, &queries::search_header()).await?;
    let expected = format!("找到 {} 条与“零拷贝”相关的结果：", header["count"]);
    assert_eq!(header["text"], json!(expected), "{header}");
    screenshot(client, "edition-search-zh").await?;
    // Follow the first zero-copy result, as a reader would.
    js(client, &queries::click_zero_copy_result()).await?;
    let landed = queries::zh_zero_copy_page()
        .wait(
            client,
            Duration::from_secs(10),
            "the chapter the result leads to",
        )
        .await?;
    assert_eq!(landed, json!({ "lang": "zh-CN", "found": true }));
    // English search is unchanged: an English word still finds its chapter.
    open(client, &page.base, "index").await?;
    type_search(client, "vmsplice").await?;
    queries::vmsplice_result_shown()
        .wait(
            client,
            Duration::from_secs(10),
            "English results for vmsplice",
        )
        .await?;
    Ok(())
}

#[tokio::test]
async fn a_chinese_chapter_runs_a_step_and_its_card_speaks_chinese() {
    in_fresh_page("edition-run", run_in_chinese).await;
}

async fn run_in_chinese(page: &Page) -> TestResult {
    let client = &page.client;
    open(client, &page.base, &format!("zh-CN/{RUN_CHAPTER}")).await?;
    start_run(client, "1").await?;
    let result = wait_until_done(client, Duration::from_secs(90)).await?;
    let card = js(client, &queries::run_card_scripts()).await?;
    assert!(
        card["button"]["cjk"].as_u64().unwrap_or(0) > 0,
        "the run button is labelled in Chinese: {card}"
    );
    assert!(
        card["text"]["cjk"].as_u64().unwrap_or(0) > card["text"]["latin"].as_u64().unwrap_or(0) / 2,
        "the card's own words are mostly Chinese: {card}"
    );
    assert_eq!(
        card["figure"],
        json!(true),
        "the result's figure is shown: {card} {result}"
    );
    screenshot(client, "edition-run-zh").await?;
    Ok(())
}

/// Types `text` into mdBook's search box (opened first), as a reader would.
async fn type_search(client: &fantoccini::Client, text: &str) -> TestResult {
    click(client, "#mdbook-search-toggle").await?;
    client
        .find(Locator::Css("#mdbook-searchbar"))
        .await
        .map_err(|e| e.to_string())?
        .send_keys(text)
        .await
        .map_err(|e| e.to_string())
}
