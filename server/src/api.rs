//! The JSON API and the WebSocket upgrade of `/api/run`.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{RawQuery, State};
use axum::http::header::{
    CACHE_CONTROL, CONTENT_DISPOSITION, CONTENT_SECURITY_POLICY, CONTENT_TYPE, ORIGIN,
};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde_json::{json, Value};

use crate::connections::Activity;
use crate::html::percent_decode;
use crate::labs::export;
use crate::labs::render;
use crate::labs::store::{now_ms, LabsState};
use crate::security::forbidden;
use crate::state::AppState;
use crate::ws;

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
pub async fn health(State(state): State<AppState>) -> Response {
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
pub async fn steps(State(state): State<AppState>) -> Response {
    json_bytes(state.steps_json.clone())
}

/// `GET /api/ipc`: the IPC lab's mechanisms and the bounds of its parameters.
pub async fn ipc(State(state): State<AppState>) -> Response {
    json_bytes(state.ipc_json.clone())
}

/// `GET /api/system`: this machine, as probed at start-up.
pub async fn system(State(state): State<AppState>) -> Response {
    json_bytes(state.system_json.clone())
}

/// `GET /api/results`: the history, oldest first.
pub async fn results(State(state): State<AppState>) -> Response {
    // Reading new lines touches the disk: keep it off the async threads.
    let history = Arc::clone(&state.history);
    match tokio::task::spawn_blocking(move || history.to_json()).await {
        Ok(json) => json_bytes(Bytes::from(json)),
        Err(err) => {
            tracing::error!("reading the results failed: {err}");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}

/// The `token` query parameter.
fn token_param(query: Option<&str>) -> Option<String> {
    query_param(query, "token")
}

/// A query parameter, percent-decoded.
fn query_param(query: Option<&str>, name: &str) -> Option<String> {
    query?
        .split('&')
        .find_map(|pair| pair.strip_prefix(name)?.strip_prefix('='))
        .map(percent_decode)
}

/// Every lab's state, read off the async threads.
async fn lab_state(state: &AppState) -> Result<LabsState, Response> {
    let store = Arc::clone(&state.labs);
    match tokio::task::spawn_blocking(move || store.state()).await {
        Ok(Ok(labs)) => Ok(labs),
        Ok(Err(err)) => {
            let err = crate::error_chain(&err);
            tracing::error!("reading the lab records failed: {err}");
            Err((
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("cannot read the lab records: {err}\n"),
            )
                .into_response())
        }
        Err(err) => {
            tracing::error!("reading the lab records failed: {err}");
            Err(StatusCode::INTERNAL_SERVER_ERROR.into_response())
        }
    }
}

/// `GET /api/labs`: every lab's prediction and measurements (the page judges
/// the checks itself, from the same definitions).
pub async fn labs(State(state): State<AppState>) -> Response {
    match lab_state(&state).await {
        Ok(labs) => json_bytes(Bytes::from(
            serde_json::to_vec(&labs).expect("lab state serialises"),
        )),
        Err(response) => response,
    }
}

/// The report of every lab, for `?student=NAME`.
async fn lab_report(state: &AppState, query: Option<&str>) -> Result<Value, Response> {
    let student = query_param(query, "student").unwrap_or_default();
    let student = export::student_name(&student).map_err(|err| {
        (
            StatusCode::BAD_REQUEST,
            format!("{err}: add ?student=YOUR+NAME\n"),
        )
            .into_response()
    })?;
    let labs = lab_state(state).await?;
    let system: Value = serde_json::from_slice(&state.system_json).unwrap_or(Value::Null);
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
pub async fn lab_report_json(State(state): State<AppState>, RawQuery(query): RawQuery) -> Response {
    match lab_report(&state, query.as_deref()).await {
        Ok(report) => download(
            "application/json",
            "pipebook-lab-report.json",
            serde_json::to_string_pretty(&report).expect("reports serialise"),
        ),
        Err(response) => response,
    }
}

/// `GET /api/labs/report.html?student=NAME`: the same report to read, a page
/// that runs no script, with a CSP that allows only its own style.
pub async fn lab_report_html(State(state): State<AppState>, RawQuery(query): RawQuery) -> Response {
    match lab_report(&state, query.as_deref()).await {
        Ok(report) => {
            let mut response = download(
                "text/html; charset=utf-8",
                "pipebook-lab-report.html",
                render::report_html(&report),
            );
            if let Ok(csp) = HeaderValue::from_str(&render::content_security_policy()) {
                response.headers_mut().insert(CONTENT_SECURITY_POLICY, csp);
            }
            response
        }
        Err(response) => response,
    }
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
pub async fn run_socket(
    State(state): State<AppState>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
    activity: Option<Extension<Arc<Activity>>>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    match headers.get(ORIGIN).map(|o| o.to_str()) {
        Some(Ok(origin)) if state.hosts.allows_origin(origin) => {}
        Some(origin) => {
            tracing::warn!(?origin, "refused a WebSocket from a foreign origin");
            return forbidden(format!(
                "the WebSocket's Origin {:?} is not this server's own page",
                origin.unwrap_or("(not text)")
            ));
        }
        None => {
            return forbidden("a WebSocket needs an Origin header from this server's page".into())
        }
    }
    match token_param(query.as_deref()) {
        Some(token) if state.token.matches(&token) => {}
        _ => {
            return forbidden(
                "missing or wrong token: reload the page this server serves and try again".into(),
            )
        }
    }
    let upgrade = match upgrade {
        Ok(upgrade) => upgrade,
        Err(rejection) => return rejection.into_response(),
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
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "pipebook: too many open WebSockets ({} are open, the limit, each with a run): \
                 close other pipebook tabs or wait for their runs, and reload this page\n",
                state.connections.max_websockets
            ),
        )
            .into_response();
    };
    let activity = activity.map(|Extension(activity)| activity);
    upgrade
        .max_message_size(ws::MAX_FRAME)
        .max_frame_size(ws::MAX_FRAME)
        .on_upgrade(move |socket| async move {
            let entry = state.websocket_slots.register();
            ws::serve(socket, state, ws::Watch { activity, entry }).await;
            drop(permit);
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_token_parameter() {
        assert_eq!(token_param(Some("a=1&token=ab%63")).as_deref(), Some("abc"));
        assert_eq!(token_param(Some("tokens=1")), None);
        assert_eq!(token_param(None), None);
        assert_eq!(
            query_param(Some("token=1&student=Ada%20L"), "student").as_deref(),
            Some("Ada L")
        );
    }
}
