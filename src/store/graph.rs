//! The graph's tables (schema v10, issue 41): a stored batch's tool calls become entities and
//! relations ([`crate::graph::extract`]) inside the batch's own transaction, each relation with
//! the batch's observations as its evidence; `fixes` reads the session's earlier calls. The
//! backfill does the same for a store written before the graph existed.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

use rusqlite::{Connection, OptionalExtension, params};

use super::StoreError;
use crate::graph::extract::{Call, EntityKind, Facts, Relation, decided, extract, fixes, proposed};

/// Whether stored batches get their graph (`MEMD_GRAPH`, read once at start-up; the graph bench
/// turns it off for its baseline).
static ENABLED: AtomicBool = AtomicBool::new(true);

pub fn set_enabled(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// How far back (in stored calls of every session) `fixes` looks for the failure.
const HISTORY_CALLS: i64 = 5_000;

fn call_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<Call> {
    let input: String = r.get("tool_input")?;
    Ok(Call {
        id: r.get("id")?,
        tool_name: r.get("tool_name")?,
        input: serde_json::from_str(&input).unwrap_or(serde_json::Value::Null),
        response: r.get("tool_response")?,
        is_error: r.get::<_, i64>("is_error")? != 0,
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

/// What `fixes` needs of the session before the passing call `before` (within the last
/// [`HISTORY_CALLS`] stored calls): the failed shell calls, and — when one of them ran `cmd` — the edits
/// since the latest such failure. Two narrow reads instead of the whole history.
fn history(conn: &Connection, session_db_id: i64, before: i64, cmd: &str) -> Result<Vec<Call>, StoreError> {
    let mut failed = conn.prepare_cached(&format!(
        "SELECT {CALL_COLS} FROM tool_uses WHERE session_db_id = ?1 AND id < ?2 AND id >= ?2 - ?3
           AND is_error = 1 AND tool_name = 'Bash' ORDER BY id DESC"
    ))?;
    let failures: Vec<Call> = failed
        .query_map(params![session_db_id, before, HISTORY_CALLS], call_of)?
        .collect::<Result<_, _>>()?;
    let same = |c: &&Call| c.input["command"].as_str().and_then(crate::graph::names::command_name).as_deref() == Some(cmd);
    let Some(failure) = failures.iter().find(same).cloned() else {
        return Ok(Vec::new());
    };
    let mut edits = conn.prepare_cached(&format!(
        "SELECT {CALL_COLS} FROM tool_uses WHERE session_db_id = ?1 AND id > ?2 AND id < ?3
           AND tool_name IN ('Edit', 'Write', 'MultiEdit', 'NotebookEdit') ORDER BY id"
    ))?;
    let mut out = vec![failure.clone()];
    out.extend(
        edits
            .query_map(params![session_db_id, failure.id, before], call_of)?
            .collect::<Result<Vec<_>, _>>()?,
    );
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
    // Reads first: most entities of a batch exist already, and a read dirties no page.
    let mut find = conn.prepare_cached("SELECT id FROM entities WHERE project = ?1 AND kind = ?2 AND name = ?3")?;
    if let Some(id) = find.query_row(params![project, kind.as_str(), name], |r| r.get(0)).optional()? {
        return Ok(id);
    }
    let mut insert =
        conn.prepare_cached("INSERT INTO entities(project, kind, name, first_seen_epoch) VALUES (?1, ?2, ?3, ?4) RETURNING id")?;
    Ok(insert.query_row(params![project, kind.as_str(), name, now], |r| r.get(0))?)
}

/// Entity ids of one batch, by kind and name: each entity is upserted once per batch.
type Ids = HashMap<(EntityKind, String), i64>;

fn known_id(conn: &Connection, project: &str, key: &(EntityKind, String), ids: &mut Ids, now: i64) -> Result<i64, StoreError> {
    if let Some(id) = ids.get(key) {
        return Ok(*id);
    }
    let id = entity_id(conn, project, key.0, &key.1, now)?;
    ids.insert(key.clone(), id);
    Ok(id)
}

fn relation(conn: &Connection, project: &str, r: &Relation, evidence: &[i64], ids: &mut Ids, now: i64) -> Result<(), StoreError> {
    let src = known_id(conn, project, &r.src, ids, now)?;
    let dst = known_id(conn, project, &r.dst, ids, now)?;
    let mut find = conn.prepare_cached("SELECT id FROM relations WHERE src = ?1 AND dst = ?2 AND kind = ?3")?;
    let id: i64 = match find.query_row(params![src, dst, r.kind.as_str()], |x| x.get(0)).optional()? {
        Some(id) => id,
        None => conn
            .prepare_cached("INSERT INTO relations(src, dst, kind) VALUES (?1, ?2, ?3) RETURNING id")?
            .query_row(params![src, dst, r.kind.as_str()], |x| x.get(0))?,
    };
    let mut stmt = conn.prepare_cached("INSERT OR IGNORE INTO relation_evidence(relation_id, observation_id) VALUES (?1, ?2)")?;
    for obs in evidence {
        stmt.execute(params![id, obs])?;
    }
    Ok(())
}

/// The graph of one stored batch: its calls (`source_rows`), the session they belong to, the
/// observations made from them (the evidence; nothing is recorded without one).
/// One stored batch as the graph reads it.
pub struct GraphBatch<'a> {
    pub project: &'a str,
    pub project_root: Option<&'a str>,
    pub session_db_id: i64,
    /// The batch's calls.
    pub source_rows: &'a [i64],
    /// The observations made from them: the evidence.
    pub observation_ids: &'a [i64],
    /// Relations the observer proposed (kept when the calls support them).
    pub proposals: &'a [String],
}

pub fn record_batch(conn: &Connection, b: &GraphBatch<'_>, now: i64) -> Result<usize, StoreError> {
    let GraphBatch {
        project,
        project_root,
        session_db_id,
        source_rows,
        observation_ids,
        proposals,
    } = *b;
    if observation_ids.is_empty() || source_rows.is_empty() {
        return Ok(0);
    }
    let calls = calls(conn, source_rows)?;
    let root = project_root.filter(|r| !r.is_empty());
    let mut facts: Facts = extract(&calls, root, &concepts(conn, observation_ids)?);
    for pass in calls.iter().filter(|c| c.tool_name == "Bash" && !c.is_error) {
        let cmd = pass.input["command"].as_str().and_then(crate::graph::names::command_name);
        let Some(cmd) = cmd.filter(|c| crate::graph::names::is_check(c)) else {
            continue;
        };
        for r in fixes(&history(conn, session_db_id, pass.id, &cmd)?, pass, root) {
            if !facts.relations.contains(&r) {
                facts.relations.push(r);
            }
        }
    }
    let supported = proposed(&facts, proposals, root);
    facts.relations.extend(supported);
    let mut ids = Ids::new();
    let mut n = write_facts(conn, project, &facts, observation_ids, &mut ids, now)?;
    let touched = touched_files(&calls, root);
    for (decision, f) in decisions(conn, observation_ids, root, &touched)? {
        n += write_facts(conn, project, &f, &[decision], &mut ids, now)?;
    }
    Ok(n)
}

fn write_facts(conn: &Connection, project: &str, facts: &Facts, evidence: &[i64], ids: &mut Ids, now: i64) -> Result<usize, StoreError> {
    for e in &facts.entities {
        let id = known_id(conn, project, &(e.kind, e.name.clone()), ids, now)?;
        for a in &e.aliases {
            let mut alias = conn.prepare_cached("INSERT OR IGNORE INTO entity_aliases(alias, entity_id) VALUES (?1, ?2)")?;
            alias.execute(params![a, id])?;
        }
    }
    for r in &facts.relations {
        relation(conn, project, r, evidence, ids, now)?;
    }
    Ok(facts.relations.len())
}

/// The files the batch's calls edited or read (relative to the root): what an observation's file
/// lists may name. An observer's lists are proposals; a file no call touched is not evidence.
fn touched_files(calls: &[Call], root: Option<&str>) -> Vec<String> {
    fn read(c: &Call) -> Option<&str> {
        match c.tool_name.as_str() {
            "Read" | "NotebookRead" => c.input["file_path"].as_str().or(c.input["notebook_path"].as_str()),
            _ => None,
        }
    }
    let mut out: Vec<String> = Vec::new();
    for c in calls {
        if let Some(p) = crate::graph::extract::edited_file(c).or_else(|| read(c)) {
            let rel = crate::graph::names::relative_path(p, root);
            if !out.contains(&rel) {
                out.push(rel);
            }
        }
    }
    out
}

/// The `decided` facts of the batch's decision observations, each with its own id as evidence:
/// only the files of its lists that a call of the batch touched.
fn decisions(conn: &Connection, observation_ids: &[i64], root: Option<&str>, touched: &[String]) -> Result<Vec<(i64, Facts)>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT title, files_modified, files_read FROM observations WHERE id = ?1 AND type = 'decision' AND title IS NOT NULL",
    )?;
    let mut out = Vec::new();
    for id in observation_ids {
        let row: Option<(String, String, String)> = stmt.query_row([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).optional()?;
        if let Some((title, modified, read)) = row {
            let list = |s: &str| {
                let files = serde_json::from_str::<Vec<String>>(s).unwrap_or_default();
                files
                    .into_iter()
                    .filter(|f| touched.contains(&crate::graph::names::relative_path(f, root)))
                    .collect::<Vec<_>>()
            };
            out.push((*id, decided(&title, &list(&modified), &list(&read), root)));
        }
    }
    Ok(out)
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
            "SELECT o.id, o.project, s.id AS session_id, s.project_root FROM observations o
             JOIN sdk_sessions s ON s.memory_session_id = o.memory_session_id
             WHERE o.id > coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'graph_backfill_cursor'), 0)
               AND o.id <= coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'graph_backfill_until'), 0)
               AND EXISTS (SELECT 1 FROM observation_sources x WHERE x.observation_id = o.id)
             ORDER BY o.id LIMIT ?1",
        )?
        .query_map([limit], |r| {
            Ok((r.get("id")?, r.get("project")?, r.get("session_id")?, r.get("project_root")?))
        })?
        .collect::<Result<_, _>>()?;
    for (obs, project, session, root) in &todo {
        let rows: Vec<i64> = conn
            .prepare_cached("SELECT tool_use_row_id FROM observation_sources WHERE observation_id = ?1")?
            .query_map([obs], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        let b = GraphBatch {
            project,
            project_root: root.as_deref(),
            session_db_id: *session,
            source_rows: &rows,
            observation_ids: &[*obs],
            proposals: &[],
        };
        record_batch(conn, &b, now)?;
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
