//! What an LLM observer would cost on recorded sessions (`memd replay --observer-cost`): the
//! sessions' captured tool calls batched on their recorded timing by the worker's batch rules
//! (a batch closes after `debounce` of quiet, when its oldest call is `max_wait` old, or at
//! `max_events` calls or `max_chars` characters), each batch rendered as the real observer request,
//! plus one summary request per turn end (`Stop`). Calls are taken as instant, so calls that would
//! arrive while a batch is in flight are not merged into the next one: the call count is an upper
//! bound. Tokens are estimated as characters / 4 (no tokenizer runs offline).

use serde::Serialize;

use super::event::{EventKind, HookEvent, SessionEvents};
use crate::clock::iso;
use crate::modes::Mode;
use crate::observer::prompt::{PromptEvent, PromptSession, build_observation_request, build_summary_request};
use crate::text::lines::read_tokens_of_chars;

/// The batch rules of the worker (`MEMD_OBSERVER_BATCH_*`).
#[derive(Debug, Clone, Copy)]
pub struct BatchRules {
    pub debounce_ms: i64,
    pub max_wait_ms: i64,
    pub max_events: usize,
    pub max_chars: usize,
    pub field_max_chars: usize,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CostEstimate {
    pub sessions: usize,
    /// Sessions with at least one captured call (the others cost nothing).
    pub sessions_with_calls: usize,
    pub captured_calls: usize,
    pub observation_requests: usize,
    pub summary_requests: usize,
    /// Observer requests (observations + summaries) per session with calls: median and largest.
    pub requests_per_session_median: usize,
    pub requests_per_session_max: usize,
    /// Estimated input tokens per request: median and largest, and over all sessions.
    pub input_tokens_per_request_median: usize,
    pub input_tokens_per_request_max: usize,
    pub input_tokens_total: usize,
    /// Estimated input tokens per session with calls (median).
    pub input_tokens_per_session_median: usize,
}

/// Groups one session's captured calls into batches by the worker's rules.
pub fn batches<'a>(calls: &[&'a HookEvent], rules: &BatchRules) -> Vec<Vec<&'a HookEvent>> {
    let mut out: Vec<Vec<&HookEvent>> = Vec::new();
    let mut chars = 0;
    for &ev in calls {
        let size = ev.payload["tool_input"].to_string().len() + ev.payload["tool_response"].to_string().len();
        let joins = out.last().is_some_and(|b| {
            let (first, last) = (b[0].at_ms, b[b.len() - 1].at_ms);
            ev.at_ms - last < rules.debounce_ms
                && ev.at_ms - first < rules.max_wait_ms
                && b.len() < rules.max_events
                && chars < rules.max_chars
        });
        if joins {
            out.last_mut().expect("a batch").push(ev);
            chars += size;
        } else {
            out.push(vec![ev]);
            chars = size;
        }
    }
    out
}

fn prompt_event(ev: &HookEvent) -> PromptEvent {
    PromptEvent {
        tool_name: ev.tool_name().unwrap_or_default().to_string(),
        tool_input: ev.payload["tool_input"].clone(),
        tool_response: ev.payload["tool_response"].clone(),
        is_error: ev.kind == EventKind::PostToolUseFailure,
        cwd: ev.payload["cwd"].as_str().map(String::from),
        occurred_at_iso: iso(ev.at_ms),
    }
}

/// The estimate over `sessions`; `skip_tools` are never captured (`MEMD_SKIP_TOOLS`).
pub fn estimate(sessions: &[SessionEvents], mode: &Mode, rules: &BatchRules, skip_tools: &[String]) -> CostEstimate {
    let mut e = CostEstimate {
        sessions: sessions.len(),
        ..Default::default()
    };
    let (mut per_request, mut per_session_requests, mut per_session_tokens) = (Vec::new(), Vec::new(), Vec::new());
    for s in sessions {
        let sizes = session_requests(s, mode, rules, skip_tools, &mut e);
        if sizes.is_empty() {
            continue;
        }
        e.sessions_with_calls += 1;
        per_session_requests.push(sizes.len());
        per_session_tokens.push(sizes.iter().sum::<usize>());
        per_request.extend(sizes);
    }
    e.input_tokens_total = per_request.iter().sum();
    (e.requests_per_session_median, e.requests_per_session_max) = median_max(&mut per_session_requests);
    (e.input_tokens_per_request_median, e.input_tokens_per_request_max) = median_max(&mut per_request);
    e.input_tokens_per_session_median = median_max(&mut per_session_tokens).0;
    e
}

/// The estimated input tokens of each request one session would make (none without captured calls).
fn session_requests(s: &SessionEvents, mode: &Mode, rules: &BatchRules, skip_tools: &[String], e: &mut CostEstimate) -> Vec<usize> {
    let calls: Vec<&HookEvent> = s
        .events
        .iter()
        .filter(|ev| matches!(ev.kind, EventKind::PostToolUse | EventKind::PostToolUseFailure))
        .filter(|ev| !skip_tools.iter().any(|t| Some(t.as_str()) == ev.tool_name()))
        .collect();
    if calls.is_empty() {
        return Vec::new();
    }
    e.captured_calls += calls.len();
    let session = PromptSession {
        prompt_number: 1,
        user_request: first_prompt(s),
        is_private: false,
        requested_at_date: iso(calls[0].at_ms),
    };
    let mut sizes = Vec::new();
    for batch in batches(&calls, rules) {
        let events: Vec<PromptEvent> = batch.iter().map(|ev| prompt_event(ev)).collect();
        let req = build_observation_request(mode, &session, &events, rules.field_max_chars);
        sizes.push(read_tokens_of_chars(req.total_chars()) as usize);
        e.observation_requests += 1;
    }
    for stop in s.events.iter().filter(|ev| ev.kind == EventKind::Stop) {
        let last = stop.payload["last_assistant_message"].as_str().unwrap_or_default();
        let req = build_summary_request(mode, &session, &[], last, rules.field_max_chars);
        sizes.push(read_tokens_of_chars(req.total_chars()) as usize);
        e.summary_requests += 1;
    }
    sizes
}

fn first_prompt(s: &SessionEvents) -> String {
    let prompt = s.events.iter().find(|ev| ev.kind == EventKind::UserPromptSubmit);
    prompt.and_then(|ev| ev.payload["prompt"].as_str()).unwrap_or_default().to_string()
}

fn median_max(v: &mut [usize]) -> (usize, usize) {
    v.sort_unstable();
    match v.len() {
        0 => (0, 0),
        n => (v[n / 2], v[n - 1]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::event::Origin;
    use serde_json::json;

    const RULES: BatchRules = BatchRules {
        debounce_ms: 2_000,
        max_wait_ms: 30_000,
        max_events: 3,
        max_chars: 40_000,
        field_max_chars: 16_000,
    };

    fn call(at_ms: i64, tool: &str) -> HookEvent {
        HookEvent {
            kind: EventKind::PostToolUse,
            origin: Origin::Main,
            at_ms,
            payload: json!({"tool_name": tool, "tool_input": {"command": "ls"}, "tool_response": {"stdout": "a"}, "cwd": "/r"}),
        }
    }

    fn session(events: Vec<HookEvent>) -> SessionEvents {
        SessionEvents {
            session_id: "s".into(),
            transcript_path: "t".into(),
            events,
            dropped_main: Default::default(),
            dropped_sidechain: Default::default(),
            dropped_subagent: Default::default(),
        }
    }

    #[test]
    fn quiet_time_age_and_size_close_a_batch() {
        let evs = [0, 1_000, 2_500, 4_000, 5_000, 6_000, 7_000, 40_000].map(|t| call(t, "Bash"));
        let refs: Vec<&HookEvent> = evs.iter().collect();
        let sizes: Vec<usize> = batches(&refs, &RULES).iter().map(Vec::len).collect();
        // 0,1000 | 2500 (quiet 1.5 s joins) ... : 0,1000,2500 (full at 3) | 4000,5000,6000 | 7000 | 40000
        assert_eq!(sizes, vec![3, 3, 1, 1]);
        let slow = [0, 1_900, 3_800, 5_700].map(|t| call(t, "Bash"));
        let refs: Vec<&HookEvent> = slow.iter().collect();
        let rules = BatchRules {
            max_wait_ms: 4_000,
            max_events: 20,
            ..RULES
        };
        assert_eq!(batches(&refs, &rules).iter().map(Vec::len).collect::<Vec<_>>(), vec![3, 1]);
    }

    #[test]
    fn skipped_tools_cost_nothing_and_each_turn_end_is_a_summary_request() {
        let mode = crate::modes::load_mode("code", &[]).0;
        let mut stop = call(9_000, "");
        stop.kind = EventKind::Stop;
        stop.payload = json!({"last_assistant_message": "done"});
        let sessions = [
            session(vec![call(0, "Bash"), call(500, "Read"), stop]),
            session(vec![call(0, "TodoWrite")]),
        ];
        let e = estimate(&sessions, &mode, &RULES, &["TodoWrite".to_string()]);
        assert_eq!((e.sessions, e.sessions_with_calls, e.captured_calls), (2, 1, 2));
        assert_eq!(
            (e.observation_requests, e.summary_requests, e.requests_per_session_median),
            (1, 1, 2)
        );
        // The system prompt alone is hundreds of tokens: the estimate renders the real request.
        assert!(e.input_tokens_per_request_median > 200, "{e:?}");
        assert_eq!(e.input_tokens_total, e.input_tokens_per_session_median);
    }
}
