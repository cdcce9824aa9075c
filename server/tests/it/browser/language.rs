//! The language picker on an English chapter: it leads to the same chapter in the
//! Chinese edition, and a reader whose browser prefers Chinese is offered that page
//! once (never sent there); dismissing the offer is remembered.

use std::time::Duration;

use serde_json::json;

use super::queries;
use super::{cdp, click, in_fresh_page, js, open, require_chapter, Page, TestResult};

#[tokio::test]
async fn the_picker_keeps_the_page_and_a_chinese_browser_is_offered_it_once() {
    in_fresh_page("language", async |page: &Page| {
        let (client, base) = (&page.client, page.base.as_str());
        require_chapter("vmsplice")?;
        open(client, base, "vmsplice").await?;
        let seen = js(client, &queries::languages()).await?;
        println!("an English browser sees: {seen}");
        let links = seen["links"]
            .as_array()
            .ok_or("no language picker in the menu bar")?;
        let want = [
            ("en", "/vmsplice.html", Some("page"), "English"),
            ("zh-CN", "/zh-CN/vmsplice.html", None, "简体中文"),
        ];
        if links.len() != want.len() {
            return Err(format!(
                "the picker has {} links, not 2: {seen}",
                links.len()
            ));
        }
        for (link, (lang, path, current, text)) in links.iter().zip(want) {
            if link["lang"] != lang || link["hreflang"] != lang || link["path"] != path {
                return Err(format!("{text} should lead to {path} as {lang}: {link}"));
            }
            if link["current"].as_str() != current || link["text"] != text {
                return Err(format!("{text}'s link is named or marked wrong: {link}"));
            }
        }
        if seen["label"] != "Language / 语言" {
            return Err(format!("the picker is not named in both languages: {seen}"));
        }
        if !seen["offer"].is_null() {
            return Err(format!("an English browser was offered Chinese: {seen}"));
        }

        // The browser now says it prefers Chinese, as a reader's would.
        let agent = js(client, &queries::user_agent()).await?;
        cdp(
            client,
            "Network.setUserAgentOverride",
            json!({ "userAgent": agent, "acceptLanguage": "zh-CN,zh;q=0.9,en;q=0.5" }),
        )
        .await?;
        open(client, base, "vmsplice").await?;
        let seen = js(client, &queries::languages()).await?;
        println!("a Chinese browser sees: {seen}");
        if seen["offer"] != json!({ "lang": "zh-CN", "path": "/zh-CN/vmsplice.html" }) {
            return Err(format!("no offer of this chapter in Chinese: {seen}"));
        }
        let path = js(client, &queries::location_path()).await?;
        let path = path.as_str().unwrap_or_default();
        if !path.ends_with("/vmsplice.html") || path.contains("/zh-CN/") {
            return Err(format!("the page moved by itself, to {path}"));
        }

        click(client, ".pipebook-language-dismiss").await?;
        let seen = queries::languages_offer_gone()
            .wait(client, Duration::from_secs(5), "the offer to go")
            .await?;
        if seen["stored"] != "en" || seen["focused"] != "zh-CN" {
            return Err(format!(
                "dismissing should remember English and leave the keyboard on the picker: {seen}"
            ));
        }
        open(client, base, "vmsplice").await?;
        let seen = js(client, &queries::languages()).await?;
        if !seen["offer"].is_null() {
            return Err(format!(
                "the offer came back after it was dismissed: {seen}"
            ));
        }
        on_a_phone(page).await
    })
    .await;
}

/// On a phone (360 px) the picker keeps to the menu bar's one line and shows the
/// way to the other edition.
async fn on_a_phone(page: &Page) -> TestResult {
    let client = &page.client;
    client
        .set_window_size(360, 800)
        .await
        .map_err(|e| format!("resizing the window: {e}"))?;
    // Opened at that width, as a phone opens it (mdBook hides the sidebar then); the
    // window gets its width back whatever happens, for the tests after this one.
    let phone = match open(client, &page.base, "vmsplice").await {
        Ok(()) => js(client, &queries::phone_layout()).await,
        Err(e) => Err(e),
    };
    client
        .set_window_size(1280, 900)
        .await
        .map_err(|e| format!("resizing the window: {e}"))?;
    let phone = phone?;
    println!("on a phone: {phone}");
    let number = |v: &serde_json::Value| v.as_f64().unwrap_or(f64::NAN);
    let other = &phone["other"];
    // NaN (a missing figure) fails both checks.
    let on_screen =
        number(&other["width"]) >= 24.0 && number(&other["right"]) <= number(&phone["width"]);
    if !on_screen {
        return Err(format!(
            "on a phone the link to Chinese is not on screen: {phone}"
        ));
    }
    // One line: the bar is no taller than twice its buttons (a wrapped bar is two rows).
    let one_line = number(&phone["bar"]) < 2.0 * number(&phone["icon"])
        && number(&other["top"]) <= number(&phone["icon"]);
    if !one_line {
        return Err(format!(
            "on a phone the menu bar wrapped to a second line: {phone}"
        ));
    }
    Ok(())
}
