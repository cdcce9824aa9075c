//! The one error an HTTP answer can be: each kind becomes its status and its
//! sentence here and nowhere else ([`IntoResponse`]), and a fault of the server
//! rather than of the request is logged on the way.

use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::http::header::ALLOW;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

/// Why a request gets no answer of its own.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AppError {
    /// Not for whoever asked: a foreign Host (DNS rebinding), a WebSocket from
    /// a foreign Origin or without the page's token. The reason says which.
    #[error("pipebook: forbidden: {0}")]
    Forbidden(String),
    /// The request named no student, or a name the reports do not accept.
    #[error("{0}: add ?student=YOUR+NAME")]
    Student(String),
    /// Every WebSocket the cap allows is open, and each has a run: none can
    /// make room.
    #[error(
        "pipebook: too many open WebSockets ({0} are open, the limit, each with a run): \
         close other pipebook tabs or wait for their runs, and reload this page"
    )]
    TooManyWebSockets(usize),
    /// `/api/run` asked for something that is no WebSocket upgrade.
    #[error("{0}")]
    NotAnUpgrade(#[from] WebSocketUpgradeRejection),
    /// A method other than GET or HEAD on the book.
    #[error("pipebook: only GET and HEAD are served here")]
    MethodNotAllowed,
    /// No page or file of the book, and no 404 page in the book to show.
    #[error("pipebook: no such page")]
    NoSuchPage,
    /// The lab records could not be read.
    #[error("cannot read the lab records: {0}")]
    LabRecords(String),
    /// A blocking task died (a panic): nothing to say but that it failed.
    #[error("the server failed to answer: {0}")]
    Task(#[from] tokio::task::JoinError),
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let status = match &self {
            AppError::Forbidden(_) => StatusCode::FORBIDDEN,
            AppError::Student(_) => StatusCode::BAD_REQUEST,
            AppError::TooManyWebSockets(_) => StatusCode::SERVICE_UNAVAILABLE,
            // axum's own status and words for it.
            AppError::NotAnUpgrade(rejection) => {
                return (rejection.status(), rejection.body_text()).into_response()
            }
            AppError::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            AppError::NoSuchPage => StatusCode::NOT_FOUND,
            AppError::LabRecords(_) | AppError::Task(_) => {
                tracing::error!("{self}");
                StatusCode::INTERNAL_SERVER_ERROR
            }
        };
        let mut response = (status, format!("{self}\n")).into_response();
        if matches!(self, AppError::MethodNotAllowed) {
            response
                .headers_mut()
                .insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_error_answers_with_its_status() {
        for (error, status) in [
            (AppError::Forbidden("no".into()), StatusCode::FORBIDDEN),
            (AppError::Student("no name".into()), StatusCode::BAD_REQUEST),
            (
                AppError::TooManyWebSockets(4),
                StatusCode::SERVICE_UNAVAILABLE,
            ),
            (AppError::MethodNotAllowed, StatusCode::METHOD_NOT_ALLOWED),
            (AppError::NoSuchPage, StatusCode::NOT_FOUND),
            (
                AppError::LabRecords("disk".into()),
                StatusCode::INTERNAL_SERVER_ERROR,
            ),
        ] {
            let said = error.to_string();
            let response = error.into_response();
            assert_eq!(response.status(), status, "{said}");
        }
        let refused = AppError::MethodNotAllowed.into_response();
        assert_eq!(refused.headers().get(ALLOW).unwrap(), "GET, HEAD");
    }
}
