//! The transcript watcher (`memd watch`, docs/spec/hosts.md §4): for setups without hooks, it
//! tails Claude Code's session files (`~/.claude/projects/**/*.jsonl`) and Codex rollouts
//! (`~/.codex/sessions/**/rollout-*.jsonl`), converts them with the
//! replay converter ([`crate::replay::convert`]) and ingests what is new over the worker's HTTP
//! API. Exactly once, durably:
//!
//! - each event gets a stable id from what it is (kind, session, tool_use_id / prompt id / time),
//!   sent as its `eventId`; the worker already dedupes a repeated `eventId`, a repeated
//!   `tool_use_id` and the same prompt text in a session, so the hook and the watcher on one
//!   session store each record once;
//! - `<data>/watch-state.json` keeps, per file, its size and mtime when last read and the ids
//!   the worker acknowledged; it is written (temp file + rename) after every file, so a killed
//!   watcher or worker resumes where the acknowledgements stopped;
//! - a file still being written (modified within `idle`) delivers everything but its trailing
//!   turn end and session end, which the converter synthesises at end of file; once idle, those
//!   follow.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::pipeline::hash::sha256_hex;
use crate::replay::bodies::{Target, http_call};
use crate::replay::convert::convert_file;
use crate::replay::deliver::{Answer, HttpTarget, send_http};
use crate::replay::event::{EventKind, HookEvent};
use crate::replay::transcript::is_subagent_file;

#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("the worker did not acknowledge ({0}); retrying on the next pass")]
    Worker(String),
}

/// What the watcher remembers of one file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FileMark {
    pub size: u64,
    pub mtime_ms: i64,
    /// Its trailing turn end and session end were delivered (the file was idle).
    pub complete: bool,
    /// Ids of the events the worker acknowledged.
    pub delivered: BTreeSet<String>,
}

/// `<data>/watch-state.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WatchState {
    pub files: BTreeMap<String, FileMark>,
}

impl WatchState {
    /// The saved state (missing or unreadable: empty, so everything is offered again, and the
    /// worker's dedupe keeps that exactly-once).
    pub fn load(path: &Path) -> Self {
        std::fs::read(path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    pub fn save(&self, path: &Path) -> Result<(), WatchError> {
        let text = serde_json::to_vec(self).unwrap_or_default();
        crate::data_dir::write_private(path, &text).map_err(|e| WatchError::Io {
            path: path.to_path_buf(),
            source: std::io::Error::other(e),
        })
    }
}

/// A stable id for an event: the same record gives the same id however often the file is read.
pub fn event_id(e: &HookEvent) -> String {
    let p = &e.payload;
    let what = match (e.tool_use_id(), p["prompt_id"].as_str()) {
        (Some(t), _) => t.to_string(),
        (None, Some(pid)) if e.kind == EventKind::UserPromptSubmit => pid.to_string(),
        _ => format!("{}\u{0}{}", e.at_ms, p["prompt"].as_str().unwrap_or("")),
    };
    let key = format!("{}\u{0}{}\u{0}{what}", e.kind.name(), e.session_id());
    format!("watch-{}", &sha256_hex(key.as_bytes())[..32])
}

/// Session files under `roots` (recursively), subagent files excluded (the converter finds them).
pub fn session_files(roots: &[PathBuf]) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>, depth: usize) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for e in entries.filter_map(Result::ok) {
            let p = e.path();
            if p.is_dir() && depth < 5 {
                walk(&p, out, depth + 1);
            } else if p.extension().is_some_and(|x| x == "jsonl") && !is_subagent_file(&p) {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    for r in roots {
        if r.is_file() {
            out.push(r.clone());
        } else {
            walk(r, &mut out, 0);
        }
    }
    out.sort();
    out
}

/// The events of a converted file that are settled: all of them when the file is idle, else
/// all but the synthetic trailing turn end and session end.
pub fn settled(events: &[HookEvent], idle: bool) -> &[HookEvent] {
    if idle {
        return events;
    }
    let mut end = events.len();
    while end > 0 && matches!(events[end - 1].kind, EventKind::SessionEnd | EventKind::Stop) {
        end -= 1;
    }
    &events[..end]
}

fn mtime_ms(m: &std::fs::Metadata) -> i64 {
    m.modified()
        .ok()
        .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_millis() as i64)
}

/// What one pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Pass {
    pub files_read: usize,
    pub delivered: usize,
    pub duplicates: usize,
    pub skipped: usize,
}

/// One pass over `roots`: new events of changed files go to the worker at `target`; the state is
/// saved after each file. Stops at the first event the worker does not acknowledge.
pub fn scan(
    roots: &[PathBuf],
    state: &mut WatchState,
    state_path: &Path,
    target: &HttpTarget,
    idle: Duration,
    now_ms: i64,
) -> Result<Pass, WatchError> {
    let mut pass = Pass::default();
    for file in session_files(roots) {
        let Ok(meta) = std::fs::metadata(&file) else { continue };
        let key = file.display().to_string();
        let mark = state.files.entry(key).or_default();
        let (size, mtime) = (meta.len(), mtime_ms(&meta));
        let is_idle = now_ms - mtime >= idle.as_millis() as i64;
        if mark.size == size && mark.mtime_ms == mtime && (mark.complete || !is_idle) {
            continue;
        }
        let Ok(session) = convert_file(&file) else { continue };
        pass.files_read += 1;
        let mut failure = None;
        for e in settled(&session.events, is_idle) {
            let id = event_id(e);
            if mark.delivered.contains(&id) {
                continue;
            }
            let Some(call) = http_call(e, Target::Memd, &id, e.at_ms, None) else {
                continue;
            };
            match send_http(target, &call) {
                Answer::Acked => pass.delivered += 1,
                Answer::Duplicate => pass.duplicates += 1,
                Answer::Skipped(_) => pass.skipped += 1,
                Answer::Error(why) => {
                    failure = Some(why);
                    break;
                }
            }
            mark.delivered.insert(id);
        }
        if failure.is_none() {
            mark.size = size;
            mark.mtime_ms = mtime;
            mark.complete = is_idle;
        }
        state.save(state_path)?;
        if let Some(why) = failure {
            return Err(WatchError::Worker(why));
        }
    }
    Ok(pass)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::event::Origin;
    use serde_json::json;

    fn ev(kind: EventKind, payload: serde_json::Value, at: i64) -> HookEvent {
        HookEvent {
            kind,
            origin: Origin::Main,
            at_ms: at,
            payload,
        }
    }

    #[test]
    fn ids_are_stable_and_distinct() {
        let a = ev(EventKind::PostToolUse, json!({"session_id": "s", "tool_use_id": "toolu_1"}), 5);
        let b = ev(EventKind::PostToolUse, json!({"session_id": "s", "tool_use_id": "toolu_1"}), 9);
        let c = ev(EventKind::PostToolUse, json!({"session_id": "s", "tool_use_id": "toolu_2"}), 5);
        assert_eq!(event_id(&a), event_id(&b), "the tool use, not its time, names it");
        assert_ne!(event_id(&a), event_id(&c));
        let p = ev(EventKind::UserPromptSubmit, json!({"session_id": "s", "prompt": "hi"}), 1);
        let q = ev(EventKind::UserPromptSubmit, json!({"session_id": "s", "prompt": "hi"}), 2);
        assert_ne!(event_id(&p), event_id(&q), "the same words asked twice are two prompts");
    }

    #[test]
    fn a_live_file_holds_back_its_synthetic_ends() {
        let events = vec![
            ev(EventKind::UserPromptSubmit, json!({}), 1),
            ev(EventKind::PostToolUse, json!({}), 2),
            ev(EventKind::Stop, json!({}), 3),
            ev(EventKind::SessionEnd, json!({}), 3),
        ];
        assert_eq!(settled(&events, false).len(), 2);
        assert_eq!(settled(&events, true).len(), 4);
    }

    #[test]
    fn state_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("watch-state.json");
        let mut s = WatchState::default();
        s.files.entry("/a.jsonl".into()).or_default().delivered.insert("watch-1".into());
        s.save(&path).unwrap();
        assert_eq!(WatchState::load(&path), s);
        assert_eq!(WatchState::load(&dir.path().join("missing")), WatchState::default());
    }
}
