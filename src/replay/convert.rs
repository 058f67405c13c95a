//! A session's records → its hook event stream (hooks.md §6): SessionStart, UserPromptSubmit per
//! typed prompt, Pre/Post tool events (main thread, inline sidechains, subagent files spliced in
//! before the spawning call's PostToolUse), Stop per finished turn, compaction boundaries
//! (PreCompact + SessionStart `compact`), SessionEnd. Pure: no I/O beyond [`convert_file`].

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Value, json};

use super::ReplayError;
use super::event::{EventKind, HookEvent, Origin, SessionEvents};
use super::prompts::{self, PromptRole};
use super::record;
use super::subagents::{PendingSubagent, merge_by_time};
use super::tools::{Thread, ToolTracker};
use super::transcript::{read_records, subagent_files};

/// Reads a session file and its subagent files and converts them (a Codex rollout is recognised
/// by its first record and converted by [`super::codex_rollout`]).
pub fn convert_file(path: &Path) -> Result<SessionEvents, ReplayError> {
    if let Some(rollout) = super::codex_rollout::read_rollout(path)? {
        return Ok(super::codex_rollout::convert(&rollout, &path.to_string_lossy()));
    }
    let records = read_records(path)?;
    let session_id = session_id_of(&records, path);
    let mut subagents = Vec::new();
    for file in subagent_files(path, &session_id) {
        let records = read_records(&file.path)?;
        subagents.push(PendingSubagent { file, records });
    }
    Ok(convert(&records, subagents, &session_id, &path.to_string_lossy()))
}

/// The records' `sessionId`, else the file stem.
pub fn session_id_of(records: &[Value], path: &Path) -> String {
    records
        .iter()
        .find_map(|r| r["sessionId"].as_str())
        .map(str::to_string)
        .unwrap_or_else(|| path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default())
}

/// A turn in progress (from a UserPromptSubmit to the next one, a compact boundary or the end).
#[derive(Debug, Default)]
struct Turn {
    has_assistant: bool,
    interrupted: bool,
    last_text: String,
    last_record: Value,
}

struct Converter {
    out: SessionEvents,
    main: Thread,
    at: i64,
    turn: Option<Turn>,
    tools: ToolTracker,
    /// Sidechain record uuid → its root's uuid.
    sidechain_root: HashMap<String, String>,
    /// Sidechain root uuid → its thread (agent fields).
    sidechains: HashMap<String, Thread>,
    /// Prompt of a main-thread `Task`/`Agent` call → its `subagent_type`.
    task_types: HashMap<String, String>,
    subagents: Vec<PendingSubagent>,
}

/// Converts one session (pure).
pub fn convert(records: &[Value], subagents: Vec<PendingSubagent>, session_id: &str, transcript_path: &str) -> SessionEvents {
    let main = Thread {
        session_id: session_id.to_string(),
        transcript_path: transcript_path.to_string(),
        permission_mode: "default".to_string(),
        origin: Some(Origin::Main),
        agent_id: None,
        agent_type: None,
    };
    let mut c = Converter {
        out: SessionEvents {
            session_id: session_id.to_string(),
            transcript_path: transcript_path.to_string(),
            ..Default::default()
        },
        main,
        at: 0,
        turn: None,
        tools: ToolTracker::default(),
        sidechain_root: HashMap::new(),
        sidechains: HashMap::new(),
        task_types: HashMap::new(),
        subagents,
    };
    let roles = prompts::roles(records);
    let mut started = false;
    let mut last_main = &Value::Null;
    for (r, role) in records.iter().zip(roles) {
        if let Some(t) = record::timestamp_ms(r) {
            c.at = c.at.max(t);
        }
        if record::is_sidechain(r) {
            c.sidechain(r);
            continue;
        }
        if !started {
            let source = prompts::start_source(records);
            c.push(EventKind::SessionStart, r, json!({"source": source}));
            started = true;
        }
        if let Some(mode) = record::str_field(r, "permissionMode") {
            c.main.permission_mode = mode.to_string();
        }
        last_main = r;
        c.main_record(r, role);
    }
    if started {
        c.end_turn();
        for sub in std::mem::take(&mut c.subagents) {
            let first = sub.first_ms().unwrap_or(c.at);
            let block = sub.events(&c.main, None, first, &mut c.out.dropped_subagent);
            merge_by_time(&mut c.out.events, block, first);
        }
        c.push(EventKind::SessionEnd, last_main, json!({"reason": prompts::end_reason(records)}));
    }
    c.out
}

/// The fields of a record a payload takes (`cwd`, `promptId`), without cloning its content.
fn record_origin(r: &Value) -> Value {
    json!({"cwd": r["cwd"], "promptId": r["promptId"]})
}

impl Converter {
    fn push(&mut self, kind: EventKind, r: &Value, extra: Value) {
        let e = self.main.event(kind, r, self.at, extra);
        self.out.events.push(e);
    }

    fn main_record(&mut self, r: &Value, role: PromptRole) {
        match record::kind(r) {
            "system" if r["subtype"].as_str() == Some("compact_boundary") => {
                self.end_turn();
                let trigger = r["compactMetadata"]["trigger"].as_str().unwrap_or("auto");
                self.push(EventKind::PreCompact, r, json!({"trigger": trigger}));
                self.push(EventKind::SessionStart, r, json!({"source": "compact"}));
            }
            "assistant" => {
                let text = record::strip_system_reminders(&record::text_of(record::content(r), false));
                let turn = self.turn.get_or_insert_with(Turn::default);
                turn.has_assistant = true;
                turn.interrupted = false;
                turn.last_record = record_origin(r);
                if !text.is_empty() {
                    turn.last_text = text;
                }
                for b in record::blocks(r, "tool_use").filter(|b| matches!(b["name"].as_str(), Some("Task" | "Agent"))) {
                    if let (Some(p), Some(t)) = (b["input"]["prompt"].as_str(), b["input"]["subagent_type"].as_str()) {
                        self.task_types.insert(p.to_string(), t.to_string());
                    }
                }
                let pre = self.tools.on_assistant(&self.main, r, self.at);
                self.out.events.extend(pre);
            }
            "user" if record::has_tool_result(r) => self.tool_results(r),
            "user" => {
                if let PromptRole::Prompt(prompt) = role {
                    self.end_turn();
                    self.push(EventKind::UserPromptSubmit, r, json!({"prompt": prompt}));
                    self.turn = Some(Turn {
                        last_record: record_origin(r),
                        ..Turn::default()
                    });
                } else if !record::flag(r, "isMeta")
                    && record::is_interrupt_text(&record::text_of(record::content(r), false))
                    && let Some(t) = self.turn.as_mut()
                {
                    t.interrupted = true;
                }
            }
            _ => {}
        }
    }

    fn tool_results(&mut self, r: &Value) {
        let posts = self.tools.on_user(&self.main, r, self.at, &mut self.out.dropped_main);
        for post in posts {
            if let Some((agent_id, spawn_type)) = &post.spawned_agent
                && let Some(i) = self.subagents.iter().position(|s| &s.agent_id() == agent_id)
            {
                let sub = self.subagents.remove(i);
                let block = sub.events(&self.main, spawn_type.as_deref(), self.at, &mut self.out.dropped_subagent);
                self.out.events.extend(block);
            }
            self.out.events.push(post.event);
        }
    }

    /// Emits Stop when the turn had an assistant record and was not interrupted after it.
    fn end_turn(&mut self) {
        let Some(turn) = self.turn.take() else {
            return;
        };
        if turn.has_assistant && !turn.interrupted {
            let extra = json!({"stop_hook_active": false, "last_assistant_message": turn.last_text});
            self.push(EventKind::Stop, &turn.last_record, extra);
        }
    }

    /// An inline sidechain record (1.0.x): tool events only, `agent_id` = `sidechain-<root uuid[..8]>`.
    fn sidechain(&mut self, r: &Value) {
        let uuid = r["uuid"].as_str().unwrap_or("").to_string();
        let root = r["parentUuid"]
            .as_str()
            .and_then(|p| self.sidechain_root.get(p).cloned())
            .unwrap_or_else(|| uuid.clone());
        self.sidechain_root.insert(uuid, root.clone());
        if !self.sidechains.contains_key(&root) {
            let prompt = record::text_of(record::content(r), false);
            let agent_type = self.task_types.get(&prompt).cloned();
            let id: String = root.chars().take(8).collect();
            let thread = Thread {
                origin: Some(Origin::Sidechain),
                agent_id: Some(format!("sidechain-{id}")),
                agent_type,
                ..self.main.clone()
            };
            self.sidechains.insert(root.clone(), thread);
        }
        let Some(thread) = self.sidechains.get(&root) else {
            return;
        };
        let events: Vec<HookEvent> = match record::kind(r) {
            "assistant" => self.tools.on_assistant(thread, r, self.at),
            "user" => self
                .tools
                .on_user(thread, r, self.at, &mut self.out.dropped_sidechain)
                .into_iter()
                .map(|p| p.event)
                .collect(),
            _ => Vec::new(),
        };
        self.out.events.extend(events);
    }
}
