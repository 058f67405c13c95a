//! The viewer's page and its access (docs/spec/viewer.md): `GET /` (the single-page app, its
//! assets compiled into the binary from `src/ingress/viewer/`), the one-time code exchange
//! `GET /viewer/login?code=…` that sets the session cookie, logout, and `POST /api/viewer/code`
//! with which `memd open` (holding the bearer token) asks for a code.

use std::sync::Arc;

use axum::Extension;
use axum::Json;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::access::Caller;
use crate::clock::now_ms;
use crate::worker::WorkerState;
use crate::worker::viewer_access::{CODE_TTL_MS, COOKIE, SESSION_TTL_MS, cookie_value};

const INDEX: &str = include_str!("viewer/index.html");
/// The page's script: the views, browsing and the project filter, the freshness views (issue 38),
/// the work state (issue 39), the status charts, the graph's neighbourhood view and the corpora (issue 41), the team card (issue 40), then the
/// start-up lines.
const APP_JS: &str = concat!(
    include_str!("viewer/app.js"),
    include_str!("viewer/browse.js"),
    include_str!("viewer/freshness.js"),
    include_str!("viewer/work.js"),
    include_str!("viewer/charts.js"),
    include_str!("viewer/graph.js"),
    include_str!("viewer/corpus.js"),
    include_str!("viewer/team.js"),
    include_str!("viewer/boot.js")
);
const APP_CSS: &str = include_str!("viewer/app.css");

/// The viewer's own assets, as served (the budget is 200 KB; a unit test checks it).
pub const ASSETS: [&str; 3] = [INDEX, APP_JS, APP_CSS];

const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                   connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'";

fn hardened(mut resp: Response, content_type: &'static str) -> Response {
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

/// `GET /`: the page, carrying the session's CSRF token (never the bearer token).
pub async fn index(Extension(caller): Extension<Caller>) -> Response {
    let csrf = match &caller {
        Caller::Viewer(s) => s.csrf.as_str(),
        _ => "",
    };
    hardened(INDEX.replace("{{csrf}}", csrf).into_response(), "text/html; charset=utf-8")
}

pub async fn app_js() -> Response {
    hardened(APP_JS.into_response(), "text/javascript; charset=utf-8")
}

pub async fn app_css() -> Response {
    hardened(APP_CSS.into_response(), "text/css; charset=utf-8")
}

fn refused(why: &str) -> Response {
    let page = format!("<!doctype html><meta charset=utf-8><title>memd</title><p>{why} Run <code>memd open</code> for a new link.</p>");
    hardened((StatusCode::UNAUTHORIZED, page).into_response(), "text/html; charset=utf-8")
}

/// `GET /viewer/login?code=…`: spends the code, sets the cookie, sends the browser to `/` (so the
/// address bar and history keep only a spent code).
pub async fn login(State(app): State<Arc<WorkerState>>, Query(q): Query<Vec<(String, String)>>, headers: HeaderMap) -> Response {
    let Some(code) = q.iter().find(|(k, _)| k == "code").map(|(_, v)| v.as_str()) else {
        return refused("This link has no code.");
    };
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
    let Some(got) = app.viewer.exchange(code, host, now_ms()) else {
        return refused("This link was already used or has expired.");
    };
    tracing::info!("viewer session opened");
    let cookie = format!(
        "{COOKIE}={}; HttpOnly; SameSite=Strict; Path=/; Max-Age={}",
        got.cookie,
        SESSION_TTL_MS / 1000
    );
    let mut resp = (StatusCode::SEE_OTHER, [(header::LOCATION, "/")]).into_response();
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        resp.headers_mut().insert(header::SET_COOKIE, v);
    }
    hardened(resp, "text/plain; charset=utf-8")
}

/// `POST /viewer/logout`: ends the session and clears the cookie.
pub async fn logout(State(app): State<Arc<WorkerState>>, headers: HeaderMap) -> Response {
    let cookies = headers.get_all(header::COOKIE).iter().filter_map(|h| h.to_str().ok());
    for c in cookies.filter_map(|h| cookie_value(h, COOKIE)) {
        app.viewer.end(c);
    }
    let clear = format!("{COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0");
    let mut resp = Json(json!({"success": true})).into_response();
    if let Ok(v) = HeaderValue::from_str(&clear) {
        resp.headers_mut().insert(header::SET_COOKIE, v);
    }
    resp
}

/// `POST /api/viewer/code` (bearer token only): a one-time code and the URL that spends it.
pub async fn code(State(app): State<Arc<WorkerState>>) -> Json<Value> {
    let code = app.viewer.issue_code(now_ms());
    let url = format!("http://127.0.0.1:{}/viewer/login?code={code}", app.port());
    Json(json!({"code": code, "url": url, "expiresInMs": CODE_TTL_MS}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_s_own_assets_weigh_at_most_200_kb() {
        let total: usize = ASSETS.iter().map(|a| a.len()).sum();
        assert!(total <= 200 * 1024, "{total} bytes");
        assert!(INDEX.contains("{{csrf}}"));
    }
}
