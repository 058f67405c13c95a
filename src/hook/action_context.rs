//! PreToolUse (Bash, Edit, Write, MultiEdit, NotebookEdit) → `action-context` (issue 53): before a command or an
//! edit that failed before and has not passed since, what memd knows — when it failed, the failing line,
//! what made it pass — as fenced `additionalContext`. One GET of `/api/action-warning`, answered
//! from an index; never a deny, never starts the worker, silent when there is nothing to say.

use super::env::Budget;
use super::output::{EMPTY, fenced, with_context};
use super::run::{Run, query_value};
use super::transport::{Start, fetch};
use crate::action::warning::CONTEXT_MAX_CHARS;
use crate::config::keys;
use crate::protocol::paths;

/// The tools this hook speaks before.
pub const TOOLS: &str = "Bash|Edit|Write|MultiEdit|NotebookEdit";

pub fn run(r: &Run<'_>) -> String {
    if !r.hook.flag(&keys::ACTION_MEMORY) || r.input.agent("agent_id").is_some() || r.session_id().is_empty() {
        return EMPTY.into();
    }
    let tool = r.input.str("tool_name").unwrap_or_default();
    let input = r.input.value("tool_input");
    let field = |k: &str| {
        input
            .and_then(|v| v.get(k))
            .and_then(|v| v.as_str())
            .filter(|s| !s.trim().is_empty())
    };
    let what = match tool {
        "Bash" => field("command").map(|c| ("command", c)),
        "Edit" | "Write" | "MultiEdit" => field("file_path").map(|f| ("file", f)),
        "NotebookEdit" => field("notebook_path").map(|f| ("file", f)),
        _ => None,
    };
    let Some((name, value)) = what else {
        return EMPTY.into();
    };
    let identity = r.identity();
    let path = format!(
        "{}?contentSessionId={}&project={}&root={}&{name}={}",
        paths::ACTION_WARNING,
        query_value(r.session_id()),
        query_value(&identity.primary),
        query_value(&identity.root.to_string_lossy()),
        query_value(value)
    );
    let budget = Budget::new(r.hook.started, r.hook.short_budget());
    let Some(resp) = fetch(&r.hook, "action-context", "GET", &path, None, &budget, Start::Never) else {
        return EMPTY.into();
    };
    let Some(text) = resp
        .json()
        .and_then(|v| v.get("warning").and_then(|w| w.as_str()).map(str::to_string))
    else {
        return EMPTY.into();
    };
    if text.trim().is_empty() {
        return EMPTY.into();
    }
    with_context("PreToolUse", &fenced(&text, CONTEXT_MAX_CHARS), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_warning_stays_within_600_units_once_fenced() {
        let long = "memd: `cargo test` failed in an earlier session (ünïcode 😀 line). ".repeat(40);
        let out = fenced(&long, CONTEXT_MAX_CHARS);
        let units: usize = out.chars().map(char::len_utf16).sum();
        assert!(units <= 600, "{units}");
        assert!(out.contains("memd-recall"), "{out}");
        assert!(out.trim_end().ends_with("\">"), "{out}");
        assert!(out.contains("</memd-recall id="), "{out}");
    }
}
