//! The `{{#kernel PROBE}}` lines: on the chapter of kernel changes each line
//! shows what the runner's probes measured on this machine, word for word; and
//! every outcome a probe can give (crafted by `pipebench`'s own wording, so no
//! kernel has to take each branch) drawn by the page's real code, screenshotted.

use std::time::Duration;

use pipebench::machine::behaviour;
use serde_json::Value;

use super::queries;
use super::{in_fresh_page, js, js_async, open, require_chapter, screenshot, Page, TestResult};

const KERNEL_CHAPTER: &str = "kernel-changes";

#[tokio::test]
async fn each_kernel_line_shows_what_this_machine_measured_and_every_outcome_reads() {
    in_fresh_page("kernel-lines", kernel_lines).await;
}

/// `/api/system` as the page gets it.
async fn system_report(page: &Page) -> TestResult<Value> {
    js_async(&page.client, &queries::api_system())
        .await
        .map_err(|e| format!("reading /api/system from the page: {e}"))
}

async fn kernel_lines(page: &Page) -> TestResult {
    let client = &page.client;
    require_chapter(KERNEL_CHAPTER)?;
    open(client, &page.base, KERNEL_CHAPTER).await?;
    let lines = queries::kernel_probes()
        .wait(
            client,
            Duration::from_secs(10),
            "the kernel lines to be drawn",
        )
        .await?;
    let lines = lines.as_array().ok_or("no lines")?;
    assert_eq!(lines.len(), behaviour::ProbeId::ALL.len(), "{lines:?}");
    let system = system_report(page).await?;
    let probes = system["behaviour"]
        .as_array()
        .ok_or("no behaviour in /api/system")?;
    for line in lines {
        let probe = probes
            .iter()
            .find(|p| p["id"] == line["probe"])
            .ok_or_else(|| format!("no probe for {line}"))?;
        assert_eq!(line["text"], probe["line"], "{line} against {probe}");
        let state = if probe["answer"] == "unknown" {
            "unknown"
        } else {
            "measured"
        };
        assert_eq!(line["state"], state, "{line} against {probe}");
    }
    screenshot(client, "kernel-lines").await?;

    // Every branch, worded by the runner's own code, drawn by the page's.
    let outcomes = serde_json::to_string(&behaviour::every_outcome("crafted evidence"))
        .map_err(|e| e.to_string())?;
    let drawn = js_async(client, &queries::draw_kernel_lines(&outcomes))
        .await
        .map_err(|e| format!("drawing the crafted lines: {e}"))?;
    let drawn = drawn
        .as_array()
        .ok_or_else(|| format!("not drawn: {drawn}"))?;
    let crafted = behaviour::every_outcome("crafted evidence");
    assert_eq!(drawn.len(), crafted.len() + 1);
    for (probe, line) in crafted.iter().zip(drawn) {
        assert_eq!(line["text"], probe.line.as_str(), "{line}");
        let evidence = line["evidence"].as_str().unwrap_or_default();
        match &probe.why_unknown {
            Some(why) => {
                assert_eq!(line["state"], "unknown");
                assert!(evidence.contains(why.as_str()), "{evidence}");
            }
            None => {
                assert_eq!(line["state"], "measured");
                assert!(evidence.contains("crafted evidence") && evidence.contains(&probe.expect));
            }
        }
    }
    let offline = drawn.last().ok_or("no offline line")?;
    assert_eq!(offline["state"], "offline");
    assert!(offline["text"]
        .as_str()
        .unwrap_or_default()
        .contains("cargo run --release"));
    js(client, &queries::open_crafted_lines()).await?;
    screenshot(client, "kernel-lines-every-outcome").await?;
    Ok(())
}

/// The chapters' asides for each answer: the one this machine's probe gave is
/// shown as this machine's, the article's default is marked when it is not,
/// and the other alternatives are hidden; "Probe again" brings fresh answers
/// from the runner (its probe time moves) and the page redraws from them.
#[tokio::test]
async fn each_chapter_shows_the_aside_of_this_kernels_answer_and_probes_again() {
    in_fresh_page("kernel-branches", kernel_branches).await;
}

/// The state an aside must be in, by `/api/system`'s probes.
fn expected_state(system: &Value, aside: &Value) -> &'static str {
    let probe = system["behaviour"]
        .as_array()
        .and_then(|list| list.iter().find(|p| p["id"] == aside["probe"]));
    match probe.map(|p| &p["answer"]) {
        None => "unknown",
        Some(answer) if answer == "unknown" => "unknown",
        Some(answer) if *answer == aside["answer"] => "this",
        Some(_) if aside["default"] == true => "not-this",
        Some(_) => "hidden",
    }
}

async fn kernel_branches(page: &Page) -> TestResult {
    let client = &page.client;
    for chapter in ["vmsplice", "splice", "huge-pages"] {
        require_chapter(chapter)?;
        open(client, &page.base, chapter).await?;
        let asides = queries::kernel_asides()
            .wait(client, Duration::from_secs(10), "the asides")
            .await?;
        let asides = asides.as_array().ok_or("no asides")?;
        assert!(asides.len() >= 2, "{chapter}: {asides:?}");
        let system = system_report(page).await?;
        let mut this = 0;
        for aside in asides {
            let state = expected_state(&system, aside);
            assert_eq!(aside["state"], state, "{chapter}: {aside}");
            assert_eq!(aside["shown"], state != "hidden", "{chapter}: {aside}");
            this += usize::from(state == "this");
        }
        assert_eq!(
            this, 1,
            "{chapter}: exactly one aside is this machine's: {asides:?}"
        );
        screenshot(client, &format!("kernel-branches-{chapter}")).await?;
    }

    // Probe again, from the huge-pages chapter's line.
    let before = system_report(page).await?["behaviour_probed_at_ms"].clone();
    js(client, &queries::probe_kernel_again()).await?;
    queries::kernel_status_again()
        .wait(client, Duration::from_secs(30), "the fresh answers")
        .await?;
    let after = system_report(page).await?;
    assert!(
        after["behaviour_probed_at_ms"].as_u64() > before.as_u64(),
        "{before} then {}",
        after["behaviour_probed_at_ms"]
    );
    let asides = queries::kernel_asides()
        .wait(client, Duration::from_secs(5), "the asides")
        .await?;
    for aside in asides.as_array().ok_or("no asides")? {
        assert_eq!(aside["state"], expected_state(&after, aside), "{aside}");
    }
    screenshot(client, "kernel-probed-again").await?;

    // The machine panel probes again too, and lists every probe's line.
    require_chapter("your-machine")?;
    open(client, &page.base, "your-machine").await?;
    let before = system_report(page).await?["behaviour_probed_at_ms"].clone();
    queries::click_system_probe()
        .wait(
            client,
            Duration::from_secs(10),
            "the machine panel's probe button",
        )
        .await?;
    let listed = queries::system_probe_again()
        .wait(client, Duration::from_secs(30), "the panel's fresh answers")
        .await?;
    assert_eq!(listed, behaviour::ProbeId::ALL.len(), "{listed}");
    let after = system_report(page).await?["behaviour_probed_at_ms"].clone();
    assert!(after.as_u64() > before.as_u64(), "{before} then {after}");
    screenshot(client, "kernel-machine-panel-probed-again").await?;

    // A lab card names the behaviour each check assumes.
    require_chapter("lab-vmsplice-safety")?;
    open(client, &page.base, "lab-vmsplice-safety").await?;
    let assumes = queries::check_assumptions()
        .wait(client, Duration::from_secs(10), "the lab's assumptions")
        .await?;
    assert!(
        assumes[0]
            .as_str()
            .unwrap_or_default()
            .contains("vmsplice: maps"),
        "{assumes}"
    );
    assert!(
        assumes[1]
            .as_str()
            .unwrap_or_default()
            .contains("vmsplice: copies"),
        "{assumes}"
    );
    assert_eq!(
        assumes[2], true,
        "a check that assumes nothing says nothing: {assumes}"
    );

    // Every answer of the three probes, drawn by the page's code on the chapter.
    for outcome in behaviour::every_outcome("crafted evidence") {
        let id = outcome.id.as_str();
        if !matches!(id, "vmsplice" | "splice-null" | "thp") {
            continue;
        }
        let chapter = match id {
            "vmsplice" => "vmsplice",
            "splice-null" => "splice",
            _ => "huge-pages",
        };
        open(client, &page.base, chapter).await?;
        queries::kernel_asides()
            .wait(client, Duration::from_secs(10), "the asides")
            .await?;
        let report = serde_json::json!({ "behaviour": [outcome] });
        let drawn = js_async(client, &queries::draw_branches(&report))
            .await
            .map_err(|e| format!("drawing {id}: {e}"))?;
        assert_eq!(drawn, Value::Bool(true), "{drawn}");
        let asides = js(client, &queries::kernel_asides()).await?;
        let asides = asides.as_array().ok_or("no asides")?;
        let shown: Vec<&Value> = asides.iter().filter(|a| a["state"] == "this").collect();
        if outcome.answer == "unknown" {
            assert!(asides
                .iter()
                .all(|a| a["state"] == "unknown" && a["shown"] == true));
        } else {
            assert_eq!(shown.len(), 1, "{id} {}: {asides:?}", outcome.answer);
            assert_eq!(shown[0]["answer"], outcome.answer.as_str());
            assert_eq!(shown[0]["shown"], true);
        }
        screenshot(client, &format!("kernel-branch-{id}-{}", outcome.answer)).await?;
    }
    Ok(())
}
