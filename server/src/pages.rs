//! Serves the built book: cached pages with their CSP, other files from disk.

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::header::{
    CACHE_CONTROL, CONTENT_LENGTH, CONTENT_SECURITY_POLICY, CONTENT_TYPE, LOCATION,
};
use axum::http::{HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use futures_util::{stream, Stream};
use tokio::io::AsyncReadExt;

use crate::app::AppState;
use crate::site::{content_type, Page, Resolved};

fn page_response(status: StatusCode, page: &Page) -> Response {
    (
        status,
        [
            (
                CONTENT_TYPE,
                HeaderValue::from_static("text/html; charset=utf-8"),
            ),
            (CONTENT_SECURITY_POLICY, page.csp.clone()),
            // The token changes on every start: a cached page would carry a dead one.
            (CACHE_CONTROL, HeaderValue::from_static("no-store")),
        ],
        page.body.clone(),
    )
        .into_response()
}

/// Any path that is not an API route.
pub async fn serve(State(state): State<AppState>, method: Method, uri: Uri) -> Response {
    if method != Method::GET && method != Method::HEAD {
        return (
            StatusCode::METHOD_NOT_ALLOWED,
            [(axum::http::header::ALLOW, "GET, HEAD")],
            "pipebook: only GET and HEAD are served here\n",
        )
            .into_response();
    }
    match state.site.resolve(uri.path()) {
        Resolved::Page(page) => page_response(StatusCode::OK, page),
        Resolved::File(path) => match tokio::fs::File::open(&path).await {
            Ok(file) => {
                let length = file.metadata().await.map(|m| m.len()).ok();
                let mut response = (
                    [
                        (CONTENT_TYPE, HeaderValue::from_static(content_type(&path))),
                        (CACHE_CONTROL, HeaderValue::from_static("no-cache")),
                    ],
                    Body::from_stream(chunks(file)),
                )
                    .into_response();
                if let Some(length) = length {
                    response.headers_mut().insert(CONTENT_LENGTH, length.into());
                }
                response
            }
            Err(err) => {
                tracing::warn!("cannot read {}: {err}", path.display());
                not_found(&state)
            }
        },
        Resolved::Redirect(to) => match HeaderValue::from_str(&to) {
            Ok(location) => {
                (StatusCode::PERMANENT_REDIRECT, [(LOCATION, location)]).into_response()
            }
            Err(_) => not_found(&state),
        },
        Resolved::NotFound => not_found(&state),
    }
}

/// A file as a stream of 64 KiB chunks: a 3.5 MiB Mermaid bundle never sits
/// whole in memory, which keeps the server's resident size small.
fn chunks(file: tokio::fs::File) -> impl Stream<Item = std::io::Result<Bytes>> {
    stream::unfold(Some(file), |file| async move {
        let mut file = file?;
        let mut buffer = vec![0u8; 64 * 1024];
        match file.read(&mut buffer).await {
            Ok(0) => None,
            Ok(n) => {
                buffer.truncate(n);
                Some((Ok(Bytes::from(buffer)), Some(file)))
            }
            Err(err) => Some((Err(err), None)),
        }
    })
}

fn not_found(state: &AppState) -> Response {
    match state.site.not_found_page() {
        Some(page) => page_response(StatusCode::NOT_FOUND, page),
        None => (StatusCode::NOT_FOUND, "pipebook: no such page\n").into_response(),
    }
}
