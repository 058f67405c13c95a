//! The graph's tables (schema v10, issue 41): a stored batch's tool calls become entities and
//! relations ([`crate::graph::extract`]) inside the batch's own transaction, each relation with
//! the batch's observations as its evidence; `fixes` reads the session's earlier calls. The
//! backfill does the same for a store written before the graph existed.

use rusqlite::{Connection, OptionalExtension, params};

use super::StoreError;
use crate::graph::extract::{Call, EntityKind, Facts, Relation, extract, fixes};

/// Earlier calls of the session `fixes` looks back over.
const HISTORY_CALLS: i64 = 300;

fn call_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<Call> {
    let input: String = r.get(2)?;
    Ok(Call {
        id: r.get(0)?,
        tool_name: r.get(1)?,
        input: serde_json::from_str(&input).unwrap_or(serde_json::Value::Null),
        response: r.get(3)?,
        is_error: r.get::<_, i64>(4)? != 0,
    })
}

const CALL_COLS: &str = "id, tool_name, tool_input, tool_response, is_error";

fn calls(conn: &Connection, rows: &[i64]) -> Result<Vec<Call>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!("SELECT {CALL_COLS} FROM tool_uses WHERE id = ?1"))?;
    let mut out = Vec::new();
    for id in rows {
        if let Some(c) = stmt.query_row([id], call_of).optional()? {
            out.push(c);
        }
    }
    out.sort_by_key(|c| c.id);
    Ok(out)
}

fn history(conn: &Connection, session_db_id: i64, before: i64) -> Result<Vec<Call>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {CALL_COLS} FROM tool_uses WHERE session_db_id = ?1 AND id < ?2 ORDER BY id DESC LIMIT ?3"
    ))?;
    let mut out: Vec<Call> = stmt
        .query_map(params![session_db_id, before, HISTORY_CALLS], call_of)?
        .collect::<Result<_, _>>()?;
    out.reverse();
    Ok(out)
}

fn concepts(conn: &Connection, observation_ids: &[i64]) -> Result<Vec<String>, StoreError> {
    let mut stmt = conn.prepare_cached("SELECT concepts FROM observations WHERE id = ?1")?;
    let mut out: Vec<String> = Vec::new();
    for id in observation_ids {
        let raw: Option<String> = stmt.query_row([id], |r| r.get(0)).optional()?.flatten();
        for c in serde_json::from_str::<Vec<String>>(raw.as_deref().unwrap_or("[]")).unwrap_or_default() {
            if !out.contains(&c) {
                out.push(c);
            }
        }
    }
    Ok(out)
}

fn entity_id(conn: &Connection, project: &str, kind: EntityKind, name: &str, now: i64) -> Result<i64, StoreError> {
    Ok(conn.query_row(
        "INSERT INTO entities(project, kind, name, first_seen_epoch, last_seen_epoch) VALUES (?1, ?2, ?3, ?4, ?4)
         ON CONFLICT(project, kind, name) DO UPDATE SET last_seen_epoch = max(last_seen_epoch, excluded.last_seen_epoch)
         RETURNING id",
        params![project, kind.as_str(), name, now],
        |r| r.get(0),
    )?)
}

fn relation(conn: &Connection, project: &str, r: &Relation, evidence: &[i64], now: i64) -> Result<(), StoreError> {
    let src = entity_id(conn, project, r.src.0, &r.src.1, now)?;
    let dst = entity_id(conn, project, r.dst.0, &r.dst.1, now)?;
    let id: i64 = conn.query_row(
        "INSERT INTO relations(src, dst, kind) VALUES (?1, ?2, ?3)
         ON CONFLICT(src, dst, kind) DO UPDATE SET kind = excluded.kind RETURNING id",
        params![src, dst, r.kind.as_str()],
        |x| x.get(0),
    )?;
    let mut stmt = conn.prepare_cached("INSERT OR IGNORE INTO relation_evidence(relation_id, observation_id) VALUES (?1, ?2)")?;
    for obs in evidence {
        stmt.execute(params![id, obs])?;
    }
    Ok(())
}

/// The graph of one stored batch: its calls (`source_rows`), the session they belong to, the
/// observations made from them (the evidence; nothing is recorded without one).
pub fn record_batch(
    conn: &Connection,
    project: &str,
    project_root: Option<&str>,
    session_db_id: i64,
    source_rows: &[i64],
    observation_ids: &[i64],
    now: i64,
) -> Result<usize, StoreError> {
    if observation_ids.is_empty() || source_rows.is_empty() {
        return Ok(0);
    }
    let calls = calls(conn, source_rows)?;
    let root = project_root.filter(|r| !r.is_empty());
    let mut facts: Facts = extract(&calls, root, &concepts(conn, observation_ids)?);
    for pass in calls.iter().filter(|c| c.tool_name == "Bash" && !c.is_error) {
        for r in fixes(&history(conn, session_db_id, pass.id)?, pass, root) {
            if !facts.relations.contains(&r) {
                facts.relations.push(r);
            }
        }
    }
    for e in &facts.entities {
        let id = entity_id(conn, project, e.kind, &e.name, now)?;
        for a in &e.aliases {
            conn.execute(
                "INSERT OR IGNORE INTO entity_aliases(alias, entity_id) VALUES (?1, ?2)",
                params![a, id],
            )?;
        }
    }
    for r in &facts.relations {
        relation(conn, project, r, observation_ids, now)?;
    }
    Ok(facts.relations.len())
}

/// Every entity of `project`, with its aliases and relations (forgetting the project).
pub fn forget_project(conn: &Connection, project: &str) -> Result<usize, StoreError> {
    Ok(conn.execute("DELETE FROM entities WHERE project = ?1", [project])?)
}

/// The graph of the observations stored before the graph existed (ids up to
/// `meta.graph_backfill_until`, set by the migration), oldest first, at most `limit` per call
/// (call until it returns 0; the cursor makes an interrupted backfill resume).
pub fn backfill_chunk(conn: &Connection, limit: i64, now: i64) -> Result<usize, StoreError> {
    let todo: Vec<(i64, String, i64, Option<String>)> = conn
        .prepare(
            "SELECT o.id, o.project, s.id, s.project_root FROM observations o
             JOIN sdk_sessions s ON s.memory_session_id = o.memory_session_id
             WHERE o.id > coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'graph_backfill_cursor'), 0)
               AND o.id <= coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'graph_backfill_until'), 0)
               AND EXISTS (SELECT 1 FROM observation_sources x WHERE x.observation_id = o.id)
             ORDER BY o.id LIMIT ?1",
        )?
        .query_map([limit], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
        .collect::<Result<_, _>>()?;
    for (obs, project, session, root) in &todo {
        let rows: Vec<i64> = conn
            .prepare_cached("SELECT tool_use_row_id FROM observation_sources WHERE observation_id = ?1")?
            .query_map([obs], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        record_batch(conn, project, root.as_deref(), *session, &rows, &[*obs], now)?;
        conn.execute(
            "INSERT INTO meta(key, value) VALUES ('graph_backfill_cursor', ?1) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [obs.to_string()],
        )?;
    }
    Ok(todo.len())
}

/// The start-up backfill: chunks through the writer until nothing is left (a few hundred
/// observations at a time, so ingest keeps its turn).
pub async fn backfill(store: super::Store) {
    let mut total = 0;
    loop {
        match store.write(|c| backfill_chunk(c, 200, crate::clock::now_ms())).await {
            Ok(0) => break,
            Ok(n) => total += n,
            Err(e) => {
                tracing::warn!(error = %e, "graph backfill stopped; it resumes at the next start");
                return;
            }
        }
    }
    if total > 0 {
        tracing::info!(observations = total, "graph backfill finished");
    }
}

#[cfg(test)]
#[path = "graph_tests.rs"]
mod tests;
