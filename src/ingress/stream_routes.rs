//! `GET /stream` (docs/spec/api.md §7): server-sent events of what is stored, for the viewer and
//! any other client. Each client gets its own task that polls the feed ([`crate::retrieval::feed`])
//! from its cursor — `Last-Event-ID` (or `?since=`) on a reconnect, the database's head otherwise —
//! into a 256-frame buffer; a client that lets the buffer fill is disconnected (it reconnects and
//! resumes from its last id). The task ends on shutdown, so graceful shutdown never waits on a
//! viewer. At most [`MAX_CLIENTS`] streams at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::stream;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::error::ApiError;
use crate::clock::now_ms;
use crate::retrieval::feed::Cursor;
use crate::worker::{VERSION, WorkerState};

pub const MAX_CLIENTS: usize = 16;
const BUFFER: usize = 256;
const POLL: Duration = Duration::from_millis(250);
const KEEPALIVE: Duration = Duration::from_secs(15);

/// One connected client (the count drops when its task ends, however it ends).
struct Client(Arc<AtomicUsize>);

impl Drop for Client {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

fn frame(id: Option<&str>, mut data: Value) -> Event {
    data["timestamp"] = json!(now_ms());
    let e = Event::default().data(data.to_string());
    match id {
        Some(id) => e.id(id),
        None => e,
    }
}

/// `isProcessing` and `queueDepth` over the live session actors.
fn processing(app: &WorkerState) -> Option<(bool, i64)> {
    let svc = app.services().ok()?;
    let depth: i64 = svc.registry.sessions.iter().map(|s| s.queue_depth + s.in_flight).sum();
    Some((depth > 0, depth))
}

/// Polls the feed from `cursor` into `tx` until the client leaves, falls behind, or the worker stops.
async fn feed(app: Arc<WorkerState>, mut cursor: Cursor, tx: mpsc::Sender<Event>, _client: Client) {
    let connected = json!({"type": "connected", "version": VERSION});
    if tx.try_send(frame(Some(&cursor.to_id()), connected)).is_err() {
        return;
    }
    let mut last_status = None;
    loop {
        tokio::select! {
            _ = app.shutdown.cancelled() => return,
            _ = tx.closed() => return,
            _ = tokio::time::sleep(POLL) => {}
        }
        let Ok(svc) = app.services() else { return };
        let events = match svc.storage.feed_since(cursor).await {
            Ok((events, next)) => {
                cursor = next;
                events
            }
            Err(e) => {
                tracing::warn!(error = %e, "stream poll failed");
                continue;
            }
        };
        for e in events {
            if tx.try_send(frame(Some(&e.id), e.data)).is_err() {
                tracing::info!("stream client fell behind or left; disconnected");
                return;
            }
        }
        let status = processing(&app);
        if status != last_status {
            if let Some((busy, depth)) = status {
                let data = json!({"type": "processing_status", "isProcessing": busy, "queueDepth": depth});
                if tx.try_send(frame(None, data)).is_err() {
                    return;
                }
            }
            last_status = status;
        }
    }
}

/// `GET /stream`.
pub async fn stream(
    State(app): State<Arc<WorkerState>>,
    Query(q): Query<Vec<(String, String)>>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let svc = app.services()?;
    let resume = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .or_else(|| q.iter().find(|(k, _)| k == "since").map(|(_, v)| v.clone()));
    let start = match resume.as_deref().and_then(Cursor::parse) {
        Some(c) => c,
        None => svc.storage.feed_head().await?,
    };
    let counter = app.stream_clients.clone();
    if counter.fetch_add(1, Ordering::Relaxed) >= MAX_CLIENTS {
        counter.fetch_sub(1, Ordering::Relaxed);
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "too_many_streams",
            format!("at most {MAX_CLIENTS} stream clients at once"),
        ));
    }
    let client = Client(counter);
    let (tx, rx) = mpsc::channel(BUFFER);
    tokio::spawn(feed(app.clone(), start, tx, client));
    let events = stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|e| (Ok::<_, std::convert::Infallible>(e), rx))
    });
    let mut resp = Sse::new(events)
        .keep_alive(KeepAlive::new().interval(KEEPALIVE).text("keepalive"))
        .into_response();
    resp.headers_mut()
        .insert("x-accel-buffering", axum::http::HeaderValue::from_static("no"));
    Ok(resp)
}
