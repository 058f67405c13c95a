//! The JSON error answer of every route: `{"error":"<code>","detail":"<one sentence>"}` (docs/spec/api.md §2.2).

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::ingest::IngestError;
use crate::protocol::api::Invalid;
use crate::retrieval::RetrievalError;
use crate::store::StoreError;
use crate::worker::Unavailable;

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
    pub fn internal(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", detail)
    }
}

impl From<Unavailable> for ApiError {
    fn from(e: Unavailable) -> Self {
        let code = match e {
            Unavailable::Initializing => "initializing",
            Unavailable::ShuttingDown => "shutting_down",
        };
        Self::new(StatusCode::SERVICE_UNAVAILABLE, code, e.to_string())
    }
}

impl From<IngestError> for ApiError {
    fn from(e: IngestError) -> Self {
        match e {
            IngestError::Invalid(detail) => Self::bad_request(detail),
            IngestError::Store(e) => e.into(),
            IngestError::Pipeline => Self::internal("privacy processing failed"),
        }
    }
}

impl From<RetrievalError> for ApiError {
    fn from(e: RetrievalError) -> Self {
        match e {
            RetrievalError::Invalid(m) => Self::bad_request(m),
            RetrievalError::NotFound(m) => Self::not_found(m),
            RetrievalError::Store(e) => e.into(),
            RetrievalError::Sqlite(e) => {
                tracing::error!(error = %e, "retrieval query failed");
                Self::internal("retrieval query failed")
            }
        }
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
            StoreError::Damaged(_) => Self::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "damaged",
                "the database is damaged; writes are refused (run `memd repair`; hooks spool meanwhile)",
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
