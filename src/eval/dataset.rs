//! The retrieval benchmark's dataset: memories to store, questions with the ids of the memories
//! that answer them (evidence), and — for the extractive path — the hook events of the sessions
//! the memories came from. Three JSONL files in one directory (`memories.jsonl`,
//! `questions.jsonl`, `sessions.jsonl`); every file but `memories.jsonl` is optional, and any other
//! `questions*.jsonl` file (the hand-written paraphrases) is read too.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::EvalError;
use crate::replay::event::{EventKind, HookEvent, Origin, SessionEvents};

/// One memory as `POST /api/memory/save` takes it. `id` is the dataset's own: `tool:<tool_use_id>`
/// or `prompt:<session_id>:<n>`, so the extractive path can find the rows made from the same event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Memory {
    pub id: String,
    pub project: String,
    pub title: String,
    pub text: String,
    #[serde(rename = "type")]
    pub obs_type: String,
}

/// One question asked within its project; any evidence id in the top k is a hit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Question {
    pub id: String,
    pub project: String,
    pub category: String,
    pub query: String,
    pub evidence: Vec<String>,
}

impl Question {
    /// Its half of the dataset, fixed by its id (FNV-1a, even → `tune`, odd → `held-out`): search
    /// settings are chosen on the `tune` half and reported on the `held-out` half (issue 35).
    pub fn split(&self) -> &'static str {
        let h = self
            .id
            .bytes()
            .fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3));
        if h % 2 == 0 { "tune" } else { "held-out" }
    }
}

/// One hook event of a recorded session (the replay converter's output, tool output trimmed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventLine {
    pub session: String,
    pub kind: EventKind,
    pub origin: Origin,
    pub at_ms: i64,
    pub payload: Value,
}

/// A loaded dataset.
#[derive(Debug, Clone, Default)]
pub struct Dataset {
    pub memories: Vec<Memory>,
    pub questions: Vec<Question>,
    pub sessions: Vec<SessionEvents>,
}

fn read_lines<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<Vec<T>, EvalError> {
    let io = |e: std::io::Error| EvalError::Io(path.to_path_buf(), e);
    let f = std::fs::File::open(path).map_err(io)?;
    let mut out = Vec::new();
    for (n, line) in BufReader::new(f).lines().enumerate() {
        let line = line.map_err(io)?;
        if line.trim().is_empty() {
            continue;
        }
        let v = serde_json::from_str(&line).map_err(|e| EvalError::Format(path.to_path_buf(), n + 1, e.to_string()))?;
        out.push(v);
    }
    Ok(out)
}

/// Writes `rows` as JSONL (one compact object per line).
pub fn write_lines<T: Serialize>(path: &Path, rows: &[T]) -> Result<(), EvalError> {
    let io = |e: std::io::Error| EvalError::Io(path.to_path_buf(), e);
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).map_err(io)?);
    for r in rows {
        let line = serde_json::to_string(r).map_err(|e| EvalError::Format(path.to_path_buf(), 0, e.to_string()))?;
        writeln!(f, "{line}").map_err(io)?;
    }
    f.flush().map_err(io)
}

/// The question files of `dir`: `questions.jsonl` first, then the others by name.
fn question_files(dir: &Path) -> Result<Vec<PathBuf>, EvalError> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| EvalError::Io(dir.to_path_buf(), e))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.starts_with("questions") && name.ends_with(".jsonl")
        })
        .collect();
    files.sort_by_key(|p| (p.file_name().is_some_and(|n| n != "questions.jsonl"), p.clone()));
    Ok(files)
}

/// Loads the dataset in `dir`; a question whose evidence names no memory is an error.
pub fn load(dir: &Path) -> Result<Dataset, EvalError> {
    let memories: Vec<Memory> = read_lines(&dir.join("memories.jsonl"))?;
    let mut questions: Vec<Question> = Vec::new();
    for f in question_files(dir)? {
        questions.extend(read_lines::<Question>(&f)?);
    }
    let known: std::collections::HashSet<&str> = memories.iter().map(|m| m.id.as_str()).collect();
    for q in &questions {
        if q.evidence.is_empty() || q.evidence.iter().any(|e| !known.contains(e.as_str())) {
            return Err(EvalError::Evidence(q.id.clone()));
        }
    }
    let sessions_file = dir.join("sessions.jsonl");
    let sessions = if sessions_file.is_file() {
        group_sessions(read_lines(&sessions_file)?)
    } else {
        Vec::new()
    };
    Ok(Dataset {
        memories,
        questions,
        sessions,
    })
}

/// Event lines grouped into sessions, in first-seen order (events keep their order).
pub fn group_sessions(lines: Vec<EventLine>) -> Vec<SessionEvents> {
    let mut out: Vec<SessionEvents> = Vec::new();
    for l in lines {
        let at = match out.iter().position(|s| s.session_id == l.session) {
            Some(i) => i,
            None => {
                out.push(SessionEvents {
                    session_id: l.session.clone(),
                    transcript_path: l.payload["transcript_path"].as_str().unwrap_or("").to_owned(),
                    ..SessionEvents::default()
                });
                out.len() - 1
            }
        };
        out[at].events.push(HookEvent {
            kind: l.kind,
            origin: l.origin,
            at_ms: l.at_ms,
            payload: l.payload,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_whose_evidence_is_unknown_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let m = Memory {
            id: "tool:a".into(),
            project: "p".into(),
            title: "t".into(),
            text: "x".into(),
            obs_type: "change".into(),
        };
        write_lines(&dir.path().join("memories.jsonl"), &[m]).unwrap();
        let q = |id: &str, ev: &str| Question {
            id: id.into(),
            project: "p".into(),
            category: "c".into(),
            query: "q".into(),
            evidence: vec![ev.into()],
        };
        write_lines(&dir.path().join("questions.jsonl"), &[q("q1", "tool:a")]).unwrap();
        write_lines(&dir.path().join("questions_paraphrase.jsonl"), &[q("q2", "tool:a")]).unwrap();
        let d = load(dir.path()).unwrap();
        assert_eq!(d.questions.iter().map(|q| q.id.as_str()).collect::<Vec<_>>(), ["q1", "q2"]);
        write_lines(&dir.path().join("questions_bad.jsonl"), &[q("q3", "tool:zzz")]).unwrap();
        assert!(matches!(load(dir.path()), Err(EvalError::Evidence(id)) if id == "q3"));
    }
}
