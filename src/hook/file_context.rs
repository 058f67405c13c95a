//! PreToolUse (Read) → `file-context` (docs/spec/hooks.md §3.3): what memd knows about the file being
//! read, from `GET /api/observations/by-file?format=context`, as `additionalContext`; never starts
//! the worker. Its only `permissionDecision` is the opt-in read gate's deny ([`super::read_gate`]).

use crate::protocol::paths;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use super::env::Budget;
use super::output::{EMPTY, HOST_CONTEXT_MAX_CHARS, fenced, with_context};
use super::run::{Run, query_value};
use super::transport::{Start, fetch};
use crate::config::keys;

const MIN_FILE_BYTES: u64 = 1500;

fn slashes(p: &Path) -> String {
    p.to_string_lossy().replace('\\', "/")
}

pub fn run(r: &Run<'_>) -> String {
    if !r.hook.flag(&keys::FILE_CONTEXT) || r.input.agent("agent_id").is_some() || r.input.str("tool_name") != Some("Read") {
        return EMPTY.into();
    }
    let Some(file_path) = r
        .input
        .value("tool_input")
        .and_then(|v| v.get("file_path"))
        .and_then(|v| v.as_str())
    else {
        return EMPTY.into();
    };
    let absolute = if Path::new(file_path).is_absolute() {
        PathBuf::from(file_path)
    } else {
        Path::new(&r.cwd).join(file_path)
    };
    let Ok(meta) = std::fs::metadata(&absolute) else {
        return EMPTY.into();
    };
    // Claude Code's memory files are short: they are asked about whatever their size (issue 39).
    let memory_file = crate::bridge::files::is_memory_file(&absolute);
    if !meta.is_file() || (meta.len() < MIN_FILE_BYTES && !memory_file) {
        return EMPTY.into();
    }
    let mtime_ms = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_millis());
    let budget = Budget::new(r.hook.started, r.hook.short_budget());
    let identity = r.identity();
    let mut forms = vec![slashes(&absolute)];
    for base in [Path::new(&r.cwd), identity.root.as_path()] {
        if let Ok(rel) = absolute.strip_prefix(base) {
            let rel = slashes(rel);
            if !rel.is_empty() && !forms.contains(&rel) {
                forms.push(rel);
            }
        }
    }
    if let Some(denied) = super::read_gate::check(r, &absolute, meta.len(), || super::read_gate::query(&forms, &r.chain(&identity))) {
        return denied;
    }
    let mut path = format!("{}?", paths::OBSERVATIONS_BY_FILE);
    for f in &forms {
        path.push_str(&format!("path={}&", query_value(f)));
    }
    path.push_str(&format!(
        "projects={}&limit=40&platformSource={}&format=context&fileMtimeMs={}",
        query_value(&r.chain(&identity)),
        r.platform,
        mtime_ms
    ));
    // The worker ranks by relevance to this session's latest prompt when it has vectors.
    if !r.session_id().is_empty() {
        path.push_str(&format!("&contentSessionId={}", query_value(r.session_id())));
    }
    let Some(resp) = fetch(&r.hook, "file-context", "GET", &path, None, &budget, Start::Never) else {
        return EMPTY.into();
    };
    let text = resp.text();
    let text = text.trim();
    if text.is_empty() {
        return EMPTY.into();
    }
    let max = r.hook.number(&keys::CONTEXT_MAX_CHARS).min(HOST_CONTEXT_MAX_CHARS) as usize;
    with_context("PreToolUse", &fenced(text, max), None)
}
