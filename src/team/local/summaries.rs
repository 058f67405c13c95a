//! Session summaries in team memory (issue 40): which ones go to the server (the shared
//! projects', never quarantined, never one that came from the team) and how a pulled one is
//! stored here (an `import` summary in the origin's team session).

use rusqlite::{Connection, params};

use super::rows::{Incoming, LocalRef, Outgoing, SummaryBody, json_list, summary_gid};
use crate::pipeline::redact::Redactor;
use crate::store::StoreError;
use crate::store::observation_record::json_array;
use crate::store::summary_record::{SUMMARY_COLS, Summary};

const WAITING: &str = "FROM session_summaries s
     WHERE s.project IN ({marks}) AND s.quarantined = 0
       AND NOT EXISTS (SELECT 1 FROM team_rows t WHERE t.summary_id = s.id)";

fn waiting(projects: &[String], select: &str) -> String {
    let marks = vec!["?"; projects.len()].join(", ");
    format!("SELECT {select} {}", WAITING.replace("{marks}", &marks))
}

/// Summaries not pushed yet, oldest first, at most `limit`.
pub fn outgoing(
    conn: &Connection,
    projects: &[String],
    redactor: &Redactor,
    install: &str,
    limit: usize,
) -> Result<Vec<Outgoing>, StoreError> {
    if projects.is_empty() || limit == 0 {
        return Ok(Vec::new());
    }
    let sql = format!("{} ORDER BY s.id LIMIT {limit}", waiting(projects, SUMMARY_COLS));
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(rusqlite::params_from_iter(projects.iter()), |r| {
        let s = Summary::from_row(r)?;
        let body = SummaryBody {
            request: s.request,
            investigated: s.investigated,
            learned: s.learned,
            completed: s.completed,
            next_steps: s.next_steps,
            notes: s.notes,
            files_read: json_list(&s.files_read),
            files_edited: json_list(&s.files_edited),
            created_at: s.created_at,
        };
        Ok((s.id, s.project, body, s.created_at_epoch, s.provenance))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (id, project, body, at, provenance) = row?;
        let body = serde_json::to_value(body.redacted(redactor)).unwrap_or_default();
        out.push(Outgoing {
            gid: summary_gid(install, id),
            local: LocalRef::Summary(id),
            kind: "summary",
            project,
            provenance,
            content_hash: crate::pipeline::hash::sha256_hex(body.to_string().as_bytes()),
            body,
            created_at_epoch: at,
        });
    }
    Ok(out)
}

/// Summaries of the shared projects waiting for their push.
pub fn queue(conn: &Connection, projects: &[String]) -> Result<i64, StoreError> {
    if projects.is_empty() {
        return Ok(0);
    }
    let sql = waiting(projects, "count(*)");
    Ok(conn.query_row(&sql, rusqlite::params_from_iter(projects.iter()), |r| r.get(0))?)
}

/// Stores another member's summary; true when it was added.
pub fn apply(conn: &Connection, r: &Incoming, now: i64) -> Result<bool, StoreError> {
    let body: SummaryBody = serde_json::from_value(r.body.clone()).unwrap_or_default();
    let msid = super::ensure_session(conn, &r.origin, &r.project, now)?;
    let added = conn.execute(
        "INSERT INTO session_summaries(memory_session_id, project, platform_source, request, investigated, learned,
             completed, next_steps, notes, files_read, files_edited, origin, created_at, created_at_epoch)
         VALUES (?1, ?2, 'claude', ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 'import', ?11, ?12)",
        params![
            msid,
            r.project,
            body.request,
            body.investigated,
            body.learned,
            body.completed,
            body.next_steps,
            body.notes,
            json_array(&body.files_read),
            json_array(&body.files_edited),
            // The date from the (clamped) epoch, never the body's own text.
            crate::clock::iso(r.created_at_epoch),
            r.created_at_epoch
        ],
    )?;
    let id = conn.last_insert_rowid();
    crate::store::quarantine::screen_summary(conn, id)?;
    conn.execute(
        "INSERT OR IGNORE INTO team_rows(gid, summary_id, origin, mine, seq, at_epoch) VALUES (?1, ?2, ?3, 0, ?4, ?5)",
        params![r.gid, id, r.origin, r.seq, now],
    )?;
    Ok(added == 1)
}
