//! The index the PreToolUse warning is answered from (issue 53; tables in
//! `store/schema_v13_action.sql`): kept at ingest, inside the transaction that stores the call
//! ([`note_queued`]), and read by key — a command's normalised form, a file relative to the
//! project — never searched.
//!
//! A check command that fails opens its key (what failed, when, in which session, the files this
//! session edited just before: the *suspects*); a pass closes it and records the files edited
//! between the failure and the pass (the *fix*); a suspect that a fix followed gets a file note
//! (`broke_check`). A failed edit of a file leaves a note (`edit_failed`) that a later successful
//! edit of the file resolves.

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

use super::normalize::{normalize, status_hidden};
use crate::graph::names::{failure_summary, failure_text, is_check, relative_path, working_part};
use crate::observer::extractive::salient::shows_failure;
use crate::store::tool_events::ToolEventIn;

/// The tools whose call edits one file.
pub const EDIT_TOOLS: [&str; 4] = ["Edit", "Write", "MultiEdit", "NotebookEdit"];
/// Edits older than this are no fix candidates (and are pruned).
const EDITS_KEPT_MS: i64 = 86_400_000;
/// The suspects of a failure: this session's edits in this window before it.
const SUSPECT_WINDOW_MS: i64 = 30 * 60_000;
const SUSPECTS_MAX: usize = 5;
const FIX_FILES_MAX: usize = 6;
const LINE_MAX_CHARS: usize = 200;
const COMMAND_MAX_CHARS: usize = 160;

/// One stored call as the index reads it.
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    pub project: &'a str,
    /// The project root the call's paths are relative to.
    pub root: Option<&'a str>,
    pub session: &'a str,
    pub tool: &'a str,
    pub input: &'a Value,
    /// The stored response (JSON text).
    pub response: &'a str,
    pub is_error: bool,
    /// `tool_uses.id`.
    pub row: i64,
    pub at: i64,
}

/// A file a fix edited, with the observation memd made of that edit when there is one yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixFile {
    pub file: String,
    pub observation_id: Option<i64>,
}

/// An open failure of a command key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandFailure {
    pub command: String,
    pub failed_session: String,
    pub failed_at: i64,
    pub failure_line: Option<String>,
    /// What made it pass the last time it went from failing to passing (empty: unknown).
    pub fix: Vec<FixFile>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoteKind {
    EditFailed,
    BrokeCheck,
}

impl NoteKind {
    fn parse(s: &str) -> Self {
        if s == "edit_failed" { Self::EditFailed } else { Self::BrokeCheck }
    }
}

/// What memd knows about editing one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileNote {
    pub kind: NoteKind,
    pub session: String,
    pub at: i64,
    /// The edit's error, or the failing check's line.
    pub line: Option<String>,
    /// The check that failed after a change (`BrokeCheck`).
    pub command: Option<String>,
    pub fix: Vec<FixFile>,
}

/// The key of a shell command as the index stores it: its normalised form, when it is a check.
pub fn command_key(command: &str, root: Option<&str>) -> Option<String> {
    normalize(command, root).filter(|k| is_check(k))
}

/// Whether a run of the check `command` failed: its call says so, or — when the line's exit status
/// is not the check's (`cargo test 2>&1 | tail`, `npm test || true`) — its output shows a failure.
pub fn check_failed(command: &str, is_error: bool, output: &str) -> bool {
    is_error || (status_hidden(command) && shows_failure(output))
}

/// The file an edit call writes, relative to `root` when inside it.
pub fn edited_file(tool: &str, input: &Value, root: Option<&str>) -> Option<String> {
    if !EDIT_TOOLS.contains(&tool) {
        return None;
    }
    let p = input["file_path"].as_str().or_else(|| input["notebook_path"].as_str())?;
    Some(relative_path(p, root))
}

fn cut(s: &str, max: usize) -> String {
    s.chars().take(max).collect()
}

/// Notes the call queued as `pending_id` (the store's `ingest_tool_event` in the same
/// transaction): only shell calls and edits are read.
pub fn note_queued(c: &Connection, pending_id: i64, e: &ToolEventIn) -> rusqlite::Result<()> {
    if e.tool_name != "Bash" && !EDIT_TOOLS.contains(&e.tool_name.as_str()) {
        return Ok(());
    }
    let Some((project, row)) = c
        .query_row(
            "SELECT project, tool_use_row_id FROM pending_messages WHERE id = ?1",
            [pending_id],
            |r| Ok((r.get::<_, String>(0)?, r.get::<_, Option<i64>>(1)?)),
        )
        .optional()?
    else {
        return Ok(());
    };
    let input: Value = serde_json::from_str(&e.tool_input).unwrap_or(Value::Null);
    let root = e.seed.project_root.as_deref().or(e.cwd.as_deref());
    note_call(
        c,
        &Call {
            project: &project,
            root,
            session: &e.seed.key.content_session_id,
            tool: &e.tool_name,
            input: &input,
            response: &e.tool_response,
            is_error: e.is_error,
            row: row.unwrap_or(0),
            at: e.occurred_at,
        },
    )
}

/// Updates the index with one call.
pub fn note_call(c: &Connection, call: &Call<'_>) -> rusqlite::Result<()> {
    if let Some(file) = edited_file(call.tool, call.input, call.root) {
        return note_edit(c, call, &file);
    }
    let Some(command) = call.input["command"].as_str().filter(|_| call.tool == "Bash") else {
        return Ok(());
    };
    let Some(key) = command_key(command, call.root) else {
        return Ok(());
    };
    if check_failed(command, call.is_error, &failure_text(call.response)) {
        note_failure(c, call, &key, command)
    } else {
        note_pass(c, call, &key)
    }
}

fn note_edit(c: &Connection, call: &Call<'_>, file: &str) -> rusqlite::Result<()> {
    if call.is_error {
        let line = failure_summary(call.response).map(|l| cut(&l, LINE_MAX_CHARS));
        c.execute(
            "INSERT INTO action_file_notes(project, file, kind, session, at_epoch, line, command, fix_files, resolved)
             VALUES (?1, ?2, 'edit_failed', ?3, ?4, ?5, NULL, '[]', 0)
             ON CONFLICT(project, file, kind) DO UPDATE SET session = excluded.session, at_epoch = excluded.at_epoch,
               line = excluded.line, resolved = 0",
            params![call.project, file, call.session, call.at, line],
        )?;
        return Ok(());
    }
    c.execute(
        "INSERT INTO action_edits(project, session, file, tool_use_row_id, at_epoch) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![call.project, call.session, file, call.row, call.at],
    )?;
    c.execute(
        "DELETE FROM action_edits WHERE project = ?1 AND at_epoch < ?2",
        params![call.project, call.at - EDITS_KEPT_MS],
    )?;
    c.execute(
        "UPDATE action_file_notes SET resolved = 1 WHERE project = ?1 AND file = ?2 AND kind = 'edit_failed' AND at_epoch <= ?3",
        params![call.project, file, call.at],
    )?;
    Ok(())
}

fn note_failure(c: &Connection, call: &Call<'_>, key: &str, command: &str) -> rusqlite::Result<()> {
    let line = failure_summary(call.response).map(|l| cut(&l, LINE_MAX_CHARS));
    let shown = cut(&working_part(command).unwrap_or_else(|| key.to_string()), COMMAND_MAX_CHARS);
    let mut stmt = c.prepare_cached(
        "SELECT file FROM action_edits WHERE project = ?1 AND at_epoch >= ?2 AND at_epoch <= ?3 AND session = ?4
         GROUP BY file ORDER BY max(at_epoch) DESC LIMIT ?5",
    )?;
    let suspects: Vec<String> = stmt
        .query_map(
            params![
                call.project,
                call.at - SUSPECT_WINDOW_MS,
                call.at,
                call.session,
                SUSPECTS_MAX as i64
            ],
            |r| r.get(0),
        )?
        .collect::<Result<_, _>>()?;
    c.execute(
        "INSERT INTO action_failures(project, command_key, command, failed_session, failed_at_epoch, failure_line, tool_use_row_id, open, suspects)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 1, ?8)
         ON CONFLICT(project, command_key) DO UPDATE SET command = excluded.command, failed_session = excluded.failed_session,
           failed_at_epoch = excluded.failed_at_epoch, failure_line = excluded.failure_line,
           tool_use_row_id = excluded.tool_use_row_id, open = 1, suspects = excluded.suspects",
        params![call.project, key, shown, call.session, call.at, line, call.row, Value::from(suspects).to_string()],
    )?;
    Ok(())
}

fn note_pass(c: &Connection, call: &Call<'_>, key: &str) -> rusqlite::Result<()> {
    let open: Option<(i64, String, Option<String>, String)> = c
        .query_row(
            "SELECT failed_at_epoch, suspects, failure_line, command FROM action_failures
             WHERE project = ?1 AND command_key = ?2 AND open = 1",
            params![call.project, key],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .optional()?;
    let Some((failed_at, suspects, line, command)) = open else {
        return Ok(());
    };
    let mut stmt = c.prepare_cached(
        "SELECT file, max(tool_use_row_id) FROM action_edits WHERE project = ?1 AND at_epoch >= ?2 AND at_epoch <= ?3
         GROUP BY file ORDER BY max(at_epoch) DESC LIMIT ?4",
    )?;
    let fix: Vec<(String, i64)> = stmt
        .query_map(params![call.project, failed_at, call.at, FIX_FILES_MAX as i64], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?
        .collect::<Result<_, _>>()?;
    let fix_json = Value::from(
        fix.iter()
            .map(|(f, row)| Value::from(vec![Value::from(f.as_str()), Value::from(*row)]))
            .collect::<Vec<_>>(),
    )
    .to_string();
    // A pass with no edit since the failure (a flaky test, a network hiccup) closes the key but
    // keeps what fixed it the time before.
    c.execute(
        "UPDATE action_failures SET open = 0, passed_at_epoch = ?3,
           fix_files = CASE WHEN ?4 = '[]' THEN fix_files ELSE ?4 END
         WHERE project = ?1 AND command_key = ?2",
        params![call.project, key, call.at, fix_json],
    )?;
    if fix.is_empty() {
        return Ok(());
    }
    // A suspect is only blamed when the fix touched it too: a file edited before the failure and
    // left alone after it is most likely not what broke the check.
    let suspects: Vec<String> = serde_json::from_str(&suspects).unwrap_or_default();
    for file in suspects.into_iter().filter(|s| fix.iter().any(|(f, _)| f == s)) {
        c.execute(
            "INSERT INTO action_file_notes(project, file, kind, session, at_epoch, line, command, fix_files, resolved)
             VALUES (?1, ?2, 'broke_check', ?3, ?4, ?5, ?6, ?7, 0)
             ON CONFLICT(project, file, kind) DO UPDATE SET session = excluded.session, at_epoch = excluded.at_epoch,
               line = excluded.line, command = excluded.command, fix_files = excluded.fix_files, resolved = 0",
            params![call.project, file, call.session, failed_at, line, command, fix_json],
        )?;
    }
    Ok(())
}

/// `[[file, row], …]` with each row's newest observation.
fn fix_files(c: &Connection, json: &str) -> rusqlite::Result<Vec<FixFile>> {
    let pairs: Vec<(String, i64)> = serde_json::from_str(json).unwrap_or_default();
    let mut stmt = c.prepare_cached("SELECT max(observation_id) FROM observation_sources WHERE tool_use_row_id = ?1")?;
    pairs
        .into_iter()
        .map(|(file, row)| {
            let observation_id: Option<i64> = stmt.query_row([row], |r| r.get(0))?;
            Ok(FixFile { file, observation_id })
        })
        .collect()
}

/// The open failure of `key` in `project`, if any.
pub fn open_failure(c: &Connection, project: &str, key: &str) -> rusqlite::Result<Option<CommandFailure>> {
    let row: Option<(String, String, i64, Option<String>, String)> = c
        .query_row(
            "SELECT command, failed_session, failed_at_epoch, failure_line, fix_files FROM action_failures
             WHERE project = ?1 AND command_key = ?2 AND open = 1",
            params![project, key],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )
        .optional()?;
    row.map(|(command, failed_session, failed_at, failure_line, fix)| {
        Ok(CommandFailure {
            command,
            failed_session,
            failed_at,
            failure_line,
            fix: fix_files(c, &fix)?,
        })
    })
    .transpose()
}

/// A file note as stored: kind, session, at, line, command, fix files.
type NoteRow = (String, String, i64, Option<String>, Option<String>, String);

/// What memd knows about editing `file` in `project`: unresolved failed edits and changes that
/// broke a check, newest first.
pub fn file_notes(c: &Connection, project: &str, file: &str) -> rusqlite::Result<Vec<FileNote>> {
    let mut stmt = c.prepare_cached(
        "SELECT kind, session, at_epoch, line, command, fix_files FROM action_file_notes
         WHERE project = ?1 AND file = ?2 AND (kind = 'broke_check' OR resolved = 0) ORDER BY at_epoch DESC",
    )?;
    let rows: Vec<NoteRow> = stmt
        .query_map(params![project, file], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?))
        })?
        .collect::<Result<_, _>>()?;
    rows.into_iter()
        .map(|(kind, session, at, line, command, fix)| {
            Ok(FileNote {
                kind: NoteKind::parse(&kind),
                session,
                at,
                line,
                command,
                fix: fix_files(c, &fix)?,
            })
        })
        .collect()
}

#[cfg(test)]
#[path = "rows_tests.rs"]
mod tests;
