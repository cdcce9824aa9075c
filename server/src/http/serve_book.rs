//! Serves the built book: cached pages with their CSP, other files from disk.
//!
//! Which path maps to what (and that nothing escapes the book) is decided by
//! [`crate::http::site`]; the files themselves are served by tower-http's `ServeFile`,
//! which streams them and answers `If-Modified-Since` with 304, so a second visit
//! does not fetch the 3.5 MB Mermaid bundle again. Compression is a layer in
//! [`crate::http::app`].

use axum::extract::{Request, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, LOCATION};
use axum::http::{HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use tower::ServiceExt;
use tower_http::services::ServeFile;

use crate::error::AppError;
use crate::http::site::{content_type, Page, Resolved};
use crate::state::AppState;

/// The `Cache-Control` of every book page (with the token in it).
pub(crate) const PAGE_CACHE_CONTROL: &str = "no-cache, private";

fn page_response(status: StatusCode, page: &Page) -> Response {
    (
        status,
        [
            (
                CONTENT_TYPE,
                HeaderValue::from_static("text/html; charset=utf-8"),
            ),
            (CONTENT_SECURITY_POLICY, page.csp.clone()),
            // The token changes on every start, so a page must never be reused from
            // the HTTP cache without asking (no-cache: pages carry no validator, so
            // asking fetches it anew) nor kept by a shared cache (private). Unlike
            // no-store, this leaves the back/forward cache free to restore the
            // page a reader returns to, scripts and cards as they were.
            (CACHE_CONTROL, HeaderValue::from_static(PAGE_CACHE_CONTROL)),
        ],
        page.body.clone(),
    )
        .into_response()
}

/// Any path that is not an API route.
pub(crate) async fn serve(State(state): State<AppState>, request: Request) -> Response {
    let method = request.method().clone();
    if method != Method::GET && method != Method::HEAD {
        return AppError::MethodNotAllowed.into_response();
    }
    let path = request.uri().path().to_string();
    match state.site.resolve(&path) {
        Resolved::Page(page) => page_response(StatusCode::OK, &page),
        Resolved::File(file) => {
            let kind = HeaderValue::from_static(content_type(&file));
            // Infallible: ServeFile turns I/O errors into responses itself.
            let Ok(mut response) = ServeFile::new(&file).oneshot(request).await;
            if response.status() == StatusCode::NOT_FOUND {
                tracing::warn!("cannot read {}", file.display());
                return not_found(&state);
            }
            let has_body = response_has_body(response.status());
            let headers = response.headers_mut();
            if has_body {
                headers.insert(CONTENT_TYPE, kind);
            }
            // Revalidate every time (a 304 is cheap on loopback): a rebuilt book
            // is never hidden behind a stale copy.
            headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
            response.into_response()
        }
        Resolved::Redirect(to) => match HeaderValue::from_str(&to) {
            Ok(location) => {
                (StatusCode::PERMANENT_REDIRECT, [(LOCATION, location)]).into_response()
            }
            Err(_) => not_found(&state),
        },
        Resolved::NotFound => not_found(&state),
    }
}

/// Whether a response of this status carries the file (not a 304).
fn response_has_body(status: StatusCode) -> bool {
    status.is_success()
}

fn not_found(state: &AppState) -> Response {
    match state.site.not_found_page() {
        Some(page) => page_response(StatusCode::NOT_FOUND, &page),
        None => AppError::NoSuchPage.into_response(),
    }
}
