//! SessionEnd → `complete` (docs/spec/hooks.md §3.6): `POST /api/sessions/complete` within 1,000 ms,
//! else the spool. Never starts the worker.

use serde_json::json;

use super::env::Budget;
use super::event::IngestEvent;
use super::output::EMPTY;
use super::run::Run;
use super::transport::{Start, deliver};
use crate::protocol::IngestRoute;

pub fn run(r: &Run<'_>) -> String {
    let budget = Budget::new(r.hook.started, r.hook.short_budget());
    let body = json!({
        "contentSessionId": r.session_id(),
        "reason": r.input.str("reason").unwrap_or("other"),
        "platformSource": "claude",
    });
    let mut event = IngestEvent::new("complete", IngestRoute::Complete, body, r.occurred_at);
    deliver(&r.hook, &mut event, &budget, Start::Never);
    EMPTY.into()
}
