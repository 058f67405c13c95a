//! The dataset generator: recorded Claude Code sessions (converted to hook events by the replay
//! converter) → memories, questions with evidence, and the trimmed event stream. Deterministic:
//! the same transcripts give byte-identical files.
//!
//! A memory is one tool call or one prompt, written as an observer would note it. The questions
//! are the ones a developer asks of past sessions, their answers taken from the tool calls:
//! `file-changed` (which file was changed to add these identifiers), `command-failed` (which
//! command failed with this error), `command-run` (how did I do what a command's description
//! says), `file-touched` (when was this file last changed: the last write), `request` (when did
//! I ask for this), `unfinished` (what the last session of a project was doing at its end).

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::dataset::{EventLine, Memory, Question};
use crate::observer::extractive::change_text;
use crate::observer::extractive::salient::{failure_line, result_line};
use crate::observer::extractive::symbols::added_identifiers;
use crate::replay::bodies::project_of;
use crate::replay::event::{EventKind, SessionEvents};

/// Tool output kept per string in the shipped event stream: head and tail.
const KEEP_HEAD: usize = 1_500;
const KEEP_TAIL: usize = 1_000;
const WRITES: &[&str] = &["Edit", "MultiEdit", "Write", "NotebookEdit"];

/// What the generator produced.
#[derive(Debug, Default)]
pub struct Generated {
    pub memories: Vec<Memory>,
    pub questions: Vec<Question>,
    pub events: Vec<EventLine>,
}

fn cut(s: &str, max: usize) -> String {
    let flat = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        return flat;
    }
    let mut out: String = flat.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// Long strings cut to head + tail (the end of an output is where errors and totals are).
fn trim(v: &Value) -> Value {
    match v {
        Value::String(s) if s.chars().count() > KEEP_HEAD + KEEP_TAIL => {
            let n = s.chars().count();
            let head: String = s.chars().take(KEEP_HEAD).collect();
            let tail: String = s.chars().skip(n - KEEP_TAIL).collect();
            Value::String(format!("{head}\n[… trimmed …]\n{tail}"))
        }
        Value::Array(a) => Value::Array(a.iter().map(trim).collect()),
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), trim(v))).collect()),
        other => other.clone(),
    }
}

/// The payload with `transcript_path` cut to the file's name: the dataset must not depend on
/// where the transcripts lay on the machine that generated it.
fn portable(mut v: Value) -> Value {
    if let Some(p) = v.get_mut("transcript_path") {
        let name = p.as_str().and_then(|s| s.rsplit('/').next()).unwrap_or("").to_owned();
        *p = Value::String(name);
    }
    v
}

/// All the text of a tool response (strings of an object or array joined by lines).
fn response_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(a) => a.iter().map(response_text).collect::<Vec<_>>().join("\n"),
        Value::Object(m) => ["stdout", "stderr", "error", "output", "content", "text", "result"]
            .iter()
            .filter_map(|k| m.get(*k))
            .map(response_text)
            .filter(|t| !t.trim().is_empty())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Every string value of `v`, one per line.
fn all_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(a) => a.iter().map(all_text).collect::<Vec<_>>().join("\n"),
        Value::Object(m) => m.values().map(all_text).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    }
}

fn relative(path: &str, cwd: &str) -> String {
    let root = format!("{}/", cwd.trim_end_matches('/'));
    path.strip_prefix(&root).unwrap_or(path).to_owned()
}

/// A stable pick among `n` phrasings for `key`.
fn pick(key: &str, n: usize) -> usize {
    key.bytes().fold(0usize, |h, b| h.wrapping_mul(31).wrapping_add(b as usize)) % n
}

/// Content words of a prompt (for `request` questions): the first six longer than three letters.
fn key_words(text: &str) -> String {
    let stop = crate::text::words::STOPWORDS;
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-' || c == '.'))
        .filter(|w| w.chars().count() > 3 && !stop.contains(&w.to_lowercase().as_str()))
        .take(6)
        .collect::<Vec<_>>()
        .join(" ")
}

struct Builder {
    out: Generated,
    where_changed: super::where_changed::WhereChanged,
    /// Per (project, file): the last write's memory id and time.
    last_write: HashMap<(String, String), (i64, String)>,
    /// Per project: the last session's time and its last prompt's memory id.
    last_session: HashMap<String, (i64, String)>,
}

impl Builder {
    fn question(&mut self, project: &str, category: &str, key: &str, query: String, evidence: Vec<String>) {
        let id = format!("{category}:{key}");
        self.out.questions.push(Question {
            id,
            project: project.to_owned(),
            category: category.to_owned(),
            query,
            evidence,
        });
    }

    fn memory(&mut self, id: String, project: &str, title: String, text: String, obs_type: &str) {
        self.out.memories.push(Memory {
            id,
            project: project.to_owned(),
            title: cut(&title, 200),
            text,
            obs_type: obs_type.to_owned(),
        });
    }

    fn session(&mut self, s: &SessionEvents) {
        let mut prompt = String::new();
        let mut prompt_no = 0;
        let mut project = String::new();
        for e in &s.events {
            self.out.events.push(EventLine {
                session: s.session_id.clone(),
                kind: e.kind,
                origin: e.origin,
                at_ms: e.at_ms,
                payload: portable(trim(&e.payload)),
            });
            let p = &e.payload;
            let cwd = p["cwd"].as_str().unwrap_or("");
            if project.is_empty() && !cwd.is_empty() {
                project = project_of(cwd, None);
            }
            match e.kind {
                EventKind::UserPromptSubmit => {
                    prompt_no += 1;
                    prompt = p["prompt"].as_str().unwrap_or("").to_owned();
                    if prompt.trim().is_empty() || prompt.trim_start().starts_with('<') {
                        continue;
                    }
                    let id = format!("prompt:{}:{prompt_no}", s.session_id);
                    self.memory(id.clone(), &project, cut(&prompt, 60), cut(&prompt, 2_000), "discovery");
                    let words = key_words(&prompt);
                    if words.split(' ').count() >= 3 {
                        self.question(&project, "request", &id, format!("When did I ask about {words}?"), vec![id.clone()]);
                    }
                    self.last_session.insert(project.clone(), (e.at_ms, id));
                }
                EventKind::PostToolUse | EventKind::PostToolUseFailure => {
                    let Some(tid) = e.tool_use_id() else { continue };
                    self.tool(&project, cwd, &prompt, tid, e.kind == EventKind::PostToolUseFailure, e.at_ms, p);
                }
                _ => {}
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn tool(&mut self, project: &str, cwd: &str, prompt: &str, tid: &str, failed: bool, at_ms: i64, p: &Value) {
        let tool = p["tool_name"].as_str().unwrap_or("");
        let input = &p["tool_input"];
        let id = format!("tool:{tid}");
        let output = response_text(&p["tool_response"]);
        let output = if failed && output.trim().is_empty() {
            p["error"].as_str().unwrap_or("").to_owned()
        } else {
            output
        };
        let file = input["file_path"]
            .as_str()
            .or(input["notebook_path"].as_str())
            .map(|f| relative(f, cwd));
        let command = input["command"].as_str().unwrap_or("");
        // Rarity and identifiers from the payload as the dataset keeps it (long strings trimmed):
        // what the replayed sessions can find.
        let kept = trim(p);
        self.where_changed.call(
            project,
            &format!("{}\n{}", all_text(&kept["tool_input"]), all_text(&kept["tool_response"])),
        );
        let description = input["description"].as_str().unwrap_or("").trim();
        let because = if prompt.trim().is_empty() {
            String::new()
        } else {
            format!(" Request: {}.", cut(prompt, 120))
        };
        if failed {
            let what = if command.is_empty() {
                file.unwrap_or_else(|| tool.to_owned())
            } else {
                cut(command, 200)
            };
            let line = failure_line(&output).unwrap_or_else(|| "no output".to_owned());
            self.memory(
                id.clone(),
                project,
                format!("{tool} failed: {}", cut(&line, 100)),
                format!("`{what}` failed: {}.{because}", cut(&output, 500)),
                "bugfix",
            );
            let words: Vec<&str> = line
                .split_whitespace()
                .filter(|w| w.chars().any(char::is_alphabetic))
                .take(8)
                .collect();
            if words.len() >= 3 {
                let q = match pick(&id, 2) {
                    0 => format!("Which command failed with \"{}\"?", words.join(" ")),
                    _ => format!("What went wrong with the error {}?", words.join(" ")),
                };
                self.question(project, "command-failed", tid, q, vec![id]);
            }
            return;
        }
        if WRITES.contains(&tool) {
            let f = file.unwrap_or_default();
            let (old, new) = change_text(input);
            self.where_changed.write(project, &f, tid, &change_text(&kept["tool_input"]).1);
            let verb = if tool == "Write" { "Created" } else { "Edited" };
            self.memory(
                id.clone(),
                project,
                format!("{verb} {f}"),
                format!("{verb} {f}.{because} Change: {}", cut(&new, 400)),
                "change",
            );
            let ids = added_identifiers(&old, &new);
            if !ids.is_empty() {
                let names = ids.iter().take(2).cloned().collect::<Vec<_>>().join(" and ");
                let q = match pick(&id, 2) {
                    0 => format!("Which file was changed to add {names}?"),
                    _ => format!("Where did we add {names}?"),
                };
                self.question(project, "file-changed", tid, q, vec![id.clone()]);
            }
            self.last_write.insert((project.to_owned(), f), (at_ms, id));
            return;
        }
        let (title, text, obs_type) = match tool {
            "Bash" => {
                let label = if description.is_empty() {
                    cut(command, 80)
                } else {
                    description.to_owned()
                };
                let out = result_line(&output).unwrap_or_else(|| "(no output)".to_owned());
                (
                    format!("Ran: {label}"),
                    format!("`{}` → {}", cut(command, 300), cut(&out, 300)),
                    "discovery",
                )
            }
            "Read" => {
                let f = file.unwrap_or_default();
                (format!("Read {f}"), format!("Read {f}: {}", cut(&output, 300)), "discovery")
            }
            "Grep" | "Glob" => {
                let pat = input["pattern"].as_str().unwrap_or("");
                (
                    format!("Searched for {pat}"),
                    format!("{tool} {pat}: {}", cut(&output, 300)),
                    "discovery",
                )
            }
            _ => (tool.to_owned(), format!("{tool}: {}", cut(&input.to_string(), 300)), "discovery"),
        };
        self.memory(id.clone(), project, title, text, obs_type);
        if tool == "Bash" && description.split_whitespace().count() >= 3 {
            let mut d = description.to_owned();
            if let Some(c) = d.get(..1) {
                d = format!("{}{}", c.to_lowercase(), &d[1..]);
            }
            self.question(project, "command-run", tid, format!("How did I {d}?"), vec![id]);
        }
    }

    fn finish(mut self) -> Generated {
        let mut writes: Vec<((String, String), (i64, String))> = self.last_write.drain().collect();
        writes.sort();
        for ((project, file), (_, id)) in writes {
            let name = file.rsplit('/').next().unwrap_or(&file).to_owned();
            if name.is_empty() {
                continue;
            }
            self.question(&project, "file-touched", &file, format!("When was {name} last changed?"), vec![id]);
        }
        let mut last: Vec<(String, (i64, String))> = self.last_session.drain().collect();
        last.sort();
        for (project, (_, id)) in last {
            self.question(
                &project,
                "unfinished",
                &project,
                "What was I in the middle of at the end of the last session?".to_owned(),
                vec![id],
            );
        }
        let changed = self.where_changed.questions();
        self.out.questions.extend(changed);
        let mut seen = HashSet::new();
        self.out.memories.retain(|m| seen.insert(m.id.clone()));
        let mut seen = HashSet::new();
        self.out.questions.retain(|q| seen.insert(q.id.clone()));
        self.out
    }
}

/// The dataset of `sessions` (main sessions in a stable order: sort them before calling).
pub fn generate(sessions: &[SessionEvents]) -> Generated {
    let mut b = Builder {
        out: Generated::default(),
        where_changed: Default::default(),
        last_write: HashMap::new(),
        last_session: HashMap::new(),
    };
    for s in sessions {
        b.session(s);
    }
    b.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_outputs_keep_their_head_and_tail() {
        let long = format!("{}ERROR at the end", "x".repeat(5_000));
        let t = trim(&serde_json::json!({"stdout": long}));
        let s = t["stdout"].as_str().unwrap();
        assert!(s.ends_with("ERROR at the end") && s.contains("[… trimmed …]"));
        assert!(s.chars().count() < 2_700);
    }
}
