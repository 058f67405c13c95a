//! Talking to the worker from a hook (docs/spec/hooks.md §2.5): one blocking request per connection on
//! 127.0.0.1, bounded by the run's budget, and the outcome table for ingest events — acknowledged,
//! spooled, or rejected. Read requests simply fail to `None`.

use serde_json::Value;

use super::autostart;
use super::breaker;
use super::env::{Budget, HookEnv};
use super::event::IngestEvent;
use super::signals::{self, Guard};
use super::spool_write::{reject, spool};
use crate::client::http::{self, HttpError, Request, Response};

const USER_AGENT: &str = concat!("memd-hook/", env!("CARGO_PKG_VERSION"));

/// What the worker did with a request.
#[derive(Debug)]
pub enum Exchange {
    Answered(Response),
    /// Nothing listens, or the token is missing: worth an auto-start.
    Unreachable,
    /// Timeout, reset, malformed answer.
    Broken(String),
}

/// When a handler may start the worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// Never (`file-context`, `complete`).
    Never,
    /// Start and wait for readiness within the budget, then retry once (`context`, `session-init`).
    AndWait,
    /// Start without waiting and spool the event; the worker ingests the spool at start.
    AndHandOff,
}

pub fn exchange(hook: &HookEnv<'_>, method: &str, path: &str, body: Option<&[u8]>, budget: &Budget) -> Exchange {
    let Some(token) = hook.token() else {
        return Exchange::Unreachable;
    };
    if breaker::is_open(&hook.dir) {
        return Exchange::Broken("the worker timed out moments ago (hook breaker open)".into());
    }
    let left = budget.left();
    if left.is_zero() {
        return Exchange::Broken("budget spent".into());
    }
    let addr = hook.addr();
    let host = format!("127.0.0.1:{}", addr.port());
    let req = Request {
        method,
        path,
        host: Some(&host),
        token: Some(&token),
        headers: vec![("User-Agent", USER_AGENT.to_string())],
        body,
    };
    match http::send(addr, &req, left) {
        Ok(r) => {
            breaker::close(&hook.dir);
            Exchange::Answered(r)
        }
        Err(HttpError::Timeout) => {
            breaker::trip(&hook.dir);
            Exchange::Broken("timed out".into())
        }
        Err(HttpError::Connect { source, .. }) if source.kind() == std::io::ErrorKind::ConnectionRefused => Exchange::Unreachable,
        Err(e) => Exchange::Broken(e.to_string()),
    }
}

fn may_start(hook: &HookEnv<'_>, start: Start) -> bool {
    start != Start::Never && autostart::enabled(hook)
}

/// A read request: a 2xx answer, or `None` on any failure left after the auto-start attempt.
pub fn fetch(
    hook: &HookEnv<'_>,
    handler: &str,
    method: &str,
    path: &str,
    body: Option<&[u8]>,
    budget: &Budget,
    start: Start,
) -> Option<Response> {
    let mut answer = exchange(hook, method, path, body, budget);
    if matches!(answer, Exchange::Unreachable) && may_start(hook, start) {
        if start == Start::AndWait && autostart::start_and_wait(hook, handler, budget) {
            answer = exchange(hook, method, path, body, budget);
        } else if start == Start::AndHandOff {
            autostart::spawn_once(hook, handler);
        }
    }
    match answer {
        Exchange::Answered(r) if (200..300).contains(&r.status) => Some(r),
        _ => None,
    }
}

/// Delivers an ingest event; spools or rejects it when the worker does not acknowledge it.
/// Returns the 2xx answer's JSON body when acknowledged.
pub fn deliver(hook: &HookEnv<'_>, event: &mut IngestEvent, budget: &Budget, start: Start) -> Option<Value> {
    // A signal before the acknowledgement spools the event (§2.7).
    let guard = signals::arm(hook, event);
    let bytes = event.serialized();
    let mut answer = exchange(hook, "POST", event.route.path(), Some(&bytes), budget);
    if matches!(answer, Exchange::Unreachable) && may_start(hook, start) {
        match start {
            Start::AndWait if autostart::start_and_wait(hook, event.handler, budget) => {
                answer = exchange(hook, "POST", event.route.path(), Some(&bytes), budget);
            }
            Start::AndHandOff => {
                autostart::spawn_once(hook, event.handler);
            }
            _ => {}
        }
    }
    match answer {
        Exchange::Answered(r) if (200..300).contains(&r.status) => {
            guard.done();
            Some(r.json().unwrap_or(Value::Null))
        }
        Exchange::Answered(r) if matches!(r.status, 400 | 413 | 415 | 422) => {
            finish(&guard, || reject(hook, event, r.status));
            None
        }
        Exchange::Answered(r) => {
            finish(&guard, || spool(hook, event, &format!("worker answered {}", r.status)));
            None
        }
        Exchange::Unreachable => {
            finish(&guard, || spool(hook, event, "worker not reachable"));
            None
        }
        Exchange::Broken(why) => {
            finish(&guard, || spool(hook, event, &why));
            None
        }
    }
}

/// Writes the unacknowledged event unless a signal's watcher already took it (then the process is
/// exiting: wait for it).
fn finish(guard: &Guard, write: impl FnOnce()) {
    if !guard.claim() {
        // The watcher took the event on a signal and exits the process when it is spooled.
        loop {
            std::thread::park();
        }
    }
    write();
    guard.done();
}
