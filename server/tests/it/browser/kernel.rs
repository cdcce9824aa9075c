//! The `{{#kernel PROBE}}` lines: on the chapter of kernel changes each line
//! shows what the runner's probes measured on this machine, word for word; and
//! every outcome a probe can give (crafted by `pipebench`'s own wording, so no
//! kernel has to take each branch) drawn by the page's real code, screenshotted.

use std::time::Duration;

use pipebench::machine::behaviour;
use serde_json::Value;

use super::{in_fresh_page, js, open, require_chapter, screenshot, wait_js, Page, TestResult};

const KERNEL_CHAPTER: &str = "kernel-changes";

#[tokio::test]
async fn each_kernel_line_shows_what_this_machine_measured_and_every_outcome_reads() {
    in_fresh_page("kernel-lines", kernel_lines).await;
}

/// `/api/system` as the page gets it.
async fn system_report(page: &Page) -> TestResult<Value> {
    page.client
        .execute_async(
            "const done = arguments[arguments.length - 1];
             fetch('/api/system').then((r) => r.json()).then(done).catch((e) => done(String(e)));",
            vec![],
        )
        .await
        .map_err(|e| format!("reading /api/system from the page: {e}"))
}

async fn kernel_lines(page: &Page) -> TestResult {
    let client = &page.client;
    require_chapter(KERNEL_CHAPTER)?;
    open(client, &page.base, KERNEL_CHAPTER).await?;
    let lines = wait_js(
        client,
        "const ls = [...document.querySelectorAll('.pipebook-kernel')];
         return ls.length && ls.every((l) => l.dataset.state)
           ? ls.map((l) => ({ probe: l.dataset.probe, state: l.dataset.state,
                text: l.querySelector('.pipebook-kernel-text').textContent }))
           : null;",
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
    let drawn = client
        .execute_async(
            &format!(
                "const done = arguments[arguments.length - 1];
                 const outcomes = {outcomes};
                 import('/pipebook/kernel.js').then((m) => {{
                   const host = document.createElement('section');
                   host.id = 'crafted-kernel-lines';
                   document.querySelector('main').prepend(host);
                   const drawn = [];
                   for (const probe of [...outcomes, null]) {{
                     const el = document.createElement('div');
                     el.className = 'pipebook-kernel';
                     el.dataset.probe = probe ? probe.id : 'vmsplice';
                     host.append(el);
                     m.drawKernelLine(el, probe ? {{ behaviour: [probe] }} : null);
                     drawn.push({{ state: el.dataset.state,
                       text: el.querySelector('.pipebook-kernel-text').textContent,
                       evidence: el.querySelector('details')?.textContent ?? '' }});
                   }}
                   host.scrollIntoView();
                   done(drawn);
                 }}).catch((e) => done(String(e)));"
            ),
            vec![],
        )
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
    js(client, "document.querySelectorAll('#crafted-kernel-lines details').forEach((d) => d.open = true); return true;").await?;
    screenshot(client, "kernel-lines-every-outcome").await?;
    Ok(())
}
