//! The JSON API and the WebSocket upgrade of `/api/run`.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{Query, State};
use axum::http::header::{
    CACHE_CONTROL, CONTENT_DISPOSITION, CONTENT_SECURITY_POLICY, CONTENT_TYPE, ORIGIN,
};
use axum::http::{HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::connections::Activity;
use crate::error::AppError;
use crate::jobs::ws;
use crate::labs::export;
use crate::labs::render;
use crate::labs::store::LabsState;
use crate::state::AppState;
use crate::store::jsonl::now_ms;

/// The query of `/api/run`: the page's token.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct TokenQuery {
    token: Option<String>,
}

/// The query of the lab report downloads.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct StudentQuery {
    student: Option<String>,
}

fn json_bytes(body: Bytes) -> Response {
    (
        [
            (CONTENT_TYPE, HeaderValue::from_static("application/json")),
            (CACHE_CONTROL, HeaderValue::from_static("no-store")),
        ],
        body,
    )
        .into_response()
}

/// `GET /api/health`: the server answers, whether a run is going and how many
/// wait, and whether results are being saved (`saving`; when not,
/// `saving_error {kind, message}` says why).
pub(crate) async fn health(State(state): State<AppState>) -> Response {
    let (running, queued) = state.scheduler.status();
    let problem = state.history.saving().problem();
    let mut body = json!({
        "status": "ok",
        "version": env!("CARGO_PKG_VERSION"),
        "running": running,
        "queued": queued,
        "saving": problem.is_none(),
    });
    if let Some(problem) = problem {
        body["saving_error"] = json!(problem);
    }
    (
        [(CACHE_CONTROL, HeaderValue::from_static("no-store"))],
        Json(body),
    )
        .into_response()
}

/// `GET /api/steps`: the catalog.
pub(crate) async fn steps(State(state): State<AppState>) -> Response {
    json_bytes(state.steps_json.clone())
}

/// `GET /api/params`: the bounds and first values of the cards' own fields
/// (compare, latency, sweep).
pub(crate) async fn params() -> Response {
    json_bytes(Bytes::from(crate::http::page_params::published_json()))
}

/// `GET /api/ipc`: the IPC lab's mechanisms and the bounds of its parameters.
pub(crate) async fn ipc(State(state): State<AppState>) -> Response {
    json_bytes(state.ipc_json.clone())
}

/// `GET /api/tools`: the vetted tool table (`id`, `title`, `program`, `present`,
/// `sides`), looked up on `PATH` now, so a tool installed since start shows.
pub(crate) async fn tools() -> Result<Response, AppError> {
    let table = tokio::task::spawn_blocking(crate::jobs::tool::tool_table).await?;
    Ok(json_bytes(Bytes::from(
        serde_json::to_vec(&table).expect("the tool table serialises"),
    )))
}

/// `GET /api/tuned`: the tuned variants searches found, this server's and, read
/// again from `tuned.jsonl` when it changed, those of another server on the
/// same state folder.
pub(crate) async fn tuned(State(state): State<AppState>) -> Result<Response, AppError> {
    let tuned = std::sync::Arc::clone(&state.tuned);
    let list = tokio::task::spawn_blocking(move || {
        tuned.refresh_logged();
        tuned.list()
    })
    .await?;
    Ok(json_bytes(Bytes::from(
        serde_json::to_vec(&list).expect("variants serialise"),
    )))
}

/// `GET /api/system`: this machine, as probed at start-up (its behaviour as
/// last probed: a page's `probe` job replaces it).
pub(crate) async fn system(State(state): State<AppState>) -> Response {
    json_bytes(state.system.json())
}

/// How long `/api/precheck` watches the runner's CPUs.
const PRECHECK_SAMPLE: Duration = Duration::from_millis(300);

/// `GET /api/precheck`: what would make this machine noisy for a comparison or
/// a lab, and what to do about it (`advice`: sentences, empty when nothing was
/// seen), from the governor, boost and a short look at steal and other work on
/// the CPUs a run is pinned to.
pub(crate) async fn precheck(State(state): State<AppState>) -> Result<Response, AppError> {
    let cpus: Vec<usize> = pipebench::steps::plan::RunPlan::for_step_id(
        "write-read",
        &pipebench::steps::plan::RunParams::default(),
        &state.limits,
    )
    .map(|plan| [plan.writer.common.cpu, plan.reader.common.cpu])
    .into_iter()
    .flatten()
    .flatten()
    .collect();
    let advice = tokio::task::spawn_blocking(move || {
        pipebench::machine::state::precheck(&cpus, PRECHECK_SAMPLE)
    })
    .await?;
    Ok(Json(json!({ "advice": advice })).into_response())
}

/// `GET /api/results`: the history, oldest first.
pub(crate) async fn results(State(state): State<AppState>) -> Result<Response, AppError> {
    // Reading new lines touches the disk: keep it off the async threads.
    let history = Arc::clone(&state.history);
    let json = tokio::task::spawn_blocking(move || history.to_json()).await?;
    Ok(json_bytes(Bytes::from(json)))
}

/// Every lab's state, read off the async threads.
async fn lab_state(state: &AppState) -> Result<LabsState, AppError> {
    let store = Arc::clone(&state.labs);
    tokio::task::spawn_blocking(move || store.state())
        .await?
        .map_err(|err| AppError::LabRecords(crate::error_chain(&err)))
}

/// `GET /api/labs`: every lab's prediction and measurements, and its checks
/// as the runner judged them (`checks`, a ratio's `judged` among them).
pub(crate) async fn labs(State(state): State<AppState>) -> Result<Response, AppError> {
    let labs = lab_state(&state).await?;
    let body = crate::labs::checks::with_judged_checks(&labs, &state.system.behaviour());
    Ok(json_bytes(Bytes::from(
        serde_json::to_vec(&body).expect("lab state serialises"),
    )))
}

/// The report of every lab, for `?student=NAME`.
async fn lab_report(state: &AppState, query: StudentQuery) -> Result<Value, AppError> {
    let student = query.student.unwrap_or_default();
    let student =
        export::student_name(&student).map_err(|err| AppError::Student(err.to_string()))?;
    let labs = lab_state(state).await?;
    let system = state.system.report();
    Ok(export::build(&labs, system, &student, now_ms()))
}

/// A download: `Content-Disposition: attachment` with a file name.
fn download(content_type: &'static str, name: &str, body: String) -> Response {
    (
        [
            (CONTENT_TYPE, HeaderValue::from_static(content_type)),
            (CACHE_CONTROL, HeaderValue::from_static("no-store")),
            (
                CONTENT_DISPOSITION,
                HeaderValue::from_str(&format!("attachment; filename=\"{name}\""))
                    .unwrap_or(HeaderValue::from_static("attachment")),
            ),
        ],
        body,
    )
        .into_response()
}

/// `GET /api/labs/report.json?student=NAME`: the lab report, sealed with its digest.
pub(crate) async fn lab_report_json(
    State(state): State<AppState>,
    Query(query): Query<StudentQuery>,
) -> Result<Response, AppError> {
    let report = lab_report(&state, query).await?;
    Ok(download(
        "application/json",
        "pipebook-lab-report.json",
        serde_json::to_string_pretty(&report).expect("reports serialise"),
    ))
}

/// `GET /api/labs/report.html?student=NAME`: the same report to read, a page
/// that runs no script, with a CSP that allows only its own style.
pub(crate) async fn lab_report_html(
    State(state): State<AppState>,
    Query(query): Query<StudentQuery>,
) -> Result<Response, AppError> {
    let report = lab_report(&state, query).await?;
    let mut response = download(
        "text/html; charset=utf-8",
        "pipebook-lab-report.html",
        render::report_html(&report),
    );
    if let Ok(csp) = HeaderValue::from_str(&render::content_security_policy()) {
        response.headers_mut().insert(CONTENT_SECURITY_POLICY, csp);
    }
    Ok(response)
}

/// How long a new page waits for a stale WebSocket it displaced to close.
const MAKE_ROOM_WAIT: Duration = Duration::from_secs(2);

/// `GET /api/run?token=TOKEN`: upgrades to the run protocol, but only for our
/// own pages: the Origin must be this server (a foreign page's script could
/// otherwise open the socket: browsers do not apply CORS to WebSockets) and the
/// token must be the one injected into the pages we served. At the cap on open
/// WebSockets, the stalest one (a message stuck half-way, else the one idle the
/// longest; never one with a run) is asked to close for the newcomer; only when
/// none can be is the answer 503 with the reason.
pub(crate) async fn run_socket(
    State(state): State<AppState>,
    headers: HeaderMap,
    query: Result<Query<TokenQuery>, QueryRejection>,
    activity: Option<Extension<Arc<Activity>>>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    match headers.get(ORIGIN).map(|o| o.to_str()) {
        Some(Ok(origin)) if state.hosts.allows_origin(origin) => {}
        Some(origin) => {
            tracing::warn!(?origin, "refused a WebSocket from a foreign origin");
            return AppError::Forbidden(format!(
                "the WebSocket's Origin {:?} is not this server's own page",
                origin.unwrap_or("(not text)")
            ))
            .into_response();
        }
        None => {
            return AppError::Forbidden(
                "a WebSocket needs an Origin header from this server's page".into(),
            )
            .into_response()
        }
    }
    // A query that does not parse carries no token either.
    let Query(query) = query.unwrap_or_default();
    match query.token {
        Some(token) if state.token.matches(&token) => {}
        _ => {
            return AppError::Forbidden(
                "missing or wrong token: reload the page this server serves and try again".into(),
            )
            .into_response()
        }
    }
    let upgrade = match upgrade {
        Ok(upgrade) => upgrade,
        Err(rejection) => return AppError::from(rejection).into_response(),
    };
    // Each open socket holds a file descriptor and a task: cap them, and make
    // room for a new page by dropping a stale one rather than refusing it.
    let permit = match Arc::clone(&state.websockets).try_acquire_owned() {
        Ok(permit) => Some(permit),
        Err(_) if state.websocket_slots.evict_one(None) => tokio::time::timeout(
            MAKE_ROOM_WAIT,
            Arc::clone(&state.websockets).acquire_owned(),
        )
        .await
        .ok()
        .and_then(Result::ok),
        Err(_) => None,
    };
    let Some(permit) = permit else {
        tracing::warn!(
            "refused a WebSocket: {} are open already, each with a run",
            state.connections.max_websockets
        );
        return AppError::TooManyWebSockets(state.connections.max_websockets).into_response();
    };
    let activity = activity.map(|Extension(activity)| activity);
    upgrade
        .max_message_size(ws::MAX_FRAME)
        .max_frame_size(ws::MAX_FRAME)
        .on_upgrade(move |socket| async move {
            let entry = state.websocket_slots.register();
            ws::serve(
                socket,
                state,
                ws::Presence {
                    activity,
                    registration: entry,
                },
            )
            .await;
            drop(permit);
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::Uri;

    fn query<T: serde::de::DeserializeOwned>(uri: &str) -> Option<T> {
        Query::<T>::try_from_uri(&uri.parse::<Uri>().unwrap())
            .ok()
            .map(|Query(q)| q)
    }

    #[test]
    fn reads_the_token_and_student_parameters() {
        let token: TokenQuery = query("/api/run?a=1&token=ab%63").unwrap();
        assert_eq!(token.token.as_deref(), Some("abc"));
        let none: TokenQuery = query("/api/run?tokens=1").unwrap();
        assert_eq!(none.token, None);
        let student: StudentQuery = query("/r?token=1&student=Ada%20L").unwrap();
        assert_eq!(student.student.as_deref(), Some("Ada L"));
        // A form's `+` is a space, as browsers send it.
        let student: StudentQuery = query("/r?student=Ada+L").unwrap();
        assert_eq!(student.student.as_deref(), Some("Ada L"));
    }
}
