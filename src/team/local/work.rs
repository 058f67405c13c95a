//! Work state in team memory (issue 40): each shared project's work states (one per branch) go to
//! the server as one row each, sent again whenever they change (the row's version is the state's
//! `updated_at_epoch`); teammates' states are kept as last pulled in `team_work_state`, apart from
//! this machine's own — another developer's task list is shown as theirs, never merged into mine.

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use super::rows::{Incoming, LocalRef, Outgoing, WorkBody, WorkItemBody, work_gid};
use crate::pipeline::redact::Redactor;
use crate::store::StoreError;
use crate::store::record::record;

/// States of the shared projects whose newest version is not on the server yet.
pub fn outgoing(
    conn: &Connection,
    projects: &[String],
    redactor: &Redactor,
    install: &str,
    limit: usize,
) -> Result<Vec<Outgoing>, StoreError> {
    let mut out = Vec::new();
    for project in projects {
        for w in crate::work_state::tables::list(conn, Some(project), 100)? {
            if out.len() >= limit {
                return Ok(out);
            }
            let gid = work_gid(install, &w.project, &w.branch);
            let pushed: Option<Option<i64>> = conn
                .query_row("SELECT version FROM team_rows WHERE gid = ?1", [&gid], |r| r.get(0))
                .optional()?;
            if pushed.flatten().is_some_and(|v| v >= w.updated_at_epoch) {
                continue;
            }
            let body = WorkBody {
                branch: w.branch.clone(),
                task: w.task.clone(),
                notes: w.notes.clone(),
                items: w
                    .items
                    .iter()
                    .map(|i| WorkItemBody {
                        key: i.key.clone(),
                        text: i.text.clone(),
                        status: i.status.clone(),
                        updated_at_epoch: i.updated_at_epoch,
                    })
                    .collect(),
                updated_at_epoch: w.updated_at_epoch,
            }
            .redacted(redactor);
            let body = serde_json::to_value(body).unwrap_or_default();
            out.push(Outgoing {
                gid,
                local: LocalRef::Work(w.updated_at_epoch),
                kind: "work_state",
                project: w.project.clone(),
                provenance: "agent".into(),
                content_hash: crate::pipeline::hash::sha256_hex(body.to_string().as_bytes()),
                body,
                created_at_epoch: w.updated_at_epoch,
            });
        }
    }
    Ok(out)
}

/// Keeps a teammate's state when it is newer than the one here; true when it changed.
pub fn apply(conn: &Connection, r: &Incoming) -> Result<bool, StoreError> {
    let body: WorkBody = serde_json::from_value(r.body.clone()).unwrap_or_default();
    let n = conn.execute(
        "INSERT INTO team_work_state(gid, origin, project, branch, body, seq, updated_at_epoch)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT(gid) DO UPDATE SET body = excluded.body, seq = excluded.seq, updated_at_epoch = excluded.updated_at_epoch
           WHERE excluded.seq > team_work_state.seq",
        params![
            r.gid,
            r.origin,
            r.project,
            body.branch,
            r.body.to_string(),
            r.seq,
            body.updated_at_epoch
        ],
    )?;
    Ok(n > 0)
}

/// A teammate's work state as shown (`GET /api/team`, the viewer).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TeamWork {
    pub origin: String,
    pub project: String,
    #[serde(flatten)]
    pub state: WorkBody,
}

record! {
    /// A row of `team_work_state` as stored (its body the JSON a teammate pushed).
    #[derive(Eq)]
    pub struct TeamWorkRow, TEAM_WORK_COLS = "t" {
        origin: String = "origin",
        project: String = "project",
        body: String = "body",
    }
}

/// Teammates' states, newest first, at most `limit`.
pub fn list(conn: &Connection, limit: usize) -> Result<Vec<TeamWork>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {TEAM_WORK_COLS} FROM team_work_state t ORDER BY t.updated_at_epoch DESC LIMIT ?1"
    ))?;
    let rows = stmt.query_map([limit as i64], |r| {
        let row = TeamWorkRow::from_row(r)?;
        Ok(TeamWork {
            origin: row.origin,
            project: row.project,
            state: serde_json::from_str(&row.body).unwrap_or_default(),
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}
