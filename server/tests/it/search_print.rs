//! mdBook's search and print view, in Debian's headless Chromium against the real
//! server: a reader presses the search shortcut, types a term and follows a result;
//! `print.html` holds every chapter and every widget, each card printing figures
//! (its last result or the article's), and Chromium prints it to a PDF.

use std::collections::BTreeSet;
use std::panic::AssertUnwindSafe;
use std::time::Duration;

use base64::Engine as _;
use fantoccini::{Client, Locator};
use futures_util::FutureExt as _;
use serde_json::json;

use crate::browser::queries;
use crate::browser::{
    cdp, chapters, connect_browser, js, open, screenshot, start_chromedriver, workspace_root,
    TestResult, RECORDER,
};
use crate::common::{http_get, InProcess};

/// The classes of the placeholders the book's directives leave for the page code.
const WIDGETS: [&str; 9] = [
    "pipebook-run",
    "pipebook-sweep",
    "pipebook-lab",
    "pipebook-ipc",
    "pipebook-ipc-matrix",
    "pipebook-pages",
    "pipebook-walk",
    "pipebook-results",
    "pipebook-system",
];

/// How many placeholders of each kind `html` has.
fn widget_counts(html: &str) -> Vec<(String, usize)> {
    WIDGETS
        .iter()
        .map(|w| {
            let exact = format!("class=\"{w}\"");
            let first = format!("class=\"{w} ");
            (
                w.to_string(),
                html.matches(&exact).count() + html.matches(&first).count(),
            )
        })
        .collect()
}

/// The ids of the level-one headings of `html`.
fn h1_ids(html: &str) -> Vec<String> {
    html.match_indices("<h1 id=\"")
        .filter_map(|(at, m)| {
            let rest = &html[at + m.len()..];
            rest.find('"').map(|end| rest[..end].to_string())
        })
        .collect()
}

async fn search(client: &Client, base: &str) -> TestResult {
    open(client, base, "introduction").await?;
    // The keyboard shortcut ("s", as the help popup says) opens the search box.
    client
        .find(Locator::Css("body"))
        .await
        .map_err(|e| e.to_string())?
        .send_keys("s")
        .await
        .map_err(|e| format!("pressing s: {e}"))?;
    queries::search_bar_focused()
        .wait(
            client,
            Duration::from_secs(10),
            "the search box to open and take the focus",
        )
        .await?;
    client
        .active_element()
        .await
        .map_err(|e| e.to_string())?
        .send_keys("vmsplice")
        .await
        .map_err(|e| e.to_string())?;
    let results = queries::search_result_links()
        .wait(
            client,
            Duration::from_secs(10),
            "search results for vmsplice",
        )
        .await?;
    println!("search for vmsplice: {results}");
    let first = results[0].as_str().unwrap_or_default().to_string();
    if !first.contains(".html") {
        return Err(format!(
            "the first result does not link to a chapter: {results}"
        ));
    }
    js(client, &queries::click_first_result()).await?;
    let landed = queries::landed_on(first.split(['?', '#']).next().unwrap_or_default())
        .wait(
            client,
            Duration::from_secs(10),
            "the result's chapter to open",
        )
        .await?;
    // The chapter has the term, and mdBook marks it where it stands.
    let found = queries::vmsplice_marked()
        .wait(
            client,
            Duration::from_secs(10),
            "the term marked in the chapter",
        )
        .await?;
    println!("followed the first result to {landed}: {found} mark(s)");
    Ok(())
}

async fn print_view(client: &Client, base: &str, port: u16) -> TestResult {
    // Every chapter, and every widget of every chapter, is in print.html.
    let host = format!("127.0.0.1:{port}");
    let print = http_get(port, "/print.html", &host).await;
    if print.status != 200 {
        return Err(format!("print.html: {}", print.status));
    }
    let printed: BTreeSet<String> = h1_ids(&print.body).into_iter().collect();
    let mut expected = vec![0usize; WIDGETS.len()];
    for chapter in chapters() {
        let page = http_get(port, &format!("/{chapter}.html"), &host).await;
        let ids = h1_ids(&page.body);
        let Some(title) = ids.first() else {
            return Err(format!("{chapter}.html has no h1"));
        };
        if !printed.contains(title) {
            return Err(format!(
                "print.html lacks the chapter {chapter} (h1 #{title})"
            ));
        }
        for (i, (_, n)) in widget_counts(&page.body).into_iter().enumerate() {
            expected[i] += n;
        }
    }
    let counts = widget_counts(&print.body);
    for ((kind, n), want) in counts.iter().zip(&expected) {
        if n != want {
            return Err(format!(
                "print.html has {n} {kind} widget(s), the chapters {want}"
            ));
        }
    }
    println!("print.html: {} chapters, widgets {counts:?}", printed.len());

    // As printed: every card shows figures, none is an empty box. print.html opens
    // the browser's print dialog on load; headless, that dialog never closes and
    // Page.printToPDF (what "Save as PDF" does) would wait behind it: stand it down.
    cdp(
        client,
        "Page.addScriptToEvaluateOnNewDocument",
        json!({ "source": "window.print = () => { window.__pipebookPrintAsked = true; };" }),
    )
    .await?;
    open(client, base, "print").await?;
    queries::print_asked()
        .wait(
            client,
            Duration::from_secs(10),
            "print.html to ask for the print dialog",
        )
        .await?;
    cdp(
        client,
        "Emulation.setEmulatedMedia",
        json!({ "media": "print" }),
    )
    .await?;
    let empty = js(client, &queries::printed_cards()).await?;
    println!("print view: {} cards", empty["cards"]);
    if empty["bad"].as_array().is_none_or(|b| !b.is_empty()) || empty["cards"].as_u64() == Some(0) {
        return Err(format!("cards that print empty: {empty}"));
    }
    let shot = screenshot(client, "print").await?;
    let pdf = cdp(
        client,
        "Page.printToPDF",
        json!({ "printBackground": false, "preferCSSPageSize": true }),
    )
    .await?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(pdf["data"].as_str().unwrap_or_default())
        .map_err(|e| format!("PDF base64: {e}"))?;
    let pages = pdf_pages(&bytes);
    let pdf_path = shot.with_file_name("pipebook.pdf");
    std::fs::write(&pdf_path, &bytes).map_err(|e| format!("{}: {e}", pdf_path.display()))?;
    println!(
        "print.html as PDF: {} KiB, {pages} pages, {}; screenshot {}",
        bytes.len() / 1024,
        pdf_path.display(),
        shot.display()
    );
    if !bytes.starts_with(b"%PDF") || pages < printed.len() {
        return Err(format!(
            "the PDF should have a page per chapter at least: {pages} for {}",
            printed.len()
        ));
    }
    cdp(client, "Emulation.setEmulatedMedia", json!({ "media": "" })).await?;
    Ok(())
}

/// The pages of a PDF as Chromium writes it: its `/Type /Page` objects (not `/Pages`).
fn pdf_pages(pdf: &[u8]) -> usize {
    let mut pages = 0;
    for needle in [&b"/Type /Page"[..], &b"/Type/Page"[..]] {
        pages += pdf
            .windows(needle.len() + 1)
            .filter(|w| w.starts_with(needle) && w[needle.len()] != b's')
            .count();
    }
    pages
}

async fn scenario(client: &Client, base: &str, port: u16) -> TestResult {
    cdp(
        client,
        "Page.addScriptToEvaluateOnNewDocument",
        json!({ "source": RECORDER }),
    )
    .await?;
    search(client, base).await?;
    print_view(client, base, port).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_finds_a_chapter_and_print_holds_the_whole_book() {
    // It times nothing, but the print view mounts every card: keep runs away.
    let _lock = crate::common::RUN_LOCK.lock().await;
    let profile = tempfile::tempdir().expect("chromium profile dir");
    let server = InProcess::start_book(Some(&workspace_root())).await;
    let base = format!("{}/", server.origin());
    let (mut driver, port) = start_chromedriver().unwrap_or_else(|e| panic!("{e}"));
    let client = connect_browser(port, profile.path())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let outcome = AssertUnwindSafe(scenario(&client, &base, server.port))
        .catch_unwind()
        .await;
    let _ = client.close().await;
    driver.stop();
    server.stop().await;
    match outcome {
        Ok(Ok(())) => {}
        Ok(Err(message)) => panic!("{message}"),
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

#[test]
fn widget_placeholders_are_counted_by_kind() {
    let html = r#"<div class="pipebook-run" data-step="a"></div><div class="pipebook-ipc-matrix x"></div><div class="pipebook-run-static"></div>"#;
    let counts: Vec<(String, usize)> = widget_counts(html)
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .collect();
    assert_eq!(
        counts,
        [
            ("pipebook-run".to_string(), 1),
            ("pipebook-ipc-matrix".into(), 1)
        ]
    );
    assert_eq!(
        h1_ids(r#"<h1 id="a"><a></a></h1><h2 id="b"></h2><h1 id="c">"#),
        ["a", "c"]
    );
    assert_eq!(
        pdf_pages(b"<< /Type /Pages /Count 2 >> << /Type /Page >> <</Type/Page/Parent 1 0 R>>"),
        2
    );
}
