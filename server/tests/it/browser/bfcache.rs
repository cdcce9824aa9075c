//! The back/forward cache: a reader who follows a link and comes back finds the
//! page restored as it was, not reloaded; nothing of the book's own (headers,
//! handlers, open connections at rest) keeps Chromium from keeping it.

use std::time::Duration;

use serde_json::Value;

use super::queries::{self, Query};
use super::{in_fresh_page, js, open, require_chapter, Page, TestResult};

/// Opens the baseline chapter (it has a run card, which reads the runner's
/// catalog and health) and runs `before` there, follows to the introduction
/// and goes back; returns what `before` read.
async fn leave_and_return(page: &Page, before: &Query) -> TestResult<Value> {
    let (client, base) = (&page.client, page.base.as_str());
    for chapter in ["baseline", "introduction"] {
        require_chapter(chapter)?;
    }
    open(client, base, "baseline").await?;
    let read = js(client, before).await?;
    open(client, base, "introduction").await?;
    client
        .back()
        .await
        .map_err(|e| format!("going back: {e}"))?;
    Ok(read)
}

#[tokio::test]
async fn a_chapter_left_and_returned_to_comes_back_from_the_bfcache() {
    in_fresh_page("bfcache", async |page: &Page| {
        let client = &page.client;
        leave_and_return(page, &queries::mark_page_stayed()).await?;
        let seen = queries::bfcache_restore()
            .wait(client, Duration::from_secs(20), "the page after going back")
            .await?;
        println!("after going back: {seen}");
        if seen["stayed"] != "yes" {
            return Err(format!(
                "the chapter was reloaded, not restored from the back/forward cache; \
                 Chromium's reasons: {}",
                seen["reasons"]
            ));
        }
        Ok(())
    })
    .await;
}

/// A page restored from the back/forward cache whose token the server no longer
/// accepts (the server was restarted meanwhile) loads itself again, and so carries
/// the token that works. The restart is stood in for by changing the token the page
/// holds before leaving it: to the page, the server now answers with another one.
#[tokio::test]
async fn a_restored_page_with_a_stale_token_loads_again() {
    in_fresh_page("bfcache-token", async |page: &Page| {
        let client = &page.client;
        let served = leave_and_return(page, &queries::stale_page_token()).await?;
        let seen = queries::reloaded_page_token()
            .wait(
                client,
                Duration::from_secs(20),
                "the chapter loaded again with the server's token",
            )
            .await?;
        if seen != served {
            return Err(format!(
                "after loading again the page should carry the server's token {served}, not {seen}"
            ));
        }
        Ok(())
    })
    .await;
}

/// The same page restored with the token the server still accepts stays as it was.
#[tokio::test]
async fn a_restored_page_with_a_current_token_is_kept() {
    in_fresh_page("bfcache-kept", async |page: &Page| {
        let client = &page.client;
        leave_and_return(page, &queries::mark_page_stayed()).await?;
        // Long enough for the check to have fetched the page and compared.
        tokio::time::sleep(Duration::from_secs(2)).await;
        let stayed = queries::page_stayed_after_back()
            .wait(client, Duration::from_secs(20), "the page after going back")
            .await?;
        if stayed != "yes" {
            return Err(format!(
                "a page whose token still works was loaded again: {stayed}"
            ));
        }
        Ok(())
    })
    .await;
}
