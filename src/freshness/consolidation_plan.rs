//! The consolidation pass in SQLite (issue 38): a plan read from the live observations —
//! near-duplicates to merge into the newest of them (its count and reinforcement days absorb the
//! others'), relative dates to make absolute in text an LLM or a person wrote, chains of
//! supersession to fold onto their last successor — then applied in one write with a row of
//! `consolidation_log` per change (what, why, before, after). A merged duplicate is not deleted:
//! it is superseded by its survivor (`supersede_reason = 'duplicate'`), so nothing but the
//! duplicate leaves what is injected, and it stays readable. Applying a plan makes the next plan
//! empty: the pass is idempotent.

use std::collections::{BTreeMap, BTreeSet};

use rusqlite::{Connection, params};
use serde::Serialize;
use serde_json::json;

use crate::pipeline::consolidation::{NEAR_DUPLICATE, absolute_dates, duplicate_key, similarity};
use crate::store::StoreError;

/// Reinforcement days kept on a survivor.
const DAYS_KEPT: usize = 10;

/// One change of a plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Change {
    /// `duplicate` is merged into `survivor`.
    Merge { duplicate: i64, survivor: i64, reason: String },
    /// A field's relative dates made absolute.
    AbsoluteDate {
        id: i64,
        field: &'static str,
        before: String,
        after: String,
    },
    /// `id`'s successor is itself superseded: it points at the chain's end.
    FoldChain { id: i64, from: i64, to: i64 },
}

struct Live {
    id: i64,
    project: String,
    obs_type: String,
    title_key: String,
    key: String,
}

/// The changes a pass would make now.
pub fn plan(conn: &Connection) -> Result<Vec<Change>, StoreError> {
    let mut out = merges(conn)?;
    out.extend(dates(conn)?);
    out.extend(folds(conn)?);
    Ok(out)
}

fn merges(conn: &Connection) -> Result<Vec<Change>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT id, project, type, title, narrative FROM observations
         WHERE superseded_by IS NULL AND quarantined = 0 ORDER BY project, type, created_at_epoch DESC, id DESC",
    )?;
    let rows = stmt.query_map([], |r| {
        let (title, narrative): (Option<String>, Option<String>) = (r.get("title")?, r.get("narrative")?);
        Ok(Live {
            id: r.get("id")?,
            project: r.get("project")?,
            obs_type: r.get("type")?,
            title_key: duplicate_key(title.as_deref(), None),
            key: duplicate_key(title.as_deref(), narrative.as_deref()),
        })
    })?;
    let mut groups: BTreeMap<(String, String, String), Vec<Live>> = BTreeMap::new();
    for l in rows {
        let l = l?;
        if l.key.is_empty() {
            continue;
        }
        groups
            .entry((l.project.clone(), l.obs_type.clone(), l.title_key.clone()))
            .or_default()
            .push(l);
    }
    let mut out = Vec::new();
    for rows in groups.values().filter(|g| g.len() > 1) {
        // Newest first: each row merges into the newest survivor it nearly duplicates.
        let mut survivors: Vec<&Live> = Vec::new();
        for l in rows {
            let into = survivors
                .iter()
                .find(|s| s.key == l.key || similarity(&s.key, &l.key) >= NEAR_DUPLICATE);
            match into {
                Some(s) => out.push(Change::Merge {
                    duplicate: l.id,
                    survivor: s.id,
                    reason: if s.key == l.key {
                        "same text".into()
                    } else {
                        format!("near-duplicate (≥ {NEAR_DUPLICATE} of words shared)")
                    },
                }),
                None => survivors.push(l),
            }
        }
    }
    Ok(out)
}

fn dates(conn: &Connection) -> Result<Vec<Change>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT id, title, narrative, facts, created_at_epoch FROM observations
         WHERE origin IN ('manual', 'observer') AND quarantined = 0 ORDER BY id",
    )?;
    let mut rows = stmt.query([])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let (id, at): (i64, i64) = (r.get("id")?, r.get("created_at_epoch")?);
        for field in ["title", "narrative", "facts"] {
            let Some(text) = r.get::<_, Option<String>>(field)? else { continue };
            if let Some(after) = absolute_dates(&text, at) {
                out.push(Change::AbsoluteDate {
                    id,
                    field,
                    before: text,
                    after,
                });
            }
        }
    }
    Ok(out)
}

fn folds(conn: &Connection) -> Result<Vec<Change>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT o.id, o.superseded_by FROM observations o JOIN observations s ON s.id = o.superseded_by
         WHERE s.superseded_by IS NOT NULL ORDER BY o.id",
    )?;
    let pairs: Vec<(i64, i64)> = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<Result<_, _>>()?;
    let mut out = Vec::new();
    for (id, from) in pairs {
        let chain = crate::store::supersession::chain(conn, from)?;
        if let Some(&to) = chain.last().filter(|t| **t != id) {
            out.push(Change::FoldChain { id, from, to });
        }
    }
    Ok(out)
}

fn days_of(conn: &Connection, id: i64) -> Result<(i64, BTreeSet<String>), StoreError> {
    let (count, dates, at): (i64, String, i64) = conn.query_row(
        "SELECT occurrence_count, reinforcement_dates, created_at_epoch FROM observations WHERE id = ?1",
        [id],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )?;
    let mut days: BTreeSet<String> = serde_json::from_str::<Vec<String>>(&dates)
        .unwrap_or_default()
        .into_iter()
        .collect();
    days.insert(crate::clock::day(at));
    Ok((count, days))
}

fn merge(conn: &Connection, duplicate: i64, survivor: i64) -> Result<(serde_json::Value, serde_json::Value), StoreError> {
    let (dup_count, dup_days) = days_of(conn, duplicate)?;
    let (count, mut days) = days_of(conn, survivor)?;
    let before = json!({"survivor_count": count, "duplicate_count": dup_count});
    days.extend(dup_days);
    let kept: Vec<String> = days
        .into_iter()
        .rev()
        .take(DAYS_KEPT)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    conn.execute(
        "UPDATE observations SET occurrence_count = occurrence_count + ?2, reinforcement_dates = ?3 WHERE id = ?1",
        params![survivor, dup_count, serde_json::to_string(&kept).unwrap_or_else(|_| "[]".into())],
    )?;
    // The survivor speaks for both: its label shows the less trusted source (issue 51).
    let source = |id: i64| -> Result<Option<String>, StoreError> {
        Ok(conn.query_row("SELECT provenance FROM observations WHERE id = ?1", [id], |r| r.get(0))?)
    };
    use crate::store::quarantine::Provenance;
    if let (Some(a), Some(b)) = (
        source(duplicate)?.as_deref().and_then(Provenance::parse),
        source(survivor)?.as_deref().and_then(Provenance::parse),
    ) {
        conn.execute(
            "UPDATE observations SET provenance = ?2 WHERE id = ?1",
            params![survivor, a.min(b).as_str()],
        )?;
    }
    crate::store::supersession::supersede_as_is(conn, duplicate, survivor, "duplicate")?;
    Ok((before, json!({"survivor_count": count + dup_count, "reinforcement_dates": kept})))
}

/// Applies `changes` and logs each under `run_id`; answers how many were applied.
pub fn apply(conn: &Connection, changes: &[Change], run_id: &str, now: i64) -> Result<usize, StoreError> {
    let log = |action: &str, id: i64, other: Option<i64>, reason: &str, before: String, after: String| {
        conn.execute(
            "INSERT INTO consolidation_log(run_id, at_epoch, action, observation_id, other_id, reason, before, after)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![run_id, now, action, id, other, reason, before, after],
        )
    };
    for c in changes {
        match c {
            Change::Merge {
                duplicate,
                survivor,
                reason,
            } => {
                let (before, after) = merge(conn, *duplicate, *survivor)?;
                log("merge", *duplicate, Some(*survivor), reason, before.to_string(), after.to_string())?;
            }
            Change::AbsoluteDate { id, field, before, after } => {
                let sql = format!("UPDATE observations SET {field} = ?2 WHERE id = ?1");
                conn.execute(&sql, params![id, after])?;
                crate::store::rescan::requeue_vector(conn, "observation", *id)?;
                log(
                    "absolute_date",
                    *id,
                    None,
                    &format!("relative date in {field}"),
                    before.clone(),
                    after.clone(),
                )?;
            }
            Change::FoldChain { id, from, to } => {
                conn.execute("UPDATE observations SET superseded_by = ?2 WHERE id = ?1", params![id, to])?;
                let (b, a) = (json!({"superseded_by": from}), json!({"superseded_by": to}));
                log("fold_chain", *id, Some(*to), "successor superseded", b.to_string(), a.to_string())?;
            }
        }
    }
    Ok(changes.len())
}

/// One row of the audit log.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LogEntry {
    pub id: i64,
    pub run_id: String,
    pub at_epoch: i64,
    pub action: String,
    pub observation_id: Option<i64>,
    pub other_id: Option<i64>,
    pub reason: String,
    pub before: Option<String>,
    pub after: Option<String>,
}

/// The newest audit log rows.
pub fn log(conn: &Connection, limit: i64) -> Result<Vec<LogEntry>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, run_id, at_epoch, action, observation_id, other_id, reason, before, after
         FROM consolidation_log ORDER BY at_epoch DESC, id DESC LIMIT ?1",
    )?;
    let rows = stmt.query_map([limit], |r| {
        Ok(LogEntry {
            id: r.get("id")?,
            run_id: r.get("run_id")?,
            at_epoch: r.get("at_epoch")?,
            action: r.get("action")?,
            observation_id: r.get("observation_id")?,
            other_id: r.get("other_id")?,
            reason: r.get("reason")?,
            before: r.get("before")?,
            after: r.get("after")?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

#[cfg(test)]
mod tests;
