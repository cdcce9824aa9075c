//! Intervals where the cards state a ratio. The run card: one live run, then
//! "Run until resolved" on a small budget of one-second quiet runs; the card
//! states its quiet runs against the article with their 95% interval, draws it
//! against 1.0, says what watching cost from the live and quiet figures. A
//! variant's run card against the baseline: "Run until resolved" sends the two
//! head to head in quiet pairs on a small budget, and the card states and draws
//! the interval. The sweep card: two values, two quiet runs each, its best against its worst with
//! the interval drawn, then more runs of the two until resolved. The IPC
//! matrix: one mechanism against another, run in quiet turns until resolved on
//! 2 MiB runs, the interval drawn. All axe-clean.

use std::time::Duration;

use serde_json::json;

use super::run_card::{start_run, wait_until_done};
use super::{
    in_fresh_page, js, open, require_chapter, screenshot_element, wait_js, Page, TestResult,
    RUN_CHAPTER, RUN_STEP,
};

const SWEEP: &str = ".pipebook-sweep[data-step=\"write-read\"][data-param=\"pipe_size\"]";

#[tokio::test]
async fn the_run_card_runs_quiet_until_resolved_and_says_what_watching_cost() {
    in_fresh_page("run-evidence", evidence).await;
}

async fn evidence(page: &Page) -> TestResult {
    let client = &page.client;
    require_chapter(RUN_CHAPTER)?;
    open(client, &page.base, RUN_CHAPTER).await?;
    let root = format!(".pipebook-run[data-step=\"{RUN_STEP}\"]");
    // 128 KiB per call, a configuration the other tests leave alone: its runs
    // in the shared history are this test's, so two quiet ones must still run.
    js(
        client,
        &format!(
            "const s = document.querySelector('{root} select.pipebook-buf-size') ?? document.querySelector('{root} .pipebook-buf-size select');
             s.value = '131072';
             return s.value === '131072';"
        ),
    )
    .await?
    .as_bool()
    .filter(|set| *set)
    .ok_or("the run card offers no 128 KiB bytes per call")?;
    // A live run first: the figure watching is charged to.
    start_run(client, "1").await?;
    wait_until_done(client, Duration::from_secs(90)).await?;
    let before = js(
        client,
        &format!(
            "const e = document.querySelector('{root} .pipebook-evidence');
             return {{ state: e.dataset.state, until: e.querySelector('button.pipebook-evidence-until').disabled }};"
        ),
    )
    .await?;
    if before != json!({"state": "idle", "until": false}) {
        return Err(format!(
            "after the live run, Run until resolved should be ready: {before}"
        ));
    }
    js(
        client,
        &format!(
            "const e = document.querySelector('{root} .pipebook-evidence');
             e.scrollIntoView({{ block: 'center' }});
             e.querySelector('input.pipebook-evidence-budget').value = '3';
             e.querySelector('button.pipebook-evidence-until').click();
             return true;"
        ),
    )
    .await?;
    // While the quiet runs go, the card's own Run waits.
    let held = wait_js(
        client,
        &format!(
            "const r = document.querySelector('{root}');
             return r.querySelector('.pipebook-evidence').dataset.state === 'busy'
               ? {{ runDisabled: r.querySelector('button.pipebook-run-button').disabled }} : null;"
        ),
        Duration::from_secs(10),
        "the quiet runs to start",
    )
    .await?;
    if held != json!({"runDisabled": true}) {
        return Err("the card's own Run should wait while its quiet runs go".into());
    }
    let done = wait_js(
        client,
        &format!(
            "const e = document.querySelector('{root} .pipebook-evidence');
             const status = e.querySelector('.pipebook-evidence-status').textContent;
             if (e.dataset.state !== 'idle' || !status) return null;
             const svg = e.querySelector('svg.pipebook-evidence-interval');
             const watching = e.querySelector('.pipebook-watching');
             return {{
               status,
               verdict: e.dataset.verdict ?? null,
               text: e.querySelector('.pipebook-evidence-text').textContent,
               drawn: !!svg?.querySelector('rect'),
               label: svg?.getAttribute('aria-label') ?? null,
               watching: watching.hidden ? null : watching.textContent,
               runEnabled: !document.querySelector('{root} button.pipebook-run-button').disabled,
             }};"
        ),
        Duration::from_secs(120),
        "the quiet runs to end",
    )
    .await?;
    let status = done["status"].as_str().unwrap_or("");
    if !(status.starts_with("Resolved") || status.starts_with("Budget spent")) {
        return Err(format!(
            "the quiet runs should end resolved or with the budget spent: {done}"
        ));
    }
    let text = done["text"].as_str().unwrap_or("");
    if !text.contains("quiet runs here are") || !text.contains("95% interval") {
        return Err(format!(
            "the card should state the quiet runs against the article with their interval: {done}"
        ));
    }
    let verdict = done["verdict"].as_str().unwrap_or("");
    if !["faster", "slower", "not_resolved"].contains(&verdict)
        || (status.starts_with("Resolved") == (verdict == "not_resolved"))
    {
        return Err(format!(
            "the verdict should match how the runs ended: {done}"
        ));
    }
    if done["drawn"] != true || done["label"].as_str() != Some(text) {
        return Err(format!(
            "the interval should be drawn, named by its sentence: {done}"
        ));
    }
    let watching = done["watching"].as_str().unwrap_or("");
    if !(watching.starts_with("Watching cost") || watching.starts_with("Live was")) {
        return Err(format!(
            "with a live and quiet runs, the card should say what watching cost: {done}"
        ));
    }
    if done["runEnabled"] != true {
        return Err(format!("the card's own Run should be back: {done}"));
    }
    let path = screenshot_element(client, &root, "run-card-evidence").await?;
    let axe = crate::a11y::axe_source();
    crate::a11y::audit(client, &axe, "run card with its interval").await?;
    println!(
        "run card: {text} | {watching} | {status}; {}",
        path.display()
    );
    Ok(())
}

/// A variant no other test runs, so its quiet runs in the shared history are
/// this test's own: the head-to-head must run before any interval exists.
const AGAINST_BASELINE: &str = "write-read-big-pipe";

#[tokio::test]
async fn the_run_card_sets_its_step_against_the_baseline_until_resolved() {
    in_fresh_page("run-baseline", against_baseline).await;
}

async fn against_baseline(page: &Page) -> TestResult {
    let client = &page.client;
    require_chapter(RUN_CHAPTER)?;
    open(client, &page.base, RUN_CHAPTER).await?;
    let root = format!(".pipebook-run[data-step=\"{AGAINST_BASELINE}\"]");
    let before = wait_js(
        client,
        &format!(
            "const b = document.querySelector('{root} .pipebook-baseline');
             return b && b.querySelector('.pipebook-baseline-text').textContent ? b.querySelector('.pipebook-baseline-text').textContent : null;"
        ),
        Duration::from_secs(10),
        "the card's part against the baseline",
    )
    .await?;
    if !before
        .as_str()
        .unwrap_or("")
        .starts_with(&format!("Quiet runs so far: 0 of {AGAINST_BASELINE}"))
    {
        return Err(format!(
            "before any run the card should say it has no quiet run: {before}"
        ));
    }
    // Half-second runs, two pairs at most: one A B B A block.
    js(
        client,
        &format!(
            "const r = document.querySelector('{root}');
             const b = r.querySelector('.pipebook-baseline');
             b.scrollIntoView({{ block: 'center' }});
             r.querySelector('input.pipebook-seconds').value = '0.5';
             b.querySelector('input.pipebook-baseline-budget').value = '2';
             b.querySelector('button.pipebook-baseline-until').click();
             return true;"
        ),
    )
    .await?;
    let held = wait_js(
        client,
        &format!(
            "const r = document.querySelector('{root}');
             return r.querySelector('.pipebook-baseline').dataset.state === 'busy'
               ? {{ run: r.querySelector('button.pipebook-run-button').disabled,
                    until: r.querySelector('button.pipebook-baseline-until').disabled }} : null;"
        ),
        Duration::from_secs(10),
        "the head-to-head to start",
    )
    .await?;
    if held != json!({"run": true, "until": true}) {
        return Err(format!(
            "the card's own runs should wait while the head-to-head goes: {held}"
        ));
    }
    let done = wait_js(
        client,
        &format!(
            "const b = document.querySelector('{root} .pipebook-baseline');
             const status = b.querySelector('.pipebook-baseline-status').textContent;
             if (status.startsWith('Error')) return 'error: ' + status;
             if (b.dataset.state !== 'idle' || !status) return null;
             const svg = b.querySelector('svg.pipebook-baseline-interval');
             return {{
               status,
               verdict: b.dataset.verdict ?? null,
               text: b.querySelector('.pipebook-baseline-text').textContent,
               drawn: !!svg?.querySelector('rect'),
               label: svg?.getAttribute('aria-label') ?? null,
               runEnabled: !document.querySelector('{root} button.pipebook-run-button').disabled,
             }};"
        ),
        Duration::from_secs(120),
        "the head-to-head against the baseline to end",
    )
    .await?;
    let status = done["status"].as_str().unwrap_or("");
    // Its runs had to run: none of this variant was on record before.
    if !(status.starts_with("Resolved after 2 pairs")
        || status.starts_with("Budget spent: 2 pairs"))
    {
        return Err(format!(
            "two pairs should run, then the card says resolved or budget spent: {done}"
        ));
    }
    let text = done["text"].as_str().unwrap_or("");
    let stated = text.starts_with(&format!("{AGAINST_BASELINE} is"))
        || text.starts_with(&format!("Not resolved: {AGAINST_BASELINE} is"));
    if !stated
        || !text.contains("write-read, the baseline")
        || !text.contains("95% interval")
        || !text.contains("quiet runs")
    {
        return Err(format!(
            "the card should state the step against the baseline with its interval: {done}"
        ));
    }
    let verdict = done["verdict"].as_str().unwrap_or("");
    if !["faster", "slower", "not_resolved"].contains(&verdict)
        || (status.starts_with("Resolved") == (verdict == "not_resolved"))
    {
        return Err(format!(
            "the verdict should match how the runs ended: {done}"
        ));
    }
    if done["drawn"] != true || done["label"].as_str() != Some(text) {
        return Err(format!(
            "the interval should be drawn, named by its sentence: {done}"
        ));
    }
    if done["runEnabled"] != true {
        return Err(format!("the card's own Run should be back: {done}"));
    }
    let path = screenshot_element(client, &root, "run-card-baseline").await?;
    let axe = crate::a11y::axe_source();
    crate::a11y::audit(client, &axe, "run card against the baseline").await?;
    println!("baseline: {text} | {status}; {}", path.display());
    Ok(())
}

#[tokio::test]
async fn the_sweep_card_states_its_best_against_its_worst_and_runs_until_resolved() {
    in_fresh_page("sweep-interval", sweep).await;
}

async fn sweep(page: &Page) -> TestResult {
    let client = &page.client;
    require_chapter(RUN_CHAPTER)?;
    open(client, &page.base, RUN_CHAPTER).await?;
    js(
        client,
        &format!(
            "const r = document.querySelector('{SWEEP}');
             r.scrollIntoView({{ block: 'center' }});
             r.querySelector('input.pipebook-sweep-values').value = '16KiB,1MiB';
             r.querySelector('input.pipebook-seconds').value = '0.5';
             r.querySelector('input.pipebook-sweep-repeats').value = '2';
             r.querySelector('button.pipebook-sweep-button').click();
             return true;"
        ),
    )
    .await?;
    let probe = format!(
        "const r = document.querySelector('{SWEEP}');
         const status = r.querySelector('.pipebook-status').textContent;
         if (r.dataset.state === 'error' || r.dataset.state === 'cancelled') return 'ended: ' + status;
         if (r.dataset.state !== 'done') return null;
         const svg = r.querySelector('svg.pipebook-sweep-interval');
         return {{
           status,
           verdict: r.dataset.verdict ?? null,
           text: r.querySelector('.pipebook-sweep-verdict').textContent,
           drawn: !!svg?.querySelector('rect'),
           label: svg?.getAttribute('aria-label') ?? null,
           until: !r.querySelector('button.pipebook-sweep-until').closest('[hidden]'),
         }};"
    );
    let first = wait_js(client, &probe, Duration::from_secs(90), "the sweep").await?;
    let text = first["text"].as_str().unwrap_or("");
    if !text.contains("95% interval")
        || first["drawn"] != true
        || first["label"].as_str() != Some(text)
    {
        return Err(format!(
            "two runs a value should state and draw the best against the worst: {first}"
        ));
    }
    if !first["status"].as_str().unwrap_or("").contains("(quiet)") || first["until"] != true {
        return Err(format!(
            "the sweep's runs are quiet and Run until resolved is offered: {first}"
        ));
    }
    js(
        client,
        &format!(
            "const r = document.querySelector('{SWEEP}');
             r.querySelector('input.pipebook-sweep-budget').value = '2';
             r.querySelector('button.pipebook-sweep-until').click();
             return true;"
        ),
    )
    .await?;
    // It ran (or was resolved already): the status says which, and the verdict matches.
    let after = wait_js(
        client,
        &format!(
            "const r = document.querySelector('{SWEEP}');
             const status = r.querySelector('.pipebook-status').textContent;
             return r.dataset.state === 'done' && /^(Resolved|Budget spent)/.test(status)
               ? {{ status, verdict: r.dataset.verdict ?? null }}
               : (r.dataset.state === 'error' ? 'ended: ' + status : null);"
        ),
        Duration::from_secs(90),
        "more runs of the best and the worst",
    )
    .await?;
    let status = after["status"].as_str().unwrap_or("");
    let verdict = after["verdict"].as_str().unwrap_or("");
    if status.starts_with("Resolved") == (verdict == "not_resolved") || verdict.is_empty() {
        return Err(format!(
            "the verdict should match how the runs ended: {after}"
        ));
    }
    let path = screenshot_element(client, SWEEP, "sweep-interval").await?;
    let axe = crate::a11y::axe_source();
    crate::a11y::audit(client, &axe, "sweep with its interval").await?;
    println!("sweep: {text} | {status}; {}", path.display());
    Ok(())
}

#[tokio::test]
async fn the_ipc_matrix_sets_one_mechanism_against_another_until_resolved() {
    in_fresh_page("ipc-versus", ipc_versus).await;
}

const MATRIX: &str = ".pipebook-ipc-matrix";

async fn ipc_versus(page: &Page) -> TestResult {
    let client = &page.client;
    require_chapter("zero-copy")?;
    open(client, &page.base, "zero-copy").await?;
    wait_js(
        client,
        &format!("return !!document.querySelector('{MATRIX} .pipebook-ipc-versus');"),
        Duration::from_secs(10),
        "the matrix's one-against-another part",
    )
    .await?;
    let before = js(
        client,
        &format!(
            "const v = document.querySelector('{MATRIX} .pipebook-ipc-versus');
             v.scrollIntoView({{ block: 'center' }});
             document.querySelector('{MATRIX} input.pipebook-ipc-bytes').value = '2MiB';
             v.querySelector('select.pipebook-ipc-versus-a').value = 'pipe-rw';
             v.querySelector('select.pipebook-ipc-versus-b').value = 'sysv-msgqueue';
             v.querySelector('select.pipebook-ipc-versus-b').dispatchEvent(new Event('change'));
             const text = v.querySelector('.pipebook-ipc-versus-text').textContent;
             v.querySelector('input.pipebook-ipc-versus-budget').value = '3';
             v.querySelector('button.pipebook-ipc-versus-until').click();
             return text;"
        ),
    )
    .await?;
    // Only the page's quiet runs count, and it says so.
    if !before.as_str().unwrap_or("").contains("has 0 quiet runs") {
        return Err(format!("before any run it should say none ran: {before}"));
    }
    let done = wait_js(
        client,
        &format!(
            "const v = document.querySelector('{MATRIX} .pipebook-ipc-versus');
             const status = v.querySelector('.pipebook-ipc-versus-status').textContent;
             if (status.startsWith('Error')) return 'error: ' + status;
             if (v.dataset.state !== 'idle' || !/^(Resolved|Budget spent)/.test(status)) return null;
             const svg = v.querySelector('svg.pipebook-ipc-versus-interval');
             return {{
               status,
               verdict: v.dataset.verdict ?? null,
               text: v.querySelector('.pipebook-ipc-versus-text').textContent,
               drawn: !!svg?.querySelector('rect'),
               label: svg?.getAttribute('aria-label') ?? null,
             }};"
        ),
        Duration::from_secs(120),
        "pipe-rw against sysv-msgqueue",
    )
    .await?;
    let text = done["text"].as_str().unwrap_or("");
    if !text.contains("pipe-rw is")
        || !text.contains("quiet runs)")
        || !text.contains("95% interval")
        || done["drawn"] != true
        || done["label"].as_str() != Some(text)
    {
        return Err(format!(
            "the two should be stated and drawn with their interval: {done}"
        ));
    }
    let status = done["status"].as_str().unwrap_or("");
    let verdict = done["verdict"].as_str().unwrap_or("");
    if status.starts_with("Resolved") == (verdict == "not_resolved") || verdict.is_empty() {
        return Err(format!(
            "the verdict should match how the runs ended: {done}"
        ));
    }
    let path = screenshot_element(client, MATRIX, "ipc-versus").await?;
    let axe = crate::a11y::axe_source();
    crate::a11y::audit(
        client,
        &axe,
        "IPC matrix with one mechanism against another",
    )
    .await?;
    println!("ipc versus: {text} | {status}; {}", path.display());
    Ok(())
}
