//! Who may call a route (docs/spec/viewer.md §2): the bearer token (the CLI, the hook, MCP, tests),
//! `?token=` on `/stream` (non-browser SSE clients), or a viewer session cookie whose mutating
//! requests echo the session's CSRF token in `X-CSRF-Token`. A pure decision, unit tested here;
//! [`super::checks::guard`] applies it.

use crate::protocol::paths;
use axum::http::{HeaderMap, Method, header};

use super::checks::token_matches;
use crate::worker::viewer_access::{COOKIE, ViewerAccess, ViewerSession, cookie_value};

/// The header a viewer's mutating requests carry its CSRF token in.
pub const CSRF_HEADER: &str = "x-csrf-token";

/// Who is calling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// A path anyone on loopback may call (health, readiness, the code exchange).
    Open,
    /// The bearer token, in the header or (on `/stream`) the query.
    Bearer,
    /// A browser with a viewer session cookie.
    Viewer(ViewerSession),
}

/// Why a request is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Denied {
    /// No (valid) token or cookie: 401.
    Unauthorized,
    /// A viewer's mutating request without its CSRF token: 403.
    Csrf,
    /// A route only the bearer token may call (admin, minting codes): 403 for a viewer.
    BearerOnly,
}

fn open_path(path: &str) -> bool {
    matches!(path, paths::HEALTH | paths::READINESS | paths::VIEWER_LOGIN)
}

fn bearer_only(path: &str) -> bool {
    path.starts_with(paths::ADMIN_PREFIX) || path == paths::VIEWER_CODE
}

fn mutating(m: &Method) -> bool {
    !matches!(*m, Method::GET | Method::HEAD | Method::OPTIONS)
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?
        .strip_prefix("Bearer ")
        .map(str::trim)
}

/// `token=` of a query string.
fn query_token(query: Option<&str>) -> Option<&str> {
    query?.split('&').find_map(|kv| kv.strip_prefix("token="))
}

/// The caller of a request, or why it is refused.
pub fn authorize(
    method: &Method,
    path: &str,
    query: Option<&str>,
    headers: &HeaderMap,
    token: &str,
    viewer: &ViewerAccess,
    now_ms: i64,
) -> Result<Caller, Denied> {
    if open_path(path) {
        return Ok(Caller::Open);
    }
    let presented = bearer(headers).or_else(|| (path == paths::STREAM).then(|| query_token(query)).flatten());
    if presented.is_some_and(|t| token_matches(t.as_bytes(), token.as_bytes())) {
        return Ok(Caller::Bearer);
    }
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
    let session = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|h| h.to_str().ok())
        .filter_map(|h| cookie_value(h, COOKIE))
        .find_map(|c| viewer.session(c, host, now_ms))
        .ok_or(Denied::Unauthorized)?;
    if bearer_only(path) {
        return Err(Denied::BearerOnly);
    }
    if mutating(method) {
        let echoed = headers.get(CSRF_HEADER).and_then(|h| h.to_str().ok()).unwrap_or("");
        if !token_matches(echoed.as_bytes(), session.csrf.as_bytes()) {
            return Err(Denied::Csrf);
        }
    }
    Ok(Caller::Viewer(session))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    const HOST: &str = "127.0.0.1:9";

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::HOST, HeaderValue::from_static(HOST));
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    fn viewer() -> (ViewerAccess, String, String) {
        let v = ViewerAccess::default();
        let code = v.issue_code(0);
        let got = v.exchange(&code, HOST, 1).unwrap();
        (v, got.cookie, got.session.csrf)
    }

    #[test]
    fn bearer_header_or_stream_query_token() {
        let v = ViewerAccess::default();
        let h = headers(&[("authorization", "Bearer tok")]);
        assert_eq!(authorize(&Method::POST, paths::FORGET, None, &h, "tok", &v, 5), Ok(Caller::Bearer));
        let none = headers(&[]);
        assert_eq!(
            authorize(&Method::GET, paths::STREAM, Some("a=1&token=tok"), &none, "tok", &v, 5),
            Ok(Caller::Bearer)
        );
        assert_eq!(
            authorize(&Method::GET, paths::SEARCH, Some("token=tok"), &none, "tok", &v, 5),
            Err(Denied::Unauthorized),
            "?token= is for /stream only"
        );
        assert_eq!(authorize(&Method::GET, "/", None, &none, "tok", &v, 5), Err(Denied::Unauthorized));
        assert_eq!(authorize(&Method::GET, paths::HEALTH, None, &none, "tok", &v, 5), Ok(Caller::Open));
    }

    #[test]
    fn a_viewer_cookie_reads_and_mutates_only_with_its_csrf_token() {
        let (v, cookie, csrf) = viewer();
        let c = format!("{COOKIE}={cookie}");
        let h = headers(&[("cookie", &c)]);
        assert!(matches!(
            authorize(&Method::GET, "/", None, &h, "tok", &v, 5),
            Ok(Caller::Viewer(_))
        ));
        assert_eq!(
            authorize(&Method::DELETE, "/api/observation/1", None, &h, "tok", &v, 5),
            Err(Denied::Csrf)
        );
        let bad = headers(&[("cookie", &c), (CSRF_HEADER, "nope")]);
        assert_eq!(
            authorize(&Method::POST, paths::MEMORY_SAVE, None, &bad, "tok", &v, 5),
            Err(Denied::Csrf)
        );
        let good = headers(&[("cookie", &c), (CSRF_HEADER, &csrf)]);
        assert!(matches!(
            authorize(&Method::POST, paths::MEMORY_SAVE, None, &good, "tok", &v, 5),
            Ok(Caller::Viewer(_))
        ));
        assert_eq!(
            authorize(&Method::POST, paths::GC, None, &good, "tok", &v, 5),
            Err(Denied::BearerOnly)
        );
        assert_eq!(
            authorize(&Method::POST, paths::VIEWER_CODE, None, &good, "tok", &v, 5),
            Err(Denied::BearerOnly)
        );
        let forged = headers(&[("cookie", "memd_viewer=forged"), (CSRF_HEADER, &csrf)]);
        assert_eq!(authorize(&Method::GET, "/", None, &forged, "tok", &v, 5), Err(Denied::Unauthorized));
    }
}
