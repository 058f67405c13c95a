//! The transcript watcher (`memd watch`, docs/spec/hosts.md §4): for setups without hooks, it
//! tails Claude Code's session files (`~/.claude/projects/**/*.jsonl`) and Codex rollouts
//! (`~/.codex/sessions/**/rollout-*.jsonl`), converts them with the
//! replay converter ([`crate::replay::convert`]) and ingests what is new — over the worker's HTTP
//! API (`memd watch`) or through the ingest commands in-process (the worker's own watcher actor,
//! `MEMD_WATCH=true`). Exactly once, durably:
//!
//! - each event gets a stable id from what it is (kind, session, tool_use_id / prompt id / time),
//!   sent as its `eventId`; the worker already dedupes a repeated `eventId`, a repeated
//!   `tool_use_id` and the same prompt text in a session, so the hook and the watcher on one
//!   session store each record once;
//! - `<data>/watch-state.json` keeps, per file, its size and mtime when last read and the ids
//!   the worker acknowledged; it is written (temp file + rename) after every file, so a killed
//!   watcher or worker resumes where the acknowledgements stopped; a finished file keeps the time
//!   of its last event instead of its ids, and a deleted file's mark is dropped, so the state
//!   stays the size of the live files;
//! - a file still being written (modified within `idle`) delivers everything but its trailing
//!   turn end and session end, which the converter synthesises at end of file; once idle, those
//!   follow;
//! - the worker's watcher (the `TranscriptWatcher` actor, `actors/transcript_watcher.rs`) does not deliver history: what
//!   was written before it was first enabled is `memd replay`'s to backfill
//!   ([`ScanRules::history_before`]); `memd watch` delivers everything it finds.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::pipeline::hash::sha256_hex;
use crate::replay::bodies::{Call, Target, http_call};
use crate::replay::convert::convert_file;
pub use crate::replay::deliver::Answer;
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
    /// Ids of the events the worker acknowledged since the file was last complete.
    pub delivered: BTreeSet<String>,
    /// When the file was last complete, the time of its last settled event: everything up to it
    /// was delivered, so its ids are dropped (a file resumed later is read from after this time;
    /// the ids of a long session would otherwise grow the state file for as long as it is kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivered_through_ms: Option<i64>,
    /// First seen already modified before the watcher started ([`ScanRules::history_before`]).
    #[serde(default)]
    pub history: bool,
}

/// `<data>/watch-state.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WatchState {
    /// When the worker's watcher first ran on this data directory (its history line).
    #[serde(default)]
    pub since_ms: Option<i64>,
    pub files: BTreeMap<String, FileMark>,
}

impl WatchState {
    /// Drops the marks of files that are gone (Claude Code deletes old transcripts) while the root
    /// that held them is still there; `listed` are the files found this pass. Returns how many.
    pub fn forget_missing(&mut self, roots: &[PathBuf], listed: &[PathBuf]) -> usize {
        let listed: BTreeSet<String> = listed.iter().map(|p| p.display().to_string()).collect();
        let present_roots: Vec<&PathBuf> = roots.iter().filter(|r| r.is_dir()).collect();
        let before = self.files.len();
        self.files.retain(|key, _| {
            let path = Path::new(key);
            listed.contains(key)
                || !present_roots.iter().any(|r| path.starts_with(r))
                || !matches!(std::fs::symlink_metadata(path), Err(e) if e.kind() == std::io::ErrorKind::NotFound)
        });
        before - self.files.len()
    }

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
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pass {
    pub files_read: usize,
    pub delivered: usize,
    pub duplicates: usize,
    pub skipped: usize,
}

/// A file modified this little before the history line is not history: file system timestamps
/// come from a coarser clock than [`crate::clock::now_ms`], so a file written just after the
/// watcher started can carry an mtime a few milliseconds before it.
const HISTORY_SLACK_MS: i64 = 2_000;

/// How a pass treats what it finds.
#[derive(Debug, Clone, Copy)]
pub struct ScanRules {
    /// A file unchanged this long is finished.
    pub idle: Duration,
    pub now_ms: i64,
    /// History is not delivered: a file first seen already modified before this time is marked
    /// as history, and only its events from this time on are delivered (the worker's watcher:
    /// the moment it was first enabled; `memd replay` backfills the rest). None: everything.
    pub history_before: Option<i64>,
}

/// One pass over `roots`: new events of changed files go to `deliver` (the worker's HTTP API for
/// `memd watch`, the ingest commands in-process for the worker's watcher); the state is saved
/// after each file. Stops at the first event not acknowledged.
pub fn scan(
    roots: &[PathBuf],
    state: &mut WatchState,
    state_path: &Path,
    rules: ScanRules,
    deliver: &mut dyn FnMut(&Call) -> Answer,
) -> Result<Pass, WatchError> {
    let mut pass = Pass::default();
    let files = session_files(roots);
    if state.forget_missing(roots, &files) > 0 {
        state.save(state_path)?;
    }
    for file in files {
        let Ok(meta) = std::fs::metadata(&file) else { continue };
        let key = file.display().to_string();
        let (size, mtime) = (meta.len(), mtime_ms(&meta));
        let mark = state.files.entry(key).or_insert_with(|| FileMark {
            history: rules.history_before.is_some_and(|t| mtime < t - HISTORY_SLACK_MS),
            ..FileMark::default()
        });
        let is_idle = rules.now_ms - mtime >= rules.idle.as_millis() as i64;
        let unchanged = mark.size == size && mark.mtime_ms == mtime;
        if unchanged && (mark.complete || !is_idle) {
            continue;
        }
        if mark.history && mark.size == 0 && is_idle {
            // Finished before the watcher started: remembered, not delivered.
            (mark.size, mark.mtime_ms, mark.complete) = (size, mtime, true);
            state.save(state_path)?;
            continue;
        }
        let Ok(session) = convert_file(&file) else { continue };
        pass.files_read += 1;
        let since = if mark.history {
            rules.history_before.unwrap_or(0)
        } else {
            i64::MIN
        };
        let mut failure = None;
        let through = mark.delivered_through_ms.unwrap_or(i64::MIN);
        let events = settled(&session.events, is_idle);
        for e in events.iter().filter(|e| e.at_ms >= since && e.at_ms > through) {
            let id = event_id(e);
            if mark.delivered.contains(&id) {
                continue;
            }
            let Some(call) = http_call(e, Target::Memd, &id, e.at_ms, None) else {
                continue;
            };
            match deliver(&call) {
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
            (mark.size, mark.mtime_ms, mark.complete) = (size, mtime, is_idle);
            if is_idle {
                let last = events.iter().map(|e| e.at_ms).max().unwrap_or(i64::MIN);
                mark.delivered_through_ms = Some(last.max(through));
                mark.delivered.clear();
            }
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

    /// A Claude Code turn: a typed prompt, one Bash call and its result, at `at`.
    fn turn(n: u32, at: i64) -> String {
        let ts = crate::clock::iso(at);
        let (prompt, call) = (format!("u{n}"), format!("a{n}"));
        let head = json!({"sessionId": "s-hist", "cwd": "/tmp/hist"});
        let rec = |extra: serde_json::Value| {
            let mut r = head.clone();
            r.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            r.to_string()
        };
        [
            rec(json!({"type": "user", "uuid": prompt, "timestamp": ts,
                "message": {"role": "user", "content": format!("step {n}")}})),
            rec(json!({"type": "assistant", "uuid": call, "parentUuid": prompt, "timestamp": ts,
                "message": {"role": "assistant", "content": [{"type": "tool_use", "id": format!("toolu_{n}"), "name": "Bash", "input": {"command": format!("echo {n}")}}]}})),
            rec(json!({"type": "user", "uuid": format!("r{n}"), "parentUuid": call, "timestamp": ts,
                "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("toolu_{n}"), "content": "ok"}]}})),
        ]
        .join("\n")
            + "\n"
    }

    /// A root holding one session file with a turn two hours old, last modified an hour ago:
    /// the directory, the root, the state path, the file and now.
    fn an_hour_idle_session() -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf, i64) {
        let dir = tempfile::tempdir().unwrap();
        let (root, state_path) = (dir.path().join("projects"), dir.path().join("state.json"));
        std::fs::create_dir_all(&root).unwrap();
        let file = root.join("s-hist.jsonl");
        let now = crate::clock::now_ms();
        std::fs::write(&file, turn(1, now - 7_200_000)).unwrap();
        let f = std::fs::File::options().write(true).open(&file).unwrap();
        f.set_modified(SystemTime::now() - Duration::from_secs(3600)).unwrap();
        (dir, root, state_path, file, now)
    }

    #[test]
    fn history_before_the_first_run_is_not_delivered_but_what_follows_is() {
        let (_dir, root, state_path, file, now) = an_hour_idle_session();
        let rules = ScanRules {
            idle: Duration::from_secs(60),
            now_ms: now,
            history_before: Some(now - 1_000),
        };
        let mut calls: Vec<serde_json::Value> = Vec::new();
        let mut state = WatchState::default();
        let mut take = |c: &Call| {
            calls.push(c.body.clone());
            Answer::Acked
        };
        let pass = scan(std::slice::from_ref(&root), &mut state, &state_path, rules, &mut take).unwrap();
        assert_eq!(pass, Pass::default(), "a finished session from before is history");
        assert!(state.files.values().all(|m| m.history && m.complete));

        // The session goes on after the watcher started: only the new turn is delivered.
        let mut f = std::fs::OpenOptions::new().append(true).open(&file).unwrap();
        std::io::Write::write_all(&mut f, turn(2, now).as_bytes()).unwrap();
        drop(f);
        let pass = scan(std::slice::from_ref(&root), &mut state, &state_path, rules, &mut take).unwrap();
        assert!(pass.delivered >= 2, "{calls:?}");
        let tools: Vec<_> = calls.iter().filter_map(|b| b["tool_use_id"].as_str()).collect();
        let prompts: Vec<_> = calls.iter().filter_map(|b| b["prompt"].as_str()).collect();
        assert_eq!((tools, prompts), (vec!["toolu_2"], vec!["step 2"]));

        // `memd watch` (no history line) delivers the whole file.
        let mut fresh = WatchState::default();
        calls.clear();
        let all = ScanRules {
            history_before: None,
            ..rules
        };
        let mut take = |c: &Call| {
            calls.push(c.body.clone());
            Answer::Acked
        };
        scan(&[root], &mut fresh, &state_path, all, &mut take).unwrap();
        let tools: Vec<_> = calls.iter().filter_map(|b| b["tool_use_id"].as_str()).collect();
        assert_eq!(tools, ["toolu_1", "toolu_2"]);
    }

    #[test]
    fn a_complete_file_keeps_a_time_not_its_ids_and_a_resumed_one_delivers_only_what_is_new() {
        let (_dir, root, state_path, file, now) = an_hour_idle_session();
        let rules = ScanRules {
            idle: Duration::from_secs(60),
            now_ms: now,
            history_before: None,
        };
        let mut state = WatchState::default();
        let mut tools: Vec<String> = Vec::new();
        let mut take = |c: &Call| {
            tools.extend(c.body["tool_use_id"].as_str().map(str::to_string));
            Answer::Acked
        };
        let first = scan(std::slice::from_ref(&root), &mut state, &state_path, rules, &mut take).unwrap();
        assert!(first.delivered >= 3, "prompt, tool use and the synthetic ends: {first:?}");
        let mark = &state.files[&file.display().to_string()];
        assert!(mark.complete && mark.delivered.is_empty(), "a complete file keeps no ids: {mark:?}");
        assert!(mark.delivered_through_ms.is_some_and(|t| t >= now - 7_200_000));
        assert_eq!(WatchState::load(&state_path), state, "what is saved is the compact mark");

        // The session is resumed: only the new turn goes out, nothing of the first again.
        let mut f = std::fs::OpenOptions::new().append(true).open(&file).unwrap();
        std::io::Write::write_all(&mut f, turn(2, now - 1_000).as_bytes()).unwrap();
        drop(f);
        let second = scan(std::slice::from_ref(&root), &mut state, &state_path, rules, &mut take).unwrap();
        assert_eq!(tools, ["toolu_1", "toolu_2"]);
        assert_eq!(second.duplicates, 0);
        assert!(
            !state.files[&file.display().to_string()].delivered.is_empty(),
            "a live file keeps its ids"
        );
    }

    #[test]
    fn marks_of_deleted_files_are_forgotten_while_their_root_remains() {
        let dir = tempfile::tempdir().unwrap();
        let (root, state_path) = (dir.path().join("projects"), dir.path().join("state.json"));
        std::fs::create_dir_all(root.join("p")).unwrap();
        let (kept, gone) = (root.join("p/kept.jsonl"), root.join("p/gone.jsonl"));
        std::fs::write(&kept, turn(1, 1_000)).unwrap();
        std::fs::write(&gone, turn(2, 2_000)).unwrap();
        let mut state = WatchState::default();
        let unmounted = dir.path().join("unmounted/s.jsonl");
        state.files.insert(unmounted.display().to_string(), FileMark::default());
        let rules = ScanRules {
            idle: Duration::from_secs(60),
            now_ms: crate::clock::now_ms(),
            history_before: None,
        };
        let roots = [root, dir.path().join("unmounted")];
        scan(&roots, &mut state, &state_path, rules, &mut |_| Answer::Acked).unwrap();
        assert_eq!(state.files.len(), 3);
        std::fs::remove_file(&gone).unwrap();
        scan(&roots, &mut state, &state_path, rules, &mut |_| Answer::Acked).unwrap();
        let keys: Vec<&String> = state.files.keys().collect();
        assert_eq!(
            keys,
            [&kept.display().to_string(), &unmounted.display().to_string()],
            "a root that is not there forgets nothing"
        );
        assert_eq!(WatchState::load(&state_path), state);
    }

    #[test]
    fn a_file_written_just_before_the_line_is_not_history() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("projects");
        std::fs::create_dir_all(&root).unwrap();
        let now = crate::clock::now_ms();
        std::fs::write(root.join("s.jsonl"), turn(1, now - 7_200_000)).unwrap();
        // The line drawn half a second after the file's mtime (a coarse file system clock).
        let rules = ScanRules {
            idle: Duration::from_secs(60),
            now_ms: now,
            history_before: Some(now + 500),
        };
        let mut state = WatchState::default();
        let mut n = 0;
        scan(&[root], &mut state, &dir.path().join("state.json"), rules, &mut |_| {
            n += 1;
            Answer::Acked
        })
        .unwrap();
        assert!(n >= 2, "the whole file is delivered ({n})");
        assert!(state.files.values().all(|m| !m.history));
    }
}
