//! What warning before a repeated failure would have done on recorded sessions
//! (`memd replay --action-memory`, issue 53). The sessions' shell calls and edits in time order,
//! per project (a call's working directory); only commands that check the code (tests, builds,
//! linters: [`is_check`]) count, since only their failure and pass say something about an edit.
//!
//! For each check, by its normalised key: it is an *opportunity* when it fails and the project saw
//! an earlier failure of the same key. The hook *warns* before it when the key failed before (in
//! this session or, under [`Scope::EarlierSessions`], only in an earlier one), has not passed since
//! (a pass silences it until the failure recurs), and was not warned in this session yet. A warning
//! *names the fix* when memd knew the files whose edits made the key pass after an earlier failure
//! and one of them is edited again before this key next passes. A warning before a call that then
//! passes with no edit since the failure — a pass the warned failure has no `fixes` relation to (a
//! flaky test, a network hiccup) — is a *false alarm*.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde::Serialize;

use super::normalize::normalize;
use crate::graph::names::is_check;
use crate::replay::event::{EventKind, SessionEvents};

/// The figures of one project, or of all.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ActionCounts {
    /// Check commands run.
    pub checks: usize,
    /// Of those, failed.
    pub failures: usize,
    /// Failures of a key that had failed before in the project.
    pub opportunities: usize,
    /// Opportunities the hook would have warned before.
    pub warned: usize,
    /// Warnings in all (before a failure or a pass).
    pub warnings: usize,
    /// Warnings that named a file whose edit then made the key pass.
    pub named_fix: usize,
    /// Warnings before a call that passed with no edit since the failure.
    pub false_alarms: usize,
}

impl ActionCounts {
    fn add(&mut self, o: &ActionCounts) {
        self.checks += o.checks;
        self.failures += o.failures;
        self.opportunities += o.opportunities;
        self.warned += o.warned;
        self.warnings += o.warnings;
        self.named_fix += o.named_fix;
        self.false_alarms += o.false_alarms;
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ActionEstimate {
    pub sessions: usize,
    pub total: ActionCounts,
    /// Per project (a call's working directory).
    pub projects: BTreeMap<String, ActionCounts>,
}

/// One key's history in one project.
#[derive(Debug, Default)]
struct KeyState {
    failed_before: bool,
    /// Failed and not passed since.
    open: bool,
    /// The session of the last failure.
    failed_in: String,
    /// Files edited since the open failure.
    edited_since: BTreeSet<String>,
    /// The files whose edits made the key pass the last time it went from failing to passing.
    fix: BTreeSet<String>,
    /// A warning that named the fix, waiting to see whether one of those files is edited before
    /// the key passes.
    pending_named: Option<BTreeSet<String>>,
}

#[derive(Default)]
struct Project {
    keys: HashMap<String, KeyState>,
    counts: ActionCounts,
}

/// The path an edit wrote, relative to `cwd` when inside it.
fn edited(tool: &str, input: &serde_json::Value, cwd: &str) -> Option<String> {
    if !matches!(tool, "Edit" | "Write" | "MultiEdit" | "NotebookEdit") {
        return None;
    }
    let p = input["file_path"].as_str().or_else(|| input["notebook_path"].as_str())?;
    let root = cwd.trim_end_matches('/');
    Some(match p.strip_prefix(root).and_then(|r| r.strip_prefix('/')) {
        Some(rel) => rel.to_string(),
        None => p.to_string(),
    })
}

/// Which failures a warning may come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Any earlier failure, this session's too (the hook's rule).
    AnySession,
    /// Only a failure of an earlier session (for comparison).
    EarlierSessions,
}

/// The estimate over `sessions` (taken in the order given: oldest first) under `scope`.
pub fn estimate(sessions: &[SessionEvents], scope: Scope) -> ActionEstimate {
    let mut projects: BTreeMap<String, Project> = BTreeMap::new();
    for s in sessions {
        let session = s.events.first().map(|e| e.session_id().to_string()).unwrap_or_default();
        let mut warned_here: HashSet<(String, String)> = HashSet::new();
        for ev in &s.events {
            let failed = match ev.kind {
                EventKind::PostToolUse => false,
                EventKind::PostToolUseFailure => true,
                _ => continue,
            };
            if ev.payload["is_interrupt"].as_bool() == Some(true) {
                continue;
            }
            let cwd = ev.payload["cwd"].as_str().unwrap_or_default().to_string();
            let tool = ev.tool_name().unwrap_or_default();
            let input = &ev.payload["tool_input"];
            let project = projects.entry(cwd.clone()).or_default();
            if let Some(file) = edited(tool, input, &cwd).filter(|_| !failed) {
                for k in project.keys.values_mut().filter(|k| k.open) {
                    k.edited_since.insert(file.clone());
                    if k.pending_named.as_ref().is_some_and(|named| named.contains(&file)) {
                        project.counts.named_fix += 1;
                        k.pending_named = None;
                    }
                }
                continue;
            }
            let command = input["command"].as_str().filter(|_| tool == "Bash").unwrap_or_default();
            let Some(key) = normalize(command, Some(&cwd)).filter(|k| is_check(k)) else {
                continue;
            };
            let output = crate::observer::extractive::describe::output_text(&ev.payload["tool_response"]);
            let failed = super::rows::check_failed(command, failed, &output);
            let state = project.keys.entry(key.clone()).or_default();
            let c = &mut project.counts;
            c.checks += 1;
            let from_here_allowed = scope == Scope::AnySession || state.failed_in != session;
            let warn = state.open && from_here_allowed && warned_here.insert((cwd.clone(), key.clone()));
            if warn {
                c.warnings += 1;
                if !state.fix.is_empty() {
                    state.pending_named = Some(state.fix.clone());
                }
            }
            if failed {
                c.failures += 1;
                if state.failed_before {
                    c.opportunities += 1;
                    c.warned += usize::from(warn);
                }
                if !state.open {
                    state.edited_since.clear();
                }
                state.failed_before = true;
                state.open = true;
                state.failed_in = session.clone();
            } else {
                c.false_alarms += usize::from(warn && state.edited_since.is_empty());
                if state.open {
                    state.fix = std::mem::take(&mut state.edited_since);
                }
                state.open = false;
                state.pending_named = None;
            }
        }
    }
    let mut e = ActionEstimate {
        sessions: sessions.len(),
        ..Default::default()
    };
    for (name, p) in projects {
        if p.counts.checks > 0 {
            e.total.add(&p.counts);
            e.projects.insert(name, p.counts);
        }
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::event::{HookEvent, Origin};
    use serde_json::json;

    fn bash(command: &str, failed: bool) -> HookEvent {
        HookEvent {
            kind: if failed {
                EventKind::PostToolUseFailure
            } else {
                EventKind::PostToolUse
            },
            origin: Origin::Main,
            at_ms: 0,
            payload: json!({"cwd": "/p", "tool_name": "Bash", "tool_input": {"command": command}}),
        }
    }

    fn edit(file: &str) -> HookEvent {
        HookEvent {
            kind: EventKind::PostToolUse,
            origin: Origin::Main,
            at_ms: 0,
            payload: json!({"cwd": "/p", "tool_name": "Edit", "tool_input": {"file_path": format!("/p/{file}")}}),
        }
    }

    fn session(id: &str, mut events: Vec<HookEvent>) -> SessionEvents {
        for e in &mut events {
            e.payload["session_id"] = json!(id);
        }
        SessionEvents {
            events,
            ..Default::default()
        }
    }

    #[test]
    fn a_repeat_failure_is_warned_once_a_pass_silences_and_the_fix_is_named() {
        // Session 1: fails, edit, passes (the fix is src/a.rs); fails again later (recurred).
        let s1 = session(
            "s1",
            vec![
                bash("cargo test login", true),
                edit("src/a.rs"),
                bash("cargo test login", false),
                bash("cargo test login", true),
            ],
        );
        // Session 2: warned before the repeat (fails), not twice; the agent edits the named file,
        // then it passes; after the pass it is silent.
        let s2 = session(
            "s2",
            vec![
                bash("cargo test login", true),
                bash("cargo test login", true),
                edit("src/a.rs"),
                bash("cargo test login", false),
                bash("cargo test login", false),
                bash("ls /tmp/x", true),
                bash("ls /tmp/x", true),
            ],
        );
        // The hook's rule: in s1 before the pass that followed the edit (a fix, not a false
        // alarm; s1's recurrence is silent: warned once); in s2 before the first call only (open
        // since s1's last failure), which names src/a.rs, then edited.
        let e = estimate(&[s1.clone(), s2.clone()], Scope::AnySession);
        let c = &e.total;
        assert_eq!((c.checks, c.failures, c.opportunities), (7, 4, 3), "{c:?}");
        assert_eq!((c.warnings, c.warned, c.named_fix, c.false_alarms), (2, 1, 1, 0), "{c:?}");
        assert_eq!(e.projects.len(), 1);
        // Earlier sessions only: silent in s1; s2 as before.
        let w = estimate(&[s1, s2], Scope::EarlierSessions).total;
        assert_eq!((w.warnings, w.warned, w.named_fix, w.false_alarms), (1, 1, 1, 0), "{w:?}");
    }

    #[test]
    fn a_repeat_within_a_session_is_warned_once() {
        let s = session(
            "s1",
            vec![
                bash("npm test", true),
                edit("src/a.js"),
                bash("npm test", true),
                edit("src/a.js"),
                bash("npm test", true),
            ],
        );
        let c = estimate(std::slice::from_ref(&s), Scope::AnySession).total;
        assert_eq!((c.opportunities, c.warned, c.warnings), (2, 1, 1), "{c:?}");
        let c = estimate(&[s], Scope::EarlierSessions).total;
        assert_eq!((c.opportunities, c.warned, c.warnings), (2, 0, 0), "{c:?}");
    }

    #[test]
    fn a_warning_before_a_pass_with_no_edit_since_is_a_false_alarm_and_after_an_edit_is_not() {
        let flaky = [
            session("s1", vec![bash("npm test", true)]),
            session("s2", vec![bash("npm test", false)]),
        ];
        let e = estimate(&flaky, Scope::AnySession);
        assert_eq!((e.total.warnings, e.total.false_alarms, e.total.opportunities), (1, 1, 0));
        let fixed = [
            session("s1", vec![bash("npm test", true)]),
            session("s2", vec![edit("src/a.js"), bash("npm test", false)]),
        ];
        let e = estimate(&fixed, Scope::AnySession);
        assert_eq!((e.total.warnings, e.total.false_alarms), (1, 0));
    }
}
