//! The action warning's use-case (issue 53): the command or file the agent is about to touch,
//! cleaned as ingest cleans a call (so a secret in it is never a key) and keyed as the index keys
//! it, answered from the index when it failed before (in this session or an earlier one), has not
//! passed since, and was not warned about in this session yet; a file, when an earlier session's
//! edit of it failed or broke a check (this session's own failed edit is the tool result the agent
//! just read). Silence is the default.

use serde_json::json;

use super::injected::Source;
use super::rows::command_key;
use super::storage::{ActionMemory, Injection, item_of_command, item_of_file};
use super::warning::{command_warning, file_warning};
use crate::graph::names::relative_path;
use crate::pipeline::privacy::Privacy;
use crate::retrieval::RetrievalError;

/// A file note older than this says little about the file as it is now: it is not shown.
pub const NOTE_MAX_AGE_MS: i64 = 30 * 24 * 3_600_000;

/// What the hook asks before a tool call.
#[derive(Debug, Clone, Default)]
pub struct WarningRequest {
    pub session: String,
    pub project: String,
    /// The project root the paths are relative to.
    pub root: Option<String>,
    /// A shell command about to run.
    pub command: Option<String>,
    /// A file about to be edited.
    pub file: Option<String>,
    pub now: i64,
}

/// The warning to show, if any.
pub async fn warning(storage: &dyn ActionMemory, privacy: &Privacy, req: WarningRequest) -> Result<Option<String>, RetrievalError> {
    let root = req.root.as_deref().filter(|r| !r.is_empty());
    if let Some(command) = &req.command {
        let (clean, _) = privacy.clean_json(json!({ "command": command }));
        let Some(key) = clean["command"].as_str().and_then(|c| command_key(c, root)) else {
            return Ok(None);
        };
        let found = storage
            .action_lookup(req.project.clone(), Some(key.clone()), None, req.session.clone())
            .await?;
        let Some(failure) = found.failure.filter(|_| !found.warned) else {
            return Ok(None);
        };
        let files = failure.fix.iter().map(|f| f.file.clone()).collect();
        let claimed = claim(storage, &req, item_of_command(&key), files).await?;
        return Ok(claimed.then(|| command_warning(&failure, &req.session)));
    }
    let Some(file) = &req.file else {
        return Ok(None);
    };
    // Cleaned as ingest cleans an edit's path, so the key (and the injection row) never holds a
    // secret that a path carried.
    let (clean, _) = privacy.clean_json(json!({ "file_path": file }));
    let Some(file) = clean["file_path"].as_str().map(|f| relative_path(f, root)) else {
        return Ok(None);
    };
    let found = storage
        .action_lookup(req.project.clone(), None, Some(file.clone()), req.session.clone())
        .await?;
    let notes: Vec<_> = found
        .notes
        .into_iter()
        .filter(|n| !found.warned && n.session != req.session && n.at >= req.now - NOTE_MAX_AGE_MS)
        .collect();
    // The warned file itself is the edit being made: only what fixed it before shows use.
    let files = notes.iter().flat_map(|n| n.fix.iter().map(|f| f.file.clone())).collect();
    if notes.is_empty() || !claim(storage, &req, item_of_file(&file), files).await? {
        return Ok(None);
    }
    Ok(Some(file_warning(&file, &notes)))
}

async fn claim(storage: &dyn ActionMemory, req: &WarningRequest, item: String, files: Vec<String>) -> Result<bool, RetrievalError> {
    Ok(storage
        .record_injection(Injection {
            session: req.session.clone(),
            project: req.project.clone(),
            source: Source::Action,
            item: Some(item),
            files,
            ids: Vec::new(),
            now: req.now,
        })
        .await?)
}

/// Records, off the request's path, the records a context route showed a session (issue 53's
/// delivery and use tracking); a failure is logged, never the caller's.
pub fn record_shown(
    storage: std::sync::Arc<dyn ActionMemory>,
    session: Option<&str>,
    project: &str,
    source: Source,
    ids: Vec<i64>,
    now: i64,
) {
    let Some(session) = session.filter(|s| !s.is_empty()) else {
        return;
    };
    if ids.is_empty() {
        return;
    }
    let i = Injection {
        session: session.to_string(),
        project: project.to_string(),
        source,
        item: None,
        files: Vec::new(),
        ids,
        now,
    };
    let Ok(rt) = tokio::runtime::Handle::try_current() else {
        return;
    };
    rt.spawn(async move {
        if let Err(e) = storage.record_injection(i).await {
            tracing::warn!(error = %e, "recording injected records failed");
        }
    });
}

/// Reads a session's transcript and records which injected items reached the agent and which it
/// used ([`super::use_check`]); off the caller's path, and a no-op without a transcript or items.
pub fn check_uses(storage: std::sync::Arc<dyn ActionMemory>, session: String) {
    let Ok(rt) = tokio::runtime::Handle::try_current() else {
        return;
    };
    rt.spawn(async move {
        if let Err(e) = check_uses_now(&*storage, &session).await {
            tracing::warn!(error = %e, "checking the use of injected memory failed");
        }
    });
}

/// [`check_uses`], awaited (tests).
pub async fn check_uses_now(storage: &dyn ActionMemory, session: &str) -> Result<usize, RetrievalError> {
    let (path, items) = storage.session_uses(session.to_string()).await?;
    let Some(path) = path.filter(|_| !items.is_empty()) else {
        return Ok(0);
    };
    let text = tokio::task::spawn_blocking(move || read_capped(std::path::Path::new(&path)))
        .await
        .ok()
        .flatten();
    let Some(text) = text else {
        return Ok(0);
    };
    let marks = super::use_check::decide(&super::use_check::parse(&text), &items);
    let n = marks.len();
    storage.mark_uses(marks, crate::clock::now_ms()).await?;
    Ok(n)
}

/// A regular file's text, up to the cap. The path is the host's report: it is opened without
/// following a final link and without blocking (a FIFO planted there never hangs the reader), and
/// what was opened must be a regular file (checked on the open file, not the path).
fn read_capped(path: &std::path::Path) -> Option<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(crate::data_dir::NO_FOLLOW | libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    if !file.metadata().ok()?.file_type().is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(super::use_check::TRANSCRIPT_MAX_BYTES).read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::read_capped;

    #[test]
    fn a_transcript_is_read_only_from_a_regular_file_not_a_link_or_fifo() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("t.jsonl");
        std::fs::write(&real, "{}\n").unwrap();
        assert_eq!(read_capped(&real).as_deref(), Some("{}\n"));
        let link = dir.path().join("link.jsonl");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert_eq!(read_capped(&link), None, "a link");
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert_eq!(read_capped(&fifo), None, "a FIFO, without hanging");
        assert_eq!(read_capped(dir.path()), None, "a directory");
    }
}
