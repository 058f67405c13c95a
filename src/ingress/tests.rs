//! In-process checks of the request guard: the phase rules (503 while initializing and while
//! shutting down) that a real worker passes through too quickly to observe from outside.

use crate::protocol::paths;
use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use tower::ServiceExt;

use super::router;
use crate::worker::{Phase, WorkerState};

fn req(method: &str, path: &str, token: Option<&str>) -> Request<Body> {
    let mut b = Request::builder().method(method).uri(path).header("host", "127.0.0.1:1");
    if let Some(t) = token {
        b = b.header("authorization", format!("Bearer {t}"));
    }
    b.header("content-type", "application/json").body(Body::from("{}")).unwrap()
}

#[tokio::test]
async fn initializing_answers_503_except_health() {
    let app = Arc::new(WorkerState::new("tok".into(), 0));
    let r = router(app.clone())
        .oneshot(req("POST", "/api/sessions/observations", Some("tok")))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(r.headers()["retry-after"], "1");
    let body = axum::body::to_bytes(r.into_body(), 1 << 20).await.unwrap();
    assert_eq!(serde_json::from_slice::<serde_json::Value>(&body).unwrap()["error"], "initializing");
    let h = router(app.clone()).oneshot(req("GET", paths::HEALTH, None)).await.unwrap();
    assert_eq!(h.status(), StatusCode::OK);
    let r = router(app.clone()).oneshot(req("GET", paths::READINESS, None)).await.unwrap();
    assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
    // The token is checked before readiness: no information leaks to a caller without it.
    let r = router(app.clone()).oneshot(req("GET", paths::STATUS, None)).await.unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    app.set_phase(Phase::ShuttingDown);
    let r = router(app).oneshot(req("GET", paths::STATUS, Some("tok"))).await.unwrap();
    let body = axum::body::to_bytes(r.into_body(), 1 << 20).await.unwrap();
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&body).unwrap()["error"],
        "shutting_down"
    );
}

#[tokio::test]
async fn unknown_routes_and_methods_answer_json() {
    let app = Arc::new(WorkerState::new("tok".into(), 0));
    app.set_phase(Phase::Ready);
    let r = router(app.clone()).oneshot(req("GET", "/api/nope", Some("tok"))).await.unwrap();
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    let r = router(app).oneshot(req("GET", "/api/sessions/init", Some("tok"))).await.unwrap();
    assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED);
    let body = axum::body::to_bytes(r.into_body(), 1 << 20).await.unwrap();
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&body).unwrap()["error"],
        "method_not_allowed"
    );
}
