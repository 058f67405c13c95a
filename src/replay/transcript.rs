//! Reading transcript files (hooks.md §6 "Reading"): records streamed line by line with no length
//! limit, blank/unparseable lines and repeated `uuid`s skipped, only `user`/`assistant`/`system`
//! records kept; and finding a session's subagent files.

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::ReplayError;
use super::record;

/// Reads the records of one `.jsonl` file that take part in the event stream.
pub fn read_records(path: &Path) -> Result<Vec<Value>, ReplayError> {
    let file = File::open(path).map_err(|source| ReplayError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse_records(BufReader::new(file)).map_err(|source| ReplayError::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// [`read_records`] over any reader.
pub fn parse_records(mut reader: impl BufRead) -> std::io::Result<Vec<Value>> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let mut line = Vec::new();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            return Ok(out);
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let Ok(r) = serde_json::from_slice::<Value>(&line) else {
            continue;
        };
        if !matches!(record::kind(&r), "user" | "assistant" | "system") || !r.is_object() {
            continue;
        }
        if let Some(uuid) = r["uuid"].as_str()
            && !seen.insert(uuid.to_string())
        {
            continue;
        }
        out.push(r);
    }
}

/// A subagent transcript attached to a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubagentFile {
    pub path: PathBuf,
    /// From the file name `agent-<id>.jsonl` (the records' `agentId` wins when present).
    pub agent_id: String,
    /// `agentType` of `agent-<id>.meta.json`, when that file exists.
    pub agent_type: Option<String>,
}

/// Whether a file is a subagent transcript rather than a session (`agent-*.jsonl`).
pub fn is_subagent_file(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("agent-") && n.ends_with(".jsonl"))
}

/// The subagent files of a session file: `<stem>/subagents/agent-<id>.jsonl` (compaction helpers
/// `agent-acompact-*` left out), plus 2.0.x `agent-<hex>.jsonl` siblings whose records carry
/// `session_id`.
pub fn subagent_files(session_file: &Path, session_id: &str) -> Vec<SubagentFile> {
    let mut out = Vec::new();
    let stem = session_file.with_extension("");
    let nested = stem.join("subagents");
    out.extend(agent_files_in(&nested).into_iter().map(|p| describe(&p)));
    if let Some(dir) = session_file.parent() {
        for p in agent_files_in(dir) {
            if first_session_id(&p).as_deref() == Some(session_id) {
                out.push(describe(&p));
            }
        }
    }
    out
}

fn agent_files_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| is_subagent_file(p))
        .filter(|p| {
            !p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("agent-acompact-"))
        })
        .collect();
    files.sort();
    files
}

fn describe(path: &Path) -> SubagentFile {
    let name = path.file_stem().and_then(|n| n.to_str()).unwrap_or("");
    let agent_id = name.strip_prefix("agent-").unwrap_or(name).to_string();
    let agent_type = std::fs::read(path.with_extension("meta.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .and_then(|v| v["agentType"].as_str().map(str::to_string));
    SubagentFile {
        path: path.to_path_buf(),
        agent_id,
        agent_type,
    }
}

fn first_session_id(path: &Path) -> Option<String> {
    let file = File::open(path).ok()?;
    BufReader::new(file)
        .lines()
        .take(20)
        .map_while(Result::ok)
        .filter_map(|l| serde_json::from_str::<Value>(&l).ok())
        .find_map(|r| r["sessionId"].as_str().map(str::to_string))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skips_blank_bad_duplicate_and_foreign_records() {
        let text = concat!(
            "{\"type\":\"user\",\"uuid\":\"a\"}\n",
            "\n",
            "{not json\n",
            "{\"type\":\"progress\",\"uuid\":\"b\"}\n",
            "{\"type\":\"user\",\"uuid\":\"a\"}\n",
            "{\"type\":\"system\",\"uuid\":\"c\"}\n",
            "{\"message\":{\"role\":\"assistant\"},\"uuid\":\"d\"}",
        );
        let records = parse_records(text.as_bytes()).unwrap();
        let uuids: Vec<&str> = records.iter().filter_map(|r| r["uuid"].as_str()).collect();
        assert_eq!(uuids, ["a", "c", "d"]);
    }

    #[test]
    fn finds_nested_subagents_with_meta_and_skips_compaction_helpers() {
        let dir = tempfile::tempdir().unwrap();
        let session = dir.path().join("s1.jsonl");
        std::fs::write(&session, "").unwrap();
        let sub = dir.path().join("s1/subagents");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(sub.join("agent-abc.jsonl"), "").unwrap();
        std::fs::write(sub.join("agent-abc.meta.json"), r#"{"agentType":"Explore"}"#).unwrap();
        std::fs::write(sub.join("agent-acompact-1.jsonl"), "").unwrap();
        std::fs::write(dir.path().join("agent-f00.jsonl"), "{\"sessionId\":\"sid\"}\n").unwrap();
        std::fs::write(dir.path().join("agent-f01.jsonl"), "{\"sessionId\":\"other\"}\n").unwrap();
        let found = subagent_files(&session, "sid");
        let ids: Vec<(&str, Option<&str>)> = found.iter().map(|f| (f.agent_id.as_str(), f.agent_type.as_deref())).collect();
        assert_eq!(ids, [("abc", Some("Explore")), ("f00", None)]);
    }
}
