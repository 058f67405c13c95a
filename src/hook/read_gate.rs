//! The read gate in the PreToolUse(Read) hook (issue 39, opt-in `MEMD_READ_GATE`): a whole-file
//! Read of a code file of at least `MEMD_READ_GATE_MIN_BYTES` is denied with the outline memd
//! recorded of it (`GET /api/read-gate`) and the advice to read by offset/limit. A marker file
//! per session and file lets the second whole read pass; no outline, no worker, or any error:
//! the read passes.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::env::Budget;
use super::output::{HOST_CONTEXT_MAX_CHARS, fenced};
use super::run::{Run, query_value};
use super::transport::{Start, fetch};
use crate::config::keys;
use crate::protocol::paths;
use crate::readgate::{is_code, whole_read};

/// Markers older than this are removed when a new one is written.
const MARKER_TTL: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

fn marker(dir: &Path, session: &str, file: &Path) -> PathBuf {
    let digest = Sha256::digest(format!("{session}\n{}", file.display()).as_bytes());
    let name: String = digest.iter().take(12).map(|b| format!("{b:02x}")).collect();
    dir.join(name)
}

fn sweep(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let old = e
            .metadata()
            .ok()
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > MARKER_TTL);
        if old {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// `{"hookSpecificOutput":{…,"permissionDecision":"deny","permissionDecisionReason":…}}`.
fn deny(reason: &str) -> String {
    serde_json::json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": reason,
    }})
    .to_string()
}

/// The deny reply, or None to let the read through.
/// `path_query` (the paths and projects of the request) is built only when the gate applies.
pub fn check(r: &Run<'_>, file: &Path, bytes: u64, path_query: impl FnOnce() -> String) -> Option<String> {
    let input = r.input.value("tool_input")?;
    if !r.hook.flag(&keys::READ_GATE) || r.platform != "claude" || !whole_read(input) {
        return None;
    }
    if !is_code(&file.to_string_lossy()) || bytes < r.hook.number(&keys::READ_GATE_MIN_BYTES) {
        return None;
    }
    let dir = r.hook.dir.root.join("read-gate");
    let mark = marker(&dir, r.session_id(), file);
    if mark.exists() {
        // The agent asked for the whole file again: it gets it.
        let _ = std::fs::remove_file(&mark);
        return None;
    }
    let budget = Budget::new(r.hook.started, r.hook.short_budget());
    let path = format!("{}?{}&bytes={bytes}", paths::READ_GATE, path_query());
    let resp = fetch(&r.hook, "read-gate", "GET", &path, None, &budget, Start::Never)?;
    let v: serde_json::Value = serde_json::from_str(&resp.text()).ok()?;
    let reason = v["reason"].as_str()?;
    if std::fs::create_dir_all(&dir).is_err() || std::fs::write(&mark, b"").is_err() {
        // Without a marker a second whole read would be denied too: let this one through.
        return None;
    }
    sweep(&dir);
    Some(deny(&fenced(reason, HOST_CONTEXT_MAX_CHARS as usize)))
}

/// The query of the paths and projects (shared with the file-context request).
pub fn query(forms: &[String], chain: &str) -> String {
    let mut q: Vec<String> = forms.iter().map(|f| format!("path={}", query_value(f))).collect();
    q.push(format!("projects={}", query_value(chain)));
    q.join("&")
}
