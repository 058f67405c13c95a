//! The hook side of the spool (docs/spec/hooks.md §2.7): an unacknowledged event becomes one fsync'd
//! JSON line in `<data>/spool/<pid>-<ts>.jsonl` (written as `.jsonl.tmp`, renamed, directory
//! fsync'd). Secrets are stripped first with the worker's own privacy pipeline — compiled only on
//! this rare path.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::env::HookEnv;
use super::event::IngestEvent;
use super::log::hook_log;
use crate::clock::{iso, now_ms};
use crate::config::keys;
use crate::pipeline::privacy::Privacy;
use crate::pipeline::redact::{RedactConfig, Redactor};

#[derive(Debug, thiserror::Error)]
pub enum SpoolError {
    #[error("spool is full ({0} files)")]
    Full(usize),
    #[error("spool write failed: {0}")]
    Io(#[from] std::io::Error),
}

/// The spool line of an event: `{"v":1,"event_id",…,"body"}`.
pub fn spool_line(event: &IngestEvent) -> Value {
    json!({
        "v": 1,
        "event_id": event.event_id,
        "spooled_at": iso(now_ms()),
        "platform": "claude-code",
        "handler": event.handler,
        "method": "POST",
        "path": event.route.path(),
        "body": event.body,
    })
}

/// Strips tags and redacts secrets in the free-text fields of the body, as the worker would.
fn scrub(hook: &HookEnv<'_>, body: &mut Value) {
    let token = hook.token();
    let disabled = hook.text(&keys::REDACT_DISABLED_BUILTINS);
    let custom = hook.text(&keys::REDACT_CUSTOM_PATTERNS);
    let (redactor, _) = Redactor::new(&RedactConfig {
        redact: hook.flag(&keys::REDACT),
        disabled_builtins: &disabled,
        custom_patterns_json: &custom,
        memd_token: token.as_deref(),
    });
    let privacy = Privacy::new(redactor);
    for key in ["tool_input", "tool_response"] {
        if let Some(v) = body.get_mut(key) {
            let (clean, _) = privacy.clean_json(v.take());
            *v = clean;
        }
    }
    for key in ["tool_name", "cwd", "transcript_path", "custom_title"] {
        if let Some(Value::String(s)) = body.get_mut(key) {
            *s = privacy.redactor().redact(s).0;
        }
    }
    for key in ["prompt", "last_assistant_message"] {
        if let Some(Value::String(s)) = body.get_mut(key) {
            let cleaned = privacy.clean_text(s);
            // A fully private prompt must stay private for the worker, not become "[media prompt]".
            *s = if cleaned.private && !s.trim().is_empty() {
                "<private></private>".into()
            } else {
                cleaned.text
            };
        }
    }
}

/// Writes the event to the spool (or logs why it could not). Never fails the hook.
pub fn spool(hook: &HookEnv<'_>, event: &mut IngestEvent, reason: &str) {
    scrub(hook, &mut event.body);
    match write_spool_file(hook, event) {
        Ok(path) => hook_log(
            &hook.dir,
            hook.started,
            event.handler,
            Some(&event.event_id),
            &format!("spooled ({reason}) to {}", path.display()),
        ),
        Err(e) => hook_log(
            &hook.dir,
            hook.started,
            event.handler,
            Some(&event.event_id),
            &format!("dropped ({reason}): {e}"),
        ),
    }
}

fn write_spool_file(hook: &HookEnv<'_>, event: &IngestEvent) -> Result<PathBuf, SpoolError> {
    let dir = hook.dir.spool();
    ensure_private_dir(hook, &dir)?;
    let max = hook.number(&keys::SPOOL_MAX_FILES) as usize;
    let count = std::fs::read_dir(&dir)?
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".jsonl"))
        .count();
    if count >= max {
        return Err(SpoolError::Full(count));
    }
    let mut line = serde_json::to_vec(&spool_line(event)).unwrap_or_default();
    line.push(b'\n');
    let stem = format!("{}-{}", std::process::id(), now_ms());
    let (tmp, mut file) = create_exclusive(&dir, &stem)?;
    file.write_all(&line)?;
    file.sync_all()?;
    let done = PathBuf::from(tmp.to_string_lossy().trim_end_matches(".tmp").to_string());
    std::fs::rename(&tmp, &done)?;
    File::open(&dir)?.sync_all()?;
    Ok(done)
}

fn create_exclusive(dir: &Path, stem: &str) -> std::io::Result<(PathBuf, File)> {
    let mut n = 0;
    loop {
        let name = if n == 0 {
            format!("{stem}.jsonl.tmp")
        } else {
            format!("{stem}-{n}.jsonl.tmp")
        };
        let path = dir.join(name);
        match OpenOptions::new().write(true).create_new(true).mode(0o600).open(&path) {
            Ok(f) => return Ok((path, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1000 => n += 1,
            Err(e) => return Err(e),
        }
    }
}

fn ensure_private_dir(hook: &HookEnv<'_>, dir: &Path) -> std::io::Result<()> {
    hook.dir.private_dir(dir).map_err(std::io::Error::other)
}

/// A 400/413/415/422 answer: the event goes to `spool/rejected/<eventId>.json`, never retried.
pub fn reject(hook: &HookEnv<'_>, event: &mut IngestEvent, status: u16) {
    scrub(hook, &mut event.body);
    let dir = hook.dir.spool().join("rejected");
    let result = ensure_private_dir(hook, &dir).and_then(|_| {
        let mut line = serde_json::to_vec(&spool_line(event)).unwrap_or_default();
        line.push(b'\n');
        let mut f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .custom_flags(crate::data_dir::NO_FOLLOW)
            .open(dir.join(format!("{}.json", event.event_id)))?;
        f.write_all(&line)?;
        f.sync_all()
    });
    let reason = match result {
        Ok(()) => format!("rejected by the worker ({status})"),
        Err(e) => format!("rejected by the worker ({status}); could not keep it: {e}"),
    };
    hook_log(&hook.dir, hook.started, event.handler, Some(&event.event_id), &reason);
}
