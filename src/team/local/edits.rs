//! Edits of shared observations (issue 40). An edit here of an observation this machine pushed
//! (the viewer's edit, a redaction re-scan, consolidation) is counted in `team_rows.edited` by a
//! trigger; the sync sends the new text and clears the count it sent (an edit made meanwhile
//! stays counted). A pulled row whose server sequence moved past the one stored here was edited
//! by its origin: the local copy takes the new text and is re-embedded.

use rusqlite::{Connection, OptionalExtension, params};

use super::rows::{Body, Incoming, body_of};
use crate::pipeline::redact::Redactor;
use crate::store::StoreError;
use crate::store::observation_record::{OBS_COLS, ObservationRecord, json_array};

/// A row of `team_rows`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Known {
    pub observation: Option<i64>,
    pub summary: Option<i64>,
    pub mine: bool,
    pub seq: Option<i64>,
}

pub fn known(conn: &Connection, gid: &str) -> Result<Option<Known>, StoreError> {
    Ok(conn
        .query_row(
            "SELECT observation_id, summary_id, mine, seq FROM team_rows WHERE gid = ?1",
            [gid],
            |x| {
                Ok(Known {
                    observation: x.get("observation_id")?,
                    summary: x.get("summary_id")?,
                    mine: x.get("mine")?,
                    seq: x.get("seq")?,
                })
            },
        )
        .optional()?)
}

/// An edit waiting to be sent: the global id, the count it clears, the new body and its hash.
#[derive(Debug, Clone, PartialEq)]
pub struct Edit {
    pub gid: String,
    pub count: i64,
    pub body: serde_json::Value,
    pub content_hash: String,
}

/// Edits of pushed observations not sent yet (a read; quarantined ones are not sent).
pub fn edits_due(conn: &Connection, redactor: &Redactor, limit: usize) -> Result<Vec<Edit>, StoreError> {
    let sql = format!(
        "SELECT t.gid, t.edited, {OBS_COLS} FROM team_rows t JOIN observations o ON o.id = t.observation_id
         WHERE t.mine = 1 AND t.edited > 0 AND o.quarantined = 0 LIMIT {limit}"
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map([], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?, ObservationRecord::from_row(r)?))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (gid, count, rec) = row?;
        let body = serde_json::to_value(body_of(&rec, redactor)).unwrap_or_default();
        let content_hash = crate::pipeline::hash::sha256_hex(body.to_string().as_bytes());
        out.push(Edit {
            gid,
            count,
            body,
            content_hash,
        });
    }
    Ok(out)
}

/// The server has the edit: clears the count sent.
pub fn edit_sent(conn: &Connection, gid: &str, count: i64) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE team_rows SET edited = max(edited - ?2, 0) WHERE gid = ?1",
        params![gid, count],
    )?;
    Ok(())
}

/// A pulled row already here: when its sequence moved, its origin edited it. True when the local
/// copy changed.
pub fn apply_edit(conn: &Connection, k: &Known, r: &Incoming) -> Result<bool, StoreError> {
    let (Some(id), false) = (k.observation, k.mine) else {
        return Ok(false);
    };
    if k.seq.is_some_and(|s| s >= r.seq) {
        return Ok(false);
    }
    let body: Body = serde_json::from_value(r.body.clone()).unwrap_or_default();
    conn.execute(
        "UPDATE observations SET title = ?2, subtitle = ?3, narrative = ?4, facts = ?5, concepts = ?6,
           files_read = ?7, files_modified = ?8 WHERE id = ?1",
        params![
            id,
            body.title,
            body.subtitle,
            body.narrative,
            json_array(&body.facts),
            json_array(&body.concepts),
            json_array(&body.files_read),
            json_array(&body.files_modified)
        ],
    )?;
    conn.execute("UPDATE team_rows SET seq = ?2 WHERE gid = ?1", params![r.gid, r.seq])?;
    crate::store::quarantine::screen_observation(conn, id)?;
    crate::store::rescan::requeue_vector(conn, "observation", id)?;
    Ok(true)
}
