//! SessionStart → `context` (docs/spec/hooks.md §3.1): fetch the rendered index from
//! `GET /api/context/inject` and print it as `additionalContext`; any failure prints the empty
//! SessionStart object. Usually the handler that starts a stopped worker.

use super::env::Budget;
use super::output::{HOST_CONTEXT_MAX_CHARS, cap_context, empty_session_start, fenced, with_context};
use super::run::{Run, query_value};
use super::transport::{Start, fetch};
use crate::config::keys;
use crate::protocol::paths;

pub fn run(r: &Run<'_>) -> String {
    let budget = Budget::new(r.hook.started, r.hook.sync_budget());
    let identity = r.identity();
    let max_chars = r.hook.number(&keys::CONTEXT_MAX_CHARS).min(HOST_CONTEXT_MAX_CHARS);
    let source = r.input.str("source").unwrap_or("startup");
    let path = format!(
        "{}?projects={}&platformSource={}&maxChars={}&source={}&sessionId={}&cwd={}&fence=false",
        paths::CONTEXT_INJECT,
        query_value(&r.chain(&identity)),
        r.platform,
        max_chars,
        query_value(source),
        query_value(r.session_id()),
        query_value(&r.cwd)
    );
    let Some(resp) = fetch(&r.hook, "context", "GET", &path, None, &budget, Start::AndWait) else {
        return empty_session_start();
    };
    let text = fenced(resp.text().trim(), max_chars as usize);
    let message = r.hook.flag(&keys::CONTEXT_SHOW_TERMINAL_OUTPUT).then(|| {
        let n = |h: &str| resp.header(h).unwrap_or("0").trim().to_string();
        let m = format!(
            "memd: {} observations, {} summaries for {}",
            n("X-Memd-Observations"),
            n("X-Memd-Summaries"),
            identity.primary
        );
        cap_context(&m, max_chars as usize)
    });
    with_context("SessionStart", &text, message.as_deref())
}
