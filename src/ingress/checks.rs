//! Cross-cutting request checks, in the order of docs/spec/api.md §2.1: Host, Origin, token, readiness,
//! body size. Pure predicates first (unit tested), then the axum middleware that applies them.

use crate::protocol::paths;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::access::{Caller, Denied, authorize};
use super::error::ApiError;
use crate::clock::now_ms;
use crate::worker::{Phase, Unavailable, WorkerState};

pub const MAX_BODY_BYTES: usize = 5 * 1024 * 1024;

/// `localhost` (any case), `127.0.0.1` or `[::1]`, optionally with `:<digits>`.
pub fn host_allowed(host: Option<&str>) -> bool {
    let Some(host) = host else { return false };
    let (name, port) = match host.rsplit_once(':') {
        Some((n, p)) if !n.ends_with(':') && (n.starts_with('[') || !n.contains(':')) => (n, Some(p)),
        _ => (host, None),
    };
    let port_ok = port.is_none_or(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    port_ok && (name.eq_ignore_ascii_case("localhost") || name == "127.0.0.1" || name == "[::1]")
}

/// Absent, or exactly `http://localhost:<port>`, `http://127.0.0.1:<port>`, `http://[::1]:<port>`.
pub fn origin_allowed(origin: Option<&str>, port: u16) -> bool {
    match origin {
        None => true,
        Some(o) => [
            format!("http://localhost:{port}"),
            format!("http://127.0.0.1:{port}"),
            format!("http://[::1]:{port}"),
        ]
        .iter()
        .any(|a| a == o),
    }
}

/// Constant-time comparison of the presented bearer token with ours.
pub fn token_matches(presented: &[u8], ours: &[u8]) -> bool {
    if presented.len() != ours.len() {
        return false;
    }
    presented.iter().zip(ours).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
}

/// 401: JSON for the API, a short page for a browser that opened the viewer without a session.
fn unauthorized(path: &str) -> Response {
    if path == "/" || path.starts_with(paths::VIEWER_PREFIX) {
        let page = "<!doctype html><meta charset=utf-8><title>memd</title><p>This viewer needs a session. \
                    Run <code>memd open</code> in a terminal: it opens a one-time link.</p>";
        return (StatusCode::UNAUTHORIZED, [(header::CONTENT_TYPE, "text/html; charset=utf-8")], page).into_response();
    }
    ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", "missing or wrong bearer token").into_response()
}

/// Counts a request in flight; the count drops even when the request future is cancelled.
struct Arrival(Arc<std::sync::atomic::AtomicUsize>);

impl Arrival {
    fn new(counter: &Arc<std::sync::atomic::AtomicUsize>) -> Self {
        counter.fetch_add(1, Ordering::Relaxed);
        Self(counter.clone())
    }
}

impl Drop for Arrival {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

pub async fn guard(State(app): State<Arc<WorkerState>>, req: Request, next: Next) -> Response {
    let headers = req.headers();
    if !host_allowed(headers.get(header::HOST).and_then(|h| h.to_str().ok())) {
        return ApiError::new(StatusCode::FORBIDDEN, "forbidden_host", "the Host header must name localhost").into_response();
    }
    let port = app.port();
    let origin = headers.get(header::ORIGIN).map(|o| o.to_str().unwrap_or("\u{0}").to_string());
    if !origin_allowed(origin.as_deref(), port) {
        return ApiError::new(StatusCode::FORBIDDEN, "forbidden_origin", "cross-origin requests are refused").into_response();
    }
    let path = req.uri().path().to_string();
    if req.method() == Method::OPTIONS {
        let mut resp = StatusCode::NO_CONTENT.into_response();
        if let Some(o) = origin.as_deref().and_then(|o| HeaderValue::from_str(o).ok()) {
            let h = resp.headers_mut();
            h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, o);
            h.insert(header::VARY, HeaderValue::from_static("Origin"));
            h.insert(
                header::ACCESS_CONTROL_ALLOW_METHODS,
                HeaderValue::from_static("GET, POST, PATCH, DELETE, OPTIONS"),
            );
            h.insert(
                header::ACCESS_CONTROL_ALLOW_HEADERS,
                HeaderValue::from_static("Authorization, Content-Type, X-CSRF-Token"),
            );
            h.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("600"));
        }
        return resp;
    }
    let caller = authorize(req.method(), &path, req.uri().query(), headers, &app.token, &app.viewer, now_ms());
    let caller = match caller {
        Ok(c) => c,
        Err(Denied::Unauthorized) => return unauthorized(&path),
        Err(Denied::Csrf) => {
            return ApiError::new(StatusCode::FORBIDDEN, "csrf", "a viewer's mutating request needs its X-CSRF-Token").into_response();
        }
        Err(Denied::BearerOnly) => {
            return ApiError::new(StatusCode::FORBIDDEN, "bearer_only", "this route takes the bearer token only").into_response();
        }
    };
    if caller != Caller::Open && path != "/" {
        match app.phase() {
            Phase::Initializing => return ApiError::from(Unavailable::Initializing).into_response(),
            Phase::ShuttingDown => return ApiError::from(Unavailable::ShuttingDown).into_response(),
            Phase::Ready => {}
        }
    }
    let too_long = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .is_some_and(|n| n > MAX_BODY_BYTES as u64);
    if too_long {
        return ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large", "the body exceeds 5 MiB").into_response();
    }
    if let Some(ct) = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()) {
        let media = ct.split(';').next().unwrap_or("").trim();
        if !media.eq_ignore_ascii_case("application/json") && req.method() != Method::GET {
            return ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                "bodies must be application/json",
            )
            .into_response();
        }
    }
    let _arrival = (req.method() == Method::POST).then(|| Arrival::new(&app.counters.arrivals));
    let req = match read_body(req, app.body_timeout).await {
        Ok(req) => req,
        Err(resp) => return resp,
    };
    let mut req = req;
    req.extensions_mut().insert(caller);
    let mut resp = next.run(req).await;
    if let Some(o) = origin.as_deref().and_then(|o| HeaderValue::from_str(o).ok()) {
        resp.headers_mut().insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, o);
        resp.headers_mut().insert(header::VARY, HeaderValue::from_static("Origin"));
    }
    resp
}

/// Reads a request's body within `timeout` (a client that stalls mid-body gets 408 and the
/// connection closes) and hands the route a complete one; GET and HEAD pass as they are.
async fn read_body(req: Request, timeout: std::time::Duration) -> Result<Request, Response> {
    if matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS) {
        return Ok(req);
    }
    let (parts, body) = req.into_parts();
    match tokio::time::timeout(timeout, axum::body::to_bytes(body, MAX_BODY_BYTES + 1)).await {
        Ok(Ok(bytes)) => Ok(Request::from_parts(parts, Body::from(bytes))),
        Ok(Err(_)) => Err(ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large", "the body exceeds 5 MiB").into_response()),
        Err(_) => {
            let mut resp = ApiError::new(StatusCode::REQUEST_TIMEOUT, "request_timeout", "the body did not arrive in time").into_response();
            resp.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
            Err(resp)
        }
    }
}

/// Reads the body, counting bytes (413 past 5 MiB), and parses one JSON object (empty = `{}`).
pub async fn json_body<T: serde::de::DeserializeOwned>(body: Body) -> Result<T, ApiError> {
    let bytes = axum::body::to_bytes(body, MAX_BODY_BYTES)
        .await
        .map_err(|_| ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large", "the body exceeds 5 MiB"))?;
    let value: serde_json::Value = if bytes.iter().all(u8::is_ascii_whitespace) {
        serde_json::Value::Object(Default::default())
    } else {
        serde_json::from_slice(&bytes)
            .map_err(|e| ApiError::bad_request(format!("malformed JSON: {}", crate::protocol::api::describe_json_error(&e))))?
    };
    if !value.is_object() {
        return Err(ApiError::bad_request("the body must be a JSON object"));
    }
    serde_json::from_value(value).map_err(|e| ApiError::bad_request(crate::protocol::api::describe_json_error(&e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts() {
        for ok in ["localhost", "LOCALHOST:37842", "127.0.0.1:1", "[::1]", "[::1]:80"] {
            assert!(host_allowed(Some(ok)), "{ok}");
        }
        for bad in ["evil.example:37842", "localhost.evil.com", "127.0.0.1:", "127.0.0.1:x", "", "::1"] {
            assert!(!host_allowed(Some(bad)), "{bad}");
        }
        assert!(!host_allowed(None));
    }

    #[test]
    fn origins() {
        assert!(origin_allowed(None, 5));
        assert!(origin_allowed(Some("http://localhost:5"), 5));
        assert!(!origin_allowed(Some("http://localhost:6"), 5));
        assert!(!origin_allowed(Some("http://localhost.evil.com"), 5));
        assert!(!origin_allowed(Some("null"), 5));
    }

    #[test]
    fn tokens() {
        assert!(token_matches(b"abc", b"abc"));
        assert!(!token_matches(b"abd", b"abc"));
        assert!(!token_matches(b"ab", b"abc"));
    }
}
