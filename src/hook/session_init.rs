//! UserPromptSubmit → `session-init` (docs/spec/hooks.md §3.2): `POST /api/sessions/init`, then —
//! when `MEMD_SEMANTIC_INJECT=true` — `POST /api/context/semantic` for related memories.

use crate::protocol::paths;
use std::time::Duration;

use serde_json::{Value, json};

use super::env::Budget;
use super::event::IngestEvent;
use super::output::{EMPTY, HOST_CONTEXT_MAX_CHARS, fenced, with_context};
use super::run::Run;
use super::transport::{Start, deliver, fetch};
use crate::config::keys;
use crate::pipeline::tags::is_task_notification;
use crate::protocol::IngestRoute;

const MEDIA_PROMPT: &str = "[media prompt]";

pub fn run(r: &Run<'_>) -> String {
    let budget = Budget::new(r.hook.started, r.hook.sync_budget());
    let raw = r.input.str("prompt").unwrap_or("");
    if is_task_notification(raw) {
        return EMPTY.into();
    }
    let prompt = if raw.trim().is_empty() { MEDIA_PROMPT } else { raw };
    let identity = r.identity();
    let mut body = json!({
        "contentSessionId": r.session_id(),
        "project": identity.primary,
        "prompt": prompt,
        "platformSource": r.platform,
        "cwd": r.cwd,
    });
    if let Some(p) = r.input.str("prompt_id") {
        body["promptId"] = json!(p);
    }
    if let Some(t) = r.input.str("transcript_path") {
        body["transcriptPath"] = json!(t);
    }
    let mut event = IngestEvent::new("session-init", IngestRoute::Init, body, r.occurred_at);
    let answer = deliver(&r.hook, &mut event, &budget, Start::AndWait);
    let initialized = answer.is_some_and(|a| a.get("skipped").and_then(Value::as_bool) != Some(true));
    let wants_semantic = r.hook.flag(&keys::SEMANTIC_INJECT) && prompt != MEDIA_PROMPT && prompt.chars().count() >= 20;
    if !(initialized && wants_semantic && budget.left() >= Duration::from_millis(300)) {
        return EMPTY.into();
    }
    let limit = r.hook.number(&keys::SEMANTIC_INJECT_LIMIT);
    let query = json!({
        "q": prompt,
        "projects": r.chain(&identity),
        "limit": limit,
        "platformSource": r.platform,
        "contentSessionId": r.session_id(),
        "fence": false,
    });
    let bytes = serde_json::to_vec(&query).unwrap_or_default();
    let context = fetch(
        &r.hook,
        "session-init",
        "POST",
        paths::CONTEXT_SEMANTIC,
        Some(&bytes),
        &budget,
        Start::Never,
    )
    .and_then(|resp| resp.json())
    .and_then(|v| v.get("context").and_then(Value::as_str).map(str::to_string))
    .filter(|c| !c.trim().is_empty());
    match context {
        Some(c) => {
            let max = r.hook.number(&keys::CONTEXT_MAX_CHARS).min(HOST_CONTEXT_MAX_CHARS) as usize;
            with_context("UserPromptSubmit", &fenced(&c, max), None)
        }
        None => EMPTY.into(),
    }
}
