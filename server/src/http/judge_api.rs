//! `GET /api/judge`: the runner's judgement of two sets of figures, for the
//! page's own "until resolved" paths (the results table, the IPC card, sweeps,
//! a lab's more runs), so the page shows what the runner judged and never
//! judges itself. Pure arithmetic: no token, no run, only the Host rule every
//! `/api` route has.
//!
//! `?paired=true|false&a=1.5,1.6,...&b=1.4,...[&look=I&looks=K]`: `a` and `b`
//! are positive finite numbers (at most [`MAX_VALUES`] a side); with `look`
//! and `looks` the judgement is look I of a sequential design of K looks fixed
//! in advance. The answer is a [`Judgement`]; bad input gets a 400 with
//! `{"error": "..."}` naming the field.

use std::collections::HashMap;

use axum::extract::rejection::QueryRejection;
use axum::extract::Query;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use pipebench::stats::verdict::{judge_paired, judge_unpaired, Design, Judgement};
use serde_json::json;

/// Most figures a side may hold (a comparison's most pairs).
pub(crate) const MAX_VALUES: usize = 200;

/// Why a judge request was refused: the field and what is wrong with it.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("{field}: {problem}")]
pub(crate) struct BadJudgeRequest {
    field: &'static str,
    problem: String,
}

fn bad(field: &'static str, problem: impl Into<String>) -> BadJudgeRequest {
    BadJudgeRequest {
        field,
        problem: problem.into(),
    }
}

fn values(
    query: &HashMap<String, String>,
    field: &'static str,
) -> Result<Vec<f64>, BadJudgeRequest> {
    let text = query
        .get(field)
        .ok_or_else(|| bad(field, "missing: give comma-separated positive numbers"))?;
    let values = text
        .split(',')
        .map(|v| match v.trim().parse::<f64>() {
            Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
            _ => Err(bad(field, format!("`{v}` is not a positive finite number"))),
        })
        .collect::<Result<Vec<f64>, _>>()?;
    if values.len() > MAX_VALUES {
        return Err(bad(
            field,
            format!("{} values is more than {MAX_VALUES}", values.len()),
        ));
    }
    Ok(values)
}

fn count(
    query: &HashMap<String, String>,
    field: &'static str,
) -> Result<Option<usize>, BadJudgeRequest> {
    query
        .get(field)
        .map(|v| {
            v.parse::<usize>()
                .map_err(|_| bad(field, format!("`{v}` is not a whole number")))
        })
        .transpose()
}

/// The judgement a query asks for, or what is wrong with it.
pub(crate) fn judge_query(query: &HashMap<String, String>) -> Result<Judgement, BadJudgeRequest> {
    let paired = match query.get("paired").map(String::as_str) {
        Some("true") => true,
        Some("false") => false,
        _ => return Err(bad("paired", "give paired=true or paired=false")),
    };
    let (a, b) = (values(query, "a")?, values(query, "b")?);
    let design = Design::of(count(query, "look")?, count(query, "looks")?)
        .map_err(|e| bad("look", e.to_string()))?;
    let judged = match paired {
        true => judge_paired(&a, &b, design),
        false => judge_unpaired(&a, &b, design),
    };
    judged.map_err(|e| bad("a", e.to_string()))
}

/// `GET /api/judge`.
pub(crate) async fn judge(
    query: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> Response {
    let answer = match query {
        Ok(Query(query)) => judge_query(&query),
        Err(rejection) => Err(bad("query", rejection.body_text())),
    };
    match answer {
        Ok(judgement) => Json(judgement).into_response(),
        Err(e) => (
            StatusCode::BAD_REQUEST,
            Json(json!({ "error": e.to_string(), "field": e.field })),
        )
            .into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_query_is_judged_or_refused_naming_its_field() {
        let got = judge_query(&query(&[
            ("paired", "true"),
            ("a", "2,2.1,2.05,1.95,2,2.02"),
            ("b", "1,1.1,1.05,0.95,1,1.02"),
        ]))
        .unwrap();
        assert_eq!(got.verdict, pipebench::stats::verdict::Verdict::Faster);
        let refused = |q: &[(&str, &str)]| judge_query(&query(q)).unwrap_err().field;
        assert_eq!(
            refused(&[("paired", "yes"), ("a", "1"), ("b", "1")]),
            "paired"
        );
        assert_eq!(
            refused(&[("paired", "true"), ("a", "1,-1"), ("b", "1,1")]),
            "a"
        );
        assert_eq!(
            refused(&[("paired", "false"), ("a", "1"), ("b", "inf")]),
            "b"
        );
        assert_eq!(
            refused(&[("paired", "false"), ("a", "1"), ("b", "1e400")]),
            "b"
        );
        assert_eq!(
            refused(&[("paired", "false"), ("a", "1"), ("b", "1"), ("look", "2")]),
            "look"
        );
        assert_eq!(
            refused(&[
                ("paired", "false"),
                ("a", "1"),
                ("b", "1"),
                ("look", "x"),
                ("looks", "3")
            ]),
            "look"
        );
        let many = vec!["1"; MAX_VALUES + 1].join(",");
        assert_eq!(
            refused(&[("paired", "false"), ("a", &many), ("b", "1")]),
            "a"
        );
        assert_eq!(
            refused(&[("paired", "true"), ("a", "1,2"), ("b", "1")]),
            "a"
        );
    }
}
