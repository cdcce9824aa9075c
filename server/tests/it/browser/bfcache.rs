//! The back/forward cache: a reader who follows a link and comes back finds the
//! page restored as it was, not reloaded; nothing of the book's own (headers,
//! handlers, open connections at rest) keeps Chromium from keeping it.

use std::time::Duration;

use super::{in_fresh_page, js, open, require_chapter, wait_js, Page};

#[tokio::test]
async fn a_chapter_left_and_returned_to_comes_back_from_the_bfcache() {
    in_fresh_page("bfcache", async |page: &Page| {
        let (client, base) = (&page.client, page.base.as_str());
        // A chapter with a run card (it reads the runner's catalog and health).
        for chapter in ["baseline", "introduction"] {
            require_chapter(chapter)?;
        }
        open(client, base, "baseline").await?;
        js(client, "window.pipebookStayed = 'yes'; return true;").await?;
        open(client, base, "introduction").await?;
        client
            .back()
            .await
            .map_err(|e| format!("going back: {e}"))?;
        let seen = wait_js(
            client,
            "if (!location.pathname.endsWith('/baseline.html')) return null;
             const nav = performance.getEntriesByType('navigation')[0];
             const reasons = nav && nav.notRestoredReasons;
             const list = [];
             const walk = (r) => {
               if (!r) return;
               for (const x of r.reasons || []) list.push(x.reason || String(x));
               for (const c of r.children || []) walk(c);
             };
             walk(reasons);
             return { stayed: window.pipebookStayed || null, reasons: list };",
            Duration::from_secs(20),
            "the page after going back",
        )
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
