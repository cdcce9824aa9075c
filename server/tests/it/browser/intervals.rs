//! Intervals where the cards state a ratio, every one as the runner judged it
//! (the page judges nothing). The run card: one live run, then "Run until
//! resolved" on the smallest budget of one-second quiet runs (one look of
//! six, a sequential design the card names and links to the chapter that
//! explains it); the card states its quiet runs against the article with their
//! 95% interval, draws it against 1.0, says what watching cost from the live
//! and quiet figures. A variant's run card against the baseline: "Run until
//! resolved" sends the two head to head in six quiet pairs, and the card states
//! and draws the runner's verdict. The sweep card: two values, two quiet runs
//! each, which cannot resolve at 95% and says so (no bar drawn), then pairs of
//! the two until resolved. The IPC matrix: one mechanism against another, run
//! in quiet pairs until resolved on 2 MiB runs, the interval drawn. All axe-clean.

use std::time::Duration;

use fantoccini::Client;
use serde_json::{json, Value};

use super::queries;
use super::run_card::{start_run, wait_until_done};
use super::{
    in_fresh_page, js, open, require_chapter, screenshot_element, Page, TestResult, RUN_CHAPTER,
    RUN_STEP,
};

const SWEEP: &str = ".pipebook-sweep[data-step=\"write-read\"][data-param=\"pipe_size\"]";

/// Where a card states a ratio with its interval: the part's selector, its
/// status line, its sentence and the class of its drawn interval.
pub(super) struct Stated<'a> {
    pub(super) part: &'a str,
    pub(super) status: String,
    pub(super) text: String,
    pub(super) svg: String,
}

impl<'a> Stated<'a> {
    /// A part whose status, sentence and drawn interval are named after one
    /// prefix: `.PREFIX-status`, `.PREFIX-text`, `svg.PREFIX-interval`.
    pub(super) fn of(part: &'a str, prefix: &str) -> Stated<'a> {
        Stated {
            part,
            status: format!(".{prefix}-status"),
            text: format!(".{prefix}-text"),
            svg: format!("{prefix}-interval"),
        }
    }

    /// Waits (at most `secs`) until `ready` (JavaScript over the part `e` and
    /// its status text `status`) holds, and reads what the part states:
    /// `{status, verdict, text, drawn, label}` and `extra` (more fields, over
    /// `e`). A status that starts with "Error" ends the wait as that error.
    async fn read(
        &self,
        client: &Client,
        ready: &str,
        extra: &str,
        secs: u64,
        what: &str,
    ) -> TestResult<Value> {
        let Stated {
            part,
            status,
            text,
            svg,
        } = self;
        let read = queries::stated_part(part, status, ready, svg, text, extra)
            .wait(client, Duration::from_secs(secs), what)
            .await?;
        if read.is_string() {
            return Err(format!("{what}: {read}"));
        }
        Ok(read)
    }

    /// Waits until the part's runs ended (idle again, its status saying how)
    /// and reads it as [`Stated::read`] does.
    pub(super) async fn ended(
        &self,
        client: &Client,
        extra: &str,
        what: &str,
    ) -> TestResult<Value> {
        let ready = "(e.dataset.state === 'idle' || e.dataset.state === 'done') && /^(Resolved|Budget spent)/.test(status)";
        self.read(client, ready, extra, 120, what).await
    }
}

/// What every part that states a ratio must show once its runs ended: its
/// sentence holds each of `needles` and its interval (95%, or at a look of a
/// sequential design that look's stricter level, which it names), the interval
/// is drawn and named by that sentence, and the verdict matches how the runs
/// ended (resolved, or the budget spent with the interval holding 1.0).
pub(super) fn check_stated(done: &Value, needles: &[&str], what: &str) -> TestResult {
    let text = done["text"].as_str().unwrap_or("");
    let interval = text.contains("95% interval")
        || text.contains("% interval")
            && text.contains("of a sequential design: each look judges at");
    if !interval || needles.iter().any(|n| !text.contains(n)) {
        return Err(format!(
            "{what} should state {needles:?} with its interval: {done}"
        ));
    }
    if done["drawn"] != true || done["label"].as_str().is_none_or(|l| !text.starts_with(l)) {
        return Err(format!(
            "{what}: the interval should be drawn, named by its sentence: {done}"
        ));
    }
    let status = done["status"].as_str().unwrap_or("");
    let verdict = done["verdict"].as_str().unwrap_or("");
    if !["faster", "slower", "not_resolved"].contains(&verdict)
        || (status.starts_with("Resolved") == (verdict == "not_resolved"))
    {
        return Err(format!(
            "{what}: the verdict should match how the runs ended: {done}"
        ));
    }
    Ok(())
}

/// Scrolls the part at `part` to the middle, runs `setup` (JavaScript over the
/// part `e`), types `budget` into its input `input.PREFIX-budget` and clicks
/// its button `button.PREFIX-until` (every part names its controls so).
pub(super) async fn run_until(
    client: &Client,
    part: &str,
    setup: &str,
    prefix: &str,
    budget: u32,
) -> TestResult {
    let (budget_css, until_css) = (
        format!("input.{prefix}-budget"),
        format!("button.{prefix}-until"),
    );
    js(
        client,
        &queries::run_until(part, setup, &budget_css, &until_css, budget),
    )
    .await
    .map(|_| ())
}

/// Takes the screenshot `shot` of `css` and audits the page with axe-core, as
/// `label`; returns the screenshot's path.
async fn shot_and_audit(
    client: &Client,
    css: &str,
    shot: &str,
    label: &str,
) -> TestResult<std::path::PathBuf> {
    let path = screenshot_element(client, css, shot).await?;
    crate::a11y::audit(client, &crate::a11y::axe_source(), label).await?;
    Ok(path)
}

#[tokio::test]
async fn the_run_card_runs_quiet_until_resolved_and_says_what_watching_cost() {
    in_fresh_page("run-evidence", evidence).await;
}

async fn evidence(page: &Page) -> TestResult {
    let client = &page.client;
    require_chapter(RUN_CHAPTER)?;
    open(client, &page.base, RUN_CHAPTER).await?;
    let root = format!(".pipebook-run[data-step=\"{RUN_STEP}\"]");
    let part = format!("{root} .pipebook-evidence");
    // 128 KiB per call, a configuration the other tests leave alone: its runs
    // in the shared history are this test's, so two quiet ones must still run.
    js(client, &queries::choose_128k_calls(&root))
        .await?
        .as_bool()
        .filter(|set| *set)
        .ok_or("the run card offers no 128 KiB bytes per call")?;
    // A live run first: the figure watching is charged to.
    start_run(client, "1").await?;
    wait_until_done(client, Duration::from_secs(90)).await?;
    let before = js(client, &queries::evidence_state(&part)).await?;
    if before != json!({"state": "idle", "until": false}) {
        return Err(format!(
            "after the live run, Run until resolved should be ready: {before}"
        ));
    }
    run_until(client, &part, "", "pipebook-evidence", 6).await?;
    // While the quiet runs go, the card's own Run waits.
    held_while_busy(
        client,
        &root,
        &part,
        "button.pipebook-run-button",
        "the quiet runs to start",
    )
    .await?;
    let stated = Stated::of(&part, "pipebook-evidence");
    let done = stated
        .ended(
            client,
            &format!(
                "watching: e.querySelector('.pipebook-watching').hidden ? null : e.querySelector('.pipebook-watching').textContent,
                 runEnabled: !document.querySelector('{root} button.pipebook-run-button').disabled,
                 design: e.querySelector('.pipebook-design-note a')?.getAttribute('href') ?? null,"
            ),
            "the quiet runs to end",
        )
        .await?;
    check_stated(
        &done,
        &[
            "Quiet runs here are",
            "the article's figure",
            "6 quiet runs",
        ],
        "the run card against the article",
    )?;
    // One look, planned before the first run: the card says which design it is.
    let status = done["status"].as_str().unwrap_or("");
    if !(status == "Resolved at look 1, after 6 quiet runs."
        || status == "Budget spent: 6 quiet runs in 1 look, not resolved.")
        || done["design"] != "comparing-runs.html"
        || !done["text"]
            .as_str()
            .unwrap_or("")
            .contains("Look 1 of 1 of a sequential design")
    {
        return Err(format!(
            "six quiet runs, one planned look, the design named and linked: {done}"
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
    let path = shot_and_audit(
        client,
        &root,
        "run-card-evidence",
        "run card with its interval",
    )
    .await?;
    println!(
        "run card: {} | {watching} | {}; {}",
        done["text"],
        done["status"],
        path.display()
    );
    Ok(())
}

/// Waits until the part at `part` is busy and checks that the card at `root`
/// holds its own button `own` meanwhile.
async fn held_while_busy(
    client: &Client,
    root: &str,
    part: &str,
    own: &str,
    what: &str,
) -> TestResult {
    let held = queries::held_while_busy(part, root, own)
        .wait(client, Duration::from_secs(10), what)
        .await?;
    if held != json!({"own": true}) {
        return Err(format!(
            "{what}: the card's own {own} should wait while these runs go: {held}"
        ));
    }
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
    let part = format!("{root} .pipebook-baseline");
    let before = queries::baseline_text(&part)
        .wait(
            client,
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
    // Half-second runs, six pairs at most: the fewest that can resolve.
    run_until(
        client,
        &part,
        &format!("document.querySelector('{root} input.pipebook-seconds').value = '0.5';"),
        "pipebook-baseline",
        6,
    )
    .await?;
    held_while_busy(
        client,
        &root,
        &part,
        "button.pipebook-run-button",
        "the head-to-head to start",
    )
    .await?;
    held_while_busy(
        client,
        &root,
        &part,
        "button.pipebook-baseline-until",
        "the head-to-head to start",
    )
    .await?;
    let stated = Stated::of(&part, "pipebook-baseline");
    let done = stated
        .ended(
            client,
            &format!("runEnabled: !document.querySelector('{root} button.pipebook-run-button').disabled,"),
            "the head-to-head against the baseline to end",
        )
        .await?;
    let status = done["status"].as_str().unwrap_or("");
    // Its runs had to run: none of this variant was on record before.
    if !(status.starts_with("Resolved") || status.starts_with("Budget spent: 6 pairs"))
        || !status.contains("6 pairs of quiet runs")
    {
        return Err(format!(
            "six pairs should run, then the card says resolved or budget spent: {done}"
        ));
    }
    check_stated(
        &done,
        &[AGAINST_BASELINE, "write-read, the baseline", "6 pairs"],
        "the step against the baseline",
    )?;
    if done["runEnabled"] != true {
        return Err(format!("the card's own Run should be back: {done}"));
    }
    let path = shot_and_audit(
        client,
        &root,
        "run-card-baseline",
        "run card against the baseline",
    )
    .await?;
    println!("baseline: {} | {status}; {}", done["text"], path.display());
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
    js(client, &queries::start_pipe_size_sweep(SWEEP)).await?;
    let stated = Stated {
        part: SWEEP,
        status: ".pipebook-status".into(),
        text: ".pipebook-sweep-verdict".into(),
        svg: "pipebook-sweep-interval".into(),
    };
    let first = stated
        .read(
            client,
            "['done', 'error', 'cancelled'].includes(e.dataset.state)",
            "state: e.dataset.state,
             until: !e.querySelector('button.pipebook-sweep-until').closest('[hidden]'),",
            90,
            "the sweep",
        )
        .await?;
    if first["state"] != "done" {
        return Err(format!("the sweep should end done: {first}"));
    }
    // Two runs a value cannot resolve at 95%: the card says so, and draws no bar.
    let text = first["text"].as_str().unwrap_or("");
    let too_few = "2 runs a side cannot resolve at 95%: at least 4 a side are needed.";
    if text != too_few || first["drawn"] != false || first["label"].as_str() != Some(too_few) {
        return Err(format!(
            "two runs a value should say they cannot resolve, with no bar drawn: {first}"
        ));
    }
    if !first["status"].as_str().unwrap_or("").contains("(quiet)") || first["until"] != true {
        return Err(format!(
            "the sweep's runs are quiet and Run until resolved is offered: {first}"
        ));
    }
    run_until(client, SWEEP, "", "pipebook-sweep", 6).await?;
    // It ran (or was resolved already): the status says which, and the verdict matches.
    let after = stated
        .ended(client, "", "more runs of the best and the worst")
        .await?;
    check_stated(
        &after,
        &["Best", "worst", "6 pairs", "sequential design"],
        "the sweep's best against its worst",
    )?;
    let path = shot_and_audit(client, SWEEP, "sweep-interval", "sweep with its interval").await?;
    println!("sweep: {text} | {}; {}", after["status"], path.display());
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
    let part = format!("{MATRIX} .pipebook-ipc-versus");
    queries::exists(&part)
        .wait(
            client,
            Duration::from_secs(10),
            "the matrix's one-against-another part",
        )
        .await?;
    let before = js(client, &queries::ipc_versus_pick(&part)).await?;
    // Only the page's quiet runs count, and it says so.
    if !before.as_str().unwrap_or("").contains("has 0 quiet runs") {
        return Err(format!("before any run it should say none ran: {before}"));
    }
    run_until(
        client,
        &part,
        &format!("document.querySelector('{MATRIX} input.pipebook-ipc-bytes').value = '2MiB';"),
        "pipebook-ipc-versus",
        6,
    )
    .await?;
    let stated = Stated::of(&part, "pipebook-ipc-versus");
    let done = stated
        .ended(client, "", "pipe-rw against sysv-msgqueue")
        .await?;
    check_stated(
        &done,
        &["pipe-rw is", "6 pairs)", "sequential design"],
        "one mechanism against another",
    )?;
    let path = shot_and_audit(
        client,
        MATRIX,
        "ipc-versus",
        "IPC matrix with one mechanism against another",
    )
    .await?;
    println!(
        "ipc versus: {} | {}; {}",
        done["text"],
        done["status"],
        path.display()
    );
    Ok(())
}

/// The IPC card and mechanism whose quiet runs are set against the survey.
const IPC_CHAPTER: &str = "zero-copy-shared";
const IPC_CARD: &str = ".pipebook-ipc[data-mechanism=\"posix-shm\"]";

#[tokio::test]
async fn the_ipc_card_sets_its_quiet_runs_against_the_survey_until_resolved() {
    in_fresh_page("ipc-survey", ipc_survey).await;
}

async fn ipc_survey(page: &Page) -> TestResult {
    let client = &page.client;
    require_chapter(IPC_CHAPTER)?;
    open(client, &page.base, IPC_CHAPTER).await?;
    let part = format!("{IPC_CARD} .pipebook-ipc-evidence");
    queries::survey_part_ready(&part)
        .wait(
            client,
            Duration::from_secs(10),
            "the IPC card's part against the survey",
        )
        .await?;
    // 2 MiB runs, six at most: one planned look. Only this sequence's runs
    // count (earlier ones were already looked at).
    run_until(
        client,
        &part,
        &format!("document.querySelector('{IPC_CARD} input.pipebook-ipc-bytes').value = '2MiB';"),
        "pipebook-ipc-evidence",
        6,
    )
    .await?;
    held_while_busy(
        client,
        IPC_CARD,
        &part,
        "button.pipebook-ipc-button",
        "the quiet runs against the survey to start",
    )
    .await?;
    let stated = Stated::of(&part, "pipebook-ipc-evidence");
    let done = stated
        .ended(
            client,
            &format!(
                "runEnabled: !document.querySelector('{IPC_CARD} button.pipebook-ipc-button').disabled,"
            ),
            "posix-shm's quiet runs against the survey",
        )
        .await?;
    let status = done["status"].as_str().unwrap_or("");
    if !(status == "Resolved at look 1, after 6 quiet runs."
        || status == "Budget spent: 6 quiet runs in 1 look, not resolved.")
    {
        return Err(format!(
            "the card should add six quiet 2 MiB runs and look once: {done}"
        ));
    }
    check_stated(
        &done,
        &[
            "Quiet runs of posix-shm here are",
            "the survey's rate",
            "6 quiet runs",
        ],
        "the IPC card against the survey",
    )?;
    if done["runEnabled"] != true {
        return Err(format!("the card's own Run should be back: {done}"));
    }
    let path = shot_and_audit(
        client,
        IPC_CARD,
        "ipc-survey-interval",
        "IPC card with its interval against the survey",
    )
    .await?;
    println!(
        "ipc survey: {} | {status}; {}",
        done["text"],
        path.display()
    );
    Ok(())
}

#[tokio::test]
async fn the_results_table_states_each_step_against_the_article_from_quiet_runs() {
    in_fresh_page("results-interval", results_interval).await;
}

/// Quiet runs of the baseline until resolved against the article (one look of
/// six), then, on a fresh load, the run card's judgement of all its quiet runs
/// (fixed design) and the results table's ÷ article for it: from the same
/// quiet runs only, the same interval from the runner, and the runs it used named.
async fn results_interval(page: &Page) -> TestResult {
    let client = &page.client;
    require_chapter(RUN_CHAPTER)?;
    require_chapter("your-machine")?;
    open(client, &page.base, RUN_CHAPTER).await?;
    let root = format!(".pipebook-run[data-step=\"{RUN_STEP}\"]");
    let part = format!("{root} .pipebook-evidence");
    // One quiet run of the card's own sizes first, so the card compares the
    // configuration the table takes (the newest quiet run's).
    js(client, &queries::tick_quiet(&root)).await?;
    start_run(client, "0.5").await?;
    wait_until_done(client, Duration::from_secs(60)).await?;
    run_until(client, &part, "", "pipebook-evidence", 6).await?;
    let stated = Stated::of(&part, "pipebook-evidence");
    let series = stated
        .ended(client, "", "the run card's quiet runs")
        .await?;
    check_stated(
        &series,
        &["Quiet runs here are"],
        "the run card against the article",
    )?;
    // A fresh load: the card judges every quiet run of its configuration at once.
    open(client, &page.base, RUN_CHAPTER).await?;
    let card = stated
        .read(
            client,
            "e.dataset.verdict !== undefined && e.querySelector('.pipebook-evidence-text').textContent.includes('95% interval')",
            "",
            30,
            "the run card's judgement of all its quiet runs",
        )
        .await?;
    open(client, &page.base, "your-machine").await?;
    let cell = queries::results_vs_article()
        .wait(
            client,
            Duration::from_secs(10),
            "the results table's ÷ article with its interval",
        )
        .await?;
    // "R (L to H)": the same figures the card states as "R× ... (95% interval L to H)".
    let figure = cell["figure"].as_str().unwrap_or("");
    let (ratio, interval) = figure
        .split_once(" (")
        .ok_or_else(|| format!("the cell should read ratio (low to high): {cell}"))?;
    let text = card["text"].as_str().unwrap_or("");
    let interval = interval.trim_end_matches(')');
    if !text.contains(&format!("{ratio}×")) || !text.contains(&format!("95% interval {interval}"))
    {
        return Err(format!(
            "the table and the card should state the same interval: {cell} | {text}"
        ));
    }
    let used = cell["used"].as_str().unwrap_or("");
    if cell["quiet"].as_u64().is_none_or(|n| n < 7)
        || !used.contains("quiet runs at")
        || !text.contains(&format!("{} quiet runs)", cell["quiet"]))
        || cell["verdict"].as_str() != card["verdict"].as_str()
    {
        return Err(format!(
            "the cell should name the quiet runs it used, as many as the card: {cell} | {text}"
        ));
    }
    if !cell["caption"]
        .as_str()
        .unwrap_or("")
        .contains("÷ article takes only quiet runs")
    {
        return Err(format!(
            "the caption should say ÷ article leaves watched runs out: {cell}"
        ));
    }
    let path = shot_and_audit(
        client,
        ".pipebook-results",
        "results-interval",
        "results table with intervals",
    )
    .await?;
    println!("results: {figure} | {used}; {}", path.display());
    Ok(())
}
