//! The HTTP application: the routes, and the checks every request passes.

use axum::extract::{Request, State};
use axum::http::header::{HOST, REFERRER_POLICY, X_CONTENT_TYPE_OPTIONS};
use axum::http::HeaderValue;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use tower_http::compression::CompressionLayer;

use crate::error::AppError;
use crate::http::{api, serve_book};
use crate::state::AppState;

/// The routes, behind the Host check and the common headers.
pub fn router(state: AppState) -> Router {
    // The JSON API, gzipped when the client accepts it (`/api/steps` is about 37 KB
    // of JSON and a phone on a slow link feels it); the WebSocket upgrade stays out.
    let json = Router::new()
        .route("/api/health", get(api::health))
        .route("/api/steps", get(api::steps))
        .route("/api/system", get(api::system))
        .route("/api/ipc", get(api::ipc))
        .route("/api/params", get(api::params))
        .route("/api/tools", get(api::tools))
        .route("/api/tuned", get(api::tuned))
        .route("/api/results", get(api::results))
        .route("/api/labs", get(api::labs))
        .route("/api/precheck", get(api::precheck))
        .route("/api/judge", get(crate::http::judge_api::judge))
        .route("/api/labs/report.json", get(api::lab_report_json))
        .route("/api/labs/report.html", get(api::lab_report_html))
        .layer(CompressionLayer::new());
    Router::new()
        .merge(json)
        .route("/api/run", get(api::run_socket))
        // The book, compressed too (Mermaid's 3.5 MB go out as about 1 MB).
        .merge(
            Router::new()
                .fallback(serve_book::serve)
                .layer(CompressionLayer::new()),
        )
        .layer(middleware::from_fn_with_state(state.clone(), guard))
        .with_state(state)
}

/// Refuses requests for foreign host names (DNS rebinding: a page on
/// evil.example whose name now resolves to 127.0.0.1 would otherwise be
/// same-origin with us), then sets the headers every response carries.
async fn guard(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let host = request
        .headers()
        .get(HOST)
        .and_then(|h| h.to_str().ok())
        .or_else(|| request.uri().authority().map(|a| a.as_str()))
        .map(str::to_string);
    let mut response = match host {
        Some(host) if state.hosts.allows_host(&host) => next.run(request).await,
        host => {
            tracing::warn!(?host, "refused a request for a foreign host");
            AppError::Forbidden(format!(
                "pipebook answers only to {} (port {}), not to host {}: \
                 this protects the runner from DNS rebinding",
                state.hosts.names().join(", "),
                state.hosts.port(),
                host.map_or("(none)".into(), |h| format!("`{h}`")),
            ))
            .into_response()
        }
    };
    let headers = response.headers_mut();
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}
