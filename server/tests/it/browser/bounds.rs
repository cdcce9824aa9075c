//! The cards' own fields take their bounds and first values from the runner
//! (`/api/params`), not from figures the page types: the compare card's pairs
//! and budget, the latency cards' round trips, the sweep's runs per value.

use serde_json::Value;

use super::queries;
use super::{in_fresh_page, js, open, require_chapter, Page, TestResult, RUN_CHAPTER};

#[tokio::test]
async fn the_cards_fields_take_the_runners_bounds() {
    in_fresh_page("bounds", check_bounds).await;
}

/// Each chapter, the input in it, and where its bound sits in `/api/params`.
const FIELDS: [(&str, &str, &str); 5] = [
    (
        "your-machine",
        ".pipebook-compare input.pipebook-compare-pairs",
        "/compare/pairs",
    ),
    (
        "your-machine",
        ".pipebook-compare input.pipebook-compare-budget",
        "/compare/budget",
    ),
    (
        "latency",
        ".pipebook-latency[data-mechanism=\"pipe\"] input.pipebook-latency-trips",
        "/latency/round_trips",
    ),
    (
        "latency",
        "#pipebook-latency-matrix-trips",
        "/latency/matrix_round_trips",
    ),
    (
        RUN_CHAPTER,
        ".pipebook-sweep input.pipebook-sweep-repeats",
        "/sweep/repeats",
    ),
];

async fn check_bounds(page: &Page) -> TestResult {
    let client = &page.client;
    let mut opened = "";
    let mut params = Value::Null;
    for (chapter, input, path) in FIELDS {
        if chapter != opened {
            require_chapter(chapter)?;
            open(client, &page.base, chapter).await?;
            opened = chapter;
            params = js(client, &queries::api_params()).await?;
        }
        let bound = params
            .pointer(path)
            .ok_or_else(|| format!("/api/params has no {path}: {params}"))?;
        let shown = js(client, &queries::input_bounds(input)).await?;
        if shown.is_null() {
            return Err(format!("{chapter}.html has no {input}"));
        }
        for key in ["min", "max", "start"] {
            if shown[key].as_f64() != bound[key].as_f64() {
                return Err(format!(
                    "{chapter}.html {input}: the page's {key} is {}, the runner's {}",
                    shown[key], bound[key]
                ));
            }
        }
    }
    Ok(())
}
