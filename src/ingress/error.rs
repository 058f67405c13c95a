//! The JSON error answer of every route: `{"error":"<code>","detail":"<one sentence>"}` (docs/spec/api.md §2.2).

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::protocol::api::Invalid;
use crate::store::StoreError;

#[derive(Debug, Clone)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub detail: String,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, detail: impl Into<String>) -> Self {
        Self {
            status,
            code,
            detail: detail.into(),
        }
    }
    pub fn bad_request(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "bad_request", detail)
    }
    pub fn not_found(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", detail)
    }
    pub fn initializing() -> Self {
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "initializing",
            "the worker is starting; retry shortly",
        )
    }
    pub fn shutting_down() -> Self {
        Self::new(StatusCode::SERVICE_UNAVAILABLE, "shutting_down", "the worker is shutting down")
    }
}

impl From<Invalid> for ApiError {
    fn from(e: Invalid) -> Self {
        Self::bad_request(e.0)
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Overloaded => Self::new(StatusCode::SERVICE_UNAVAILABLE, "overloaded", "the store's write queue is full"),
            StoreError::ReadOnly | StoreError::NewerSchema { .. } => Self::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "unavailable",
                "database was written by a newer memd; ingest is disabled",
            ),
            StoreError::Unavailable(_) | StoreError::Closed => {
                Self::new(StatusCode::SERVICE_UNAVAILABLE, "unavailable", "the store could not commit")
            }
            other => {
                tracing::error!(error = %other, "store error");
                Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", "internal store error")
            }
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({"error": self.code, "detail": self.detail}).to_string();
        let mut resp = (self.status, [(header::CONTENT_TYPE, "application/json")], body).into_response();
        let h = resp.headers_mut();
        match self.status {
            StatusCode::SERVICE_UNAVAILABLE => {
                h.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            }
            StatusCode::UNAUTHORIZED => {
                h.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            StatusCode::PAYLOAD_TOO_LARGE => {
                h.insert(header::CONNECTION, HeaderValue::from_static("close"));
            }
            _ => {}
        }
        resp
    }
}
