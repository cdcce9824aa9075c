//! A run whose CPUs were taken from it says so on the page: with a busy loop
//! pinned beside the writer, the run card's notes carry the machine state's
//! warning, with how much was taken, as the CLI prints it.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::queries;
use super::run_card::{start_run, wait_until_done};
use super::{
    in_fresh_page, js, open, require_chapter, screenshot_element, Page, TestResult, RUN_CHAPTER,
    RUN_STEP,
};

/// A busy loop pinned to one CPU, killed when dropped (a failed check included).
struct Spinner(Child);

impl Drop for Spinner {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn a_run_card_says_when_its_cpus_were_taken() {
    in_fresh_page("taken", taken).await;
}

async fn taken(page: &Page) -> TestResult {
    let client = &page.client;
    require_chapter(RUN_CHAPTER)?;
    open(client, &page.base, RUN_CHAPTER).await?;
    // The writer's CPU by default: the first the runner may use.
    let cpu = *pipebench::process::cpu::allowed_cpus()
        .first()
        .ok_or("no CPU allowed")?;
    let spinner = Spinner(
        Command::new("taskset")
            .args(["-c", &cpu.to_string(), "sh", "-c", "while :; do :; done"])
            .stdout(Stdio::null())
            .spawn()
            .map_err(|e| format!("taskset: {e}"))?,
    );
    tokio::time::sleep(Duration::from_millis(100)).await;
    start_run(client, "0.5").await?;
    let ended = wait_until_done(client, Duration::from_secs(60)).await;
    drop(spinner);
    ended?;
    let root = format!(".pipebook-run[data-step=\"{RUN_STEP}\"]");
    let warnings = js(client, &queries::warnings(&root)).await?;
    let said = warnings
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|w| w.as_str())
        .find(|w| w.starts_with("this run's CPUs were taken from it") && w.contains(" ms"));
    let Some(said) = said else {
        return Err(format!(
            "the card should say its CPUs were taken, and how much: {warnings}"
        ));
    };
    let path = screenshot_element(client, &root, "run-card-taken").await?;
    println!("taken: {said}; {}", path.display());
    Ok(())
}
