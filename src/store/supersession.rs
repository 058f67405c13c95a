//! Supersession and contradictions in SQLite (issue 38): linking an older observation to the one
//! that replaces it (explicitly, or by the rules of `pipeline/supersession.rs` run when a record
//! is written), the chain of successors, and the open contradictions a person resolves.

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use super::StoreError;
use crate::pipeline::supersession::{Relation, Subject, relate};

/// How many older live records of the project a new one is compared with.
const COMPARED: i64 = 200;

/// What linking two records did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Linked {
    Linked,
    /// One of the two does not exist.
    Missing,
    /// The older one is already (directly or through its chain) the newer one's successor.
    Cycle,
    /// The newer one's source is less trusted than the older one's (issue 51: an agent's note or
    /// an import never hides the user's own words): recorded as a contradiction instead.
    Outranked,
}

/// A record's provenance (the least trusted when unknown).
fn provenance_of(conn: &Connection, id: i64) -> Result<crate::store::quarantine::Provenance, StoreError> {
    use crate::store::quarantine::Provenance;
    let p: Option<String> = conn
        .query_row("SELECT provenance FROM observations WHERE id = ?1", [id], |r| r.get(0))
        .optional()?;
    Ok(p.as_deref().and_then(Provenance::parse).unwrap_or(Provenance::ToolOutput))
}

/// Links `older.superseded_by = newer` with `reason` — unless `newer` comes from a less trusted
/// source than `older`: then the two are recorded as contradicting ([`Linked::Outranked`]).
pub fn supersede(conn: &Connection, older: i64, newer: i64, reason: &str) -> Result<Linked, StoreError> {
    if older != newer && provenance_of(conn, newer)?.trust() < provenance_of(conn, older)?.trust() {
        let exists: i64 = conn.query_row(
            "SELECT count(*) FROM observations WHERE id IN (?1, ?2)",
            params![older, newer],
            |r| r.get(0),
        )?;
        if exists < 2 {
            return Ok(Linked::Missing);
        }
        conn.execute(
            "INSERT OR IGNORE INTO contradictions(older_id, newer_id, reason, created_at_epoch) VALUES (?1, ?2, ?3, ?4)",
            params![
                older,
                newer,
                format!("{reason}; the newer one's source is less trusted"),
                crate::clock::now_ms()
            ],
        )?;
        return Ok(Linked::Outranked);
    }
    supersede_as_is(conn, older, newer, reason)
}

/// [`supersede`] without the trust rule (consolidation's merge of duplicates, which gives the
/// survivor the lower trust of the two instead).
pub fn supersede_as_is(conn: &Connection, older: i64, newer: i64, reason: &str) -> Result<Linked, StoreError> {
    let exists = |id: i64| -> Result<bool, StoreError> {
        Ok(conn.query_row("SELECT count(*) FROM observations WHERE id = ?1", [id], |r| r.get::<_, i64>(0))? > 0)
    };
    if older == newer || !exists(older)? || !exists(newer)? {
        return Ok(Linked::Missing);
    }
    if chain(conn, newer)?.contains(&older) {
        return Ok(Linked::Cycle);
    }
    conn.execute(
        "UPDATE observations SET superseded_by = ?2, supersede_reason = ?3 WHERE id = ?1",
        params![older, newer, reason],
    )?;
    Ok(Linked::Linked)
}

/// The successors of `id`, nearest first (bounded: a chain never loops, but a damaged one stops).
pub fn chain(conn: &Connection, id: i64) -> Result<Vec<i64>, StoreError> {
    let mut out = Vec::new();
    let mut cur = id;
    while out.len() < 100 {
        let next: Option<i64> = conn
            .query_row("SELECT superseded_by FROM observations WHERE id = ?1", [cur], |r| r.get(0))
            .optional()?
            .flatten();
        match next {
            Some(n) if !out.contains(&n) && n != id => {
                out.push(n);
                cur = n;
            }
            _ => break,
        }
    }
    Ok(out)
}

fn subject(r: &rusqlite::Row) -> rusqlite::Result<Subject> {
    let (title, narrative, facts): (Option<String>, Option<String>, String) = (r.get("title")?, r.get("narrative")?, r.get("facts")?);
    let files: String = r.get("files")?;
    let files: Vec<String> = serde_json::from_str(&files).unwrap_or_default();
    Ok(Subject {
        id: r.get("id")?,
        project: r.get("project")?,
        obs_type: r.get("type")?,
        origin: r.get("origin")?,
        text: format!("{} {} {}", title.unwrap_or_default(), narrative.unwrap_or_default(), facts),
        files,
    })
}

const SUBJECT_COLS: &str = "o.id, o.project, o.type, o.origin, o.title, o.narrative, o.facts,
  (SELECT json_group_array(path) FROM observation_files f WHERE f.observation_id = o.id) AS files";

/// Runs the rules between the new record `id` and the older live records of its project: links
/// what it supersedes and flags what it contradicts. Answers (superseded, contradictions).
pub fn apply_rules(conn: &Connection, id: i64, now: i64) -> Result<(usize, usize), StoreError> {
    let sql = format!("SELECT {SUBJECT_COLS} FROM observations o WHERE o.id = ?1 AND o.quarantined = 0");
    let Some(newer) = conn.query_row(&sql, [id], subject).optional()? else {
        return Ok((0, 0));
    };
    let sql = format!(
        "SELECT {SUBJECT_COLS} FROM observations o WHERE o.project = ?1 AND o.id < ?2 AND o.superseded_by IS NULL
           AND o.quarantined = 0 AND (o.origin = 'manual' OR o.type IN ('decision', 'bugfix'))
         ORDER BY o.id DESC LIMIT {COMPARED}"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let older: Vec<Subject> = stmt.query_map(params![newer.project, id], subject)?.collect::<Result<_, _>>()?;
    let (mut superseded, mut flagged) = (0, 0);
    for o in &older {
        match relate(&newer, o) {
            Relation::Supersedes(reason) => {
                if supersede(conn, o.id, id, reason)? == Linked::Linked {
                    superseded += 1;
                }
            }
            Relation::Contradicts(reason) => {
                flagged += conn.execute(
                    "INSERT OR IGNORE INTO contradictions(older_id, newer_id, reason, created_at_epoch) VALUES (?1, ?2, ?3, ?4)",
                    params![o.id, id, reason, now],
                )?;
            }
            Relation::Unrelated => {}
        }
    }
    Ok((superseded, flagged))
}

/// One contradiction with the two titles.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Contradiction {
    pub id: i64,
    pub older_id: i64,
    pub older_title: Option<String>,
    pub newer_id: i64,
    pub newer_title: Option<String>,
    pub reason: String,
    pub created_at_epoch: i64,
    pub resolution: Option<String>,
}

/// The newest contradictions (open ones only unless `all`).
pub fn contradictions(conn: &Connection, all: bool, limit: i64) -> Result<Vec<Contradiction>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT c.id, c.older_id, a.title AS older_title, c.newer_id, b.title AS newer_title, c.reason, c.created_at_epoch, c.resolution
         FROM contradictions c JOIN observations a ON a.id = c.older_id JOIN observations b ON b.id = c.newer_id
         WHERE ?1 OR c.resolved_at_epoch IS NULL ORDER BY c.id DESC LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![all, limit], |r| {
        Ok(Contradiction {
            id: r.get("id")?,
            older_id: r.get("older_id")?,
            older_title: r.get("older_title")?,
            newer_id: r.get("newer_id")?,
            newer_title: r.get("newer_title")?,
            reason: r.get("reason")?,
            created_at_epoch: r.get("created_at_epoch")?,
            resolution: r.get("resolution")?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// How a person resolves a contradiction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution {
    /// Keep this one: the other is superseded by it.
    Keep(i64),
    /// Both stand.
    Both,
    /// Forget this one (the caller forgets it through the forget use-case).
    Forget(i64),
}

/// Records the resolution (and links the supersession of `Keep`). None: no such open
/// contradiction, or the id named is not one of its two.
pub fn resolve(conn: &Connection, id: i64, how: Resolution, now: i64) -> Result<Option<(i64, i64)>, StoreError> {
    let pair: Option<(i64, i64)> = conn
        .query_row(
            "SELECT older_id, newer_id FROM contradictions WHERE id = ?1 AND resolved_at_epoch IS NULL",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    let Some((a, b)) = pair else { return Ok(None) };
    let label = match how {
        Resolution::Keep(k) | Resolution::Forget(k) if k != a && k != b => return Ok(None),
        Resolution::Keep(k) => {
            let other = if k == a { b } else { a };
            supersede(conn, other, k, "resolved")?;
            format!("keep {k}")
        }
        Resolution::Both => "both".to_string(),
        Resolution::Forget(k) => format!("forget {k}"),
    };
    conn.execute(
        "UPDATE contradictions SET resolved_at_epoch = ?2, resolution = ?3 WHERE id = ?1",
        params![id, now, label],
    )?;
    Ok(Some((a, b)))
}

#[cfg(test)]
mod tests;
