//! SessionEnd → `complete` (docs/spec/hooks.md §3.6): `POST /api/sessions/complete` within 1,000 ms,
//! else the spool. Never starts the worker.
//!
//! Commands that are not sessions (`claude mcp list`, …) fire SessionEnd with a fresh session id
//! whose transcript was never written: such an event is dropped (a line in hook.log), so no
//! phantom completion reaches the spool or the worker.

use serde_json::json;

use super::env::Budget;
use super::event::IngestEvent;
use super::log::hook_log;
use super::output::EMPTY;
use super::run::Run;
use super::transport::{Start, deliver};
use crate::protocol::IngestRoute;

/// A session that never was: its transcript path is named but no file was written.
fn never_started(r: &Run<'_>) -> bool {
    r.input
        .str("transcript_path")
        .is_some_and(|p| !p.is_empty() && !std::path::Path::new(p).exists())
}

pub fn run(r: &Run<'_>) -> String {
    if never_started(r) {
        hook_log(
            &r.hook.dir,
            r.hook.started,
            "complete",
            None,
            "SessionEnd of a session without a transcript; dropped",
        );
        return EMPTY.into();
    }
    let budget = Budget::new(r.hook.started, r.hook.short_budget());
    let body = json!({
        "contentSessionId": r.session_id(),
        "reason": r.input.str("reason").unwrap_or("other"),
        "platformSource": r.platform,
    });
    let mut event = IngestEvent::new("complete", IngestRoute::Complete, body, r.occurred_at);
    deliver(&r.hook, &mut event, &budget, Start::Never);
    EMPTY.into()
}
