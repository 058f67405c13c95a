//! The raw archive's search index (schema v5, issue 35): one contentless FTS5 row per tool call,
//! its terms from [`crate::pipeline::terms`]. A batch's store queues the calls its observations
//! came from ([`enqueue`]); the queue is drained ([`drain_queue`]) once ingest is quiet
//! (`backend::raw_drain`, also started with the worker) — so indexing never slows an acknowledgement, and a call no observation came from is never indexed (search surfaces
//! observations). Rewritten when a redaction rescan changes the call, backfilled once for calls
//! stored before v5; a deleted call leaves index and queue by trigger; forgetting an observation
//! removes its calls from both.

use rusqlite::{Connection, params};

use super::StoreError;
use crate::observer::written;
use crate::pipeline::terms::{terms_document, terms_text, terms_value};

/// Calls read per backfill step.
const BACKFILL_CHUNK: i64 = 500;

/// The terms of a call's three columns: what it wrote (schema v14, [`written::split`]), the rest of
/// its input, its response.
pub fn call_terms(tool: &str, input: &str, response: &str) -> [String; 3] {
    // The input is parsed once: split, and its terms read from the value.
    let parsed = serde_json::from_str::<serde_json::Value>(input).ok();
    let (written, rest) = match &parsed {
        Some(v) => match written::split(tool, v) {
            // What was written is text even when it parses as JSON (a written tsconfig.json's
            // keys are what a search asks for).
            Some((w, rest)) => (terms_text(&w), terms_value(&rest)),
            None => (String::new(), terms_value(v)),
        },
        None => (String::new(), terms_document(input)),
    };
    [written, rest, terms_document(response)]
}

/// Indexes (or re-indexes) the call `id` of `tool` with its stored text.
pub fn index_call(conn: &Connection, id: i64, tool: &str, input: &str, response: &str) -> rusqlite::Result<()> {
    conn.execute("DELETE FROM tool_uses_fts WHERE rowid = ?1", [id])?;
    let [written, input, response] = call_terms(tool, input, response);
    conn.execute(
        "INSERT INTO tool_uses_fts(rowid, written, input, response) VALUES (?1, ?2, ?3, ?4)",
        params![id, written, input, response],
    )?;
    Ok(())
}

/// Re-indexes the call `id` from its row (after a rescan rewrote it).
pub fn reindex_call(conn: &Connection, id: i64) -> rusqlite::Result<()> {
    let row: Option<(String, String, String)> = rusqlite::OptionalExtension::optional(conn.query_row(
        "SELECT tool_name, tool_input, tool_response FROM tool_uses WHERE id = ?1",
        [id],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    ))?;
    match row {
        Some((tool, input, response)) => index_call(conn, id, &tool, &input, &response),
        None => Ok(()),
    }
}

const MARKER: &str = "raw_index_backfill_after";

/// Finishes the backfill the v5 migration started: indexes every call above the marker in `meta`,
/// a chunk per transaction that moves the marker with it (a killed start resumes where it
/// stopped), then removes the marker. Nothing to do once it is gone.
pub fn finish_backfill(conn: &mut Connection) -> Result<usize, StoreError> {
    let mut done = 0;
    loop {
        let tx = conn.transaction()?;
        let after: Option<String> =
            rusqlite::OptionalExtension::optional(tx.query_row("SELECT value FROM meta WHERE key = ?1", [MARKER], |r| r.get(0)))?;
        let Some(after) = after.map(|a| a.parse::<i64>().unwrap_or(0)) else {
            return Ok(done);
        };
        let n = backfill_chunk(&tx, after)?;
        done += n.0;
        match n.1 {
            Some(last) => tx.execute("UPDATE meta SET value = ?2 WHERE key = ?1", params![MARKER, last.to_string()])?,
            None => tx.execute("DELETE FROM meta WHERE key = ?1", [MARKER])?,
        };
        tx.commit()?;
        if n.1.is_none() {
            if done > 0 {
                tracing::info!(calls = done, "raw tool calls indexed for search");
            }
            return Ok(done);
        }
    }
}

/// Indexes up to [`BACKFILL_CHUNK`] calls above `after`: (how many, the last id when any).
fn backfill_chunk(conn: &Connection, after: i64) -> rusqlite::Result<(usize, Option<i64>)> {
    let rows: Vec<(i64, String, String, String)> = {
        let mut st = conn.prepare_cached(
            "SELECT id, tool_name, tool_input, tool_response FROM tool_uses
                 WHERE id > ?1 AND EXISTS (SELECT 1 FROM observation_sources s WHERE s.tool_use_row_id = tool_uses.id)
                 ORDER BY id LIMIT ?2",
        )?;
        st.query_map(params![after, BACKFILL_CHUNK], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
            .collect::<Result<_, _>>()?
    };
    for (id, tool, input, response) in &rows {
        index_call(conn, *id, tool, input, response)?;
    }
    Ok((rows.len(), rows.last().map(|r| r.0)))
}

/// Removes the calls observation `id` was made from out of the index and its queue (its
/// `forget`): what the user forgot is not found again through the raw text it came from.
pub fn unindex_sources_of(conn: &Connection, observation_id: i64) -> rusqlite::Result<usize> {
    conn.execute(
        "DELETE FROM raw_index_queue WHERE tool_use_row_id IN (SELECT tool_use_row_id FROM observation_sources WHERE observation_id = ?1)",
        [observation_id],
    )?;
    conn.execute(
        "DELETE FROM tool_uses_fts WHERE rowid IN (SELECT tool_use_row_id FROM observation_sources WHERE observation_id = ?1)",
        [observation_id],
    )
}

/// Queues call `id` for indexing (a batch made an observation of it).
pub fn enqueue(conn: &Connection, id: i64) -> rusqlite::Result<()> {
    conn.execute("INSERT OR IGNORE INTO raw_index_queue(tool_use_row_id) VALUES (?1)", [id])?;
    Ok(())
}

/// Indexes up to `limit` queued calls, oldest first; returns how many.
pub fn drain_queue(conn: &Connection, limit: usize) -> rusqlite::Result<usize> {
    let ids: Vec<i64> = {
        let mut st = conn.prepare_cached("SELECT tool_use_row_id FROM raw_index_queue ORDER BY tool_use_row_id LIMIT ?1")?;
        st.query_map([limit as i64], |r| r.get(0))?.collect::<Result<_, _>>()?
    };
    for id in &ids {
        reindex_call(conn, *id)?;
        conn.execute("DELETE FROM raw_index_queue WHERE tool_use_row_id = ?1", [id])?;
    }
    Ok(ids.len())
}

/// Calls waiting in the queue.
pub fn queued(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("SELECT count(*) FROM raw_index_queue", [], |r| r.get(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::tool_events::{ingest_tool_event, sample_event};

    fn hits(conn: &Connection, term: &str) -> i64 {
        conn.query_row("SELECT count(*) FROM tool_uses_fts WHERE tool_uses_fts MATCH ?1", [term], |r| {
            r.get(0)
        })
        .unwrap()
    }

    #[test]
    fn a_stored_call_is_found_by_an_identifier_and_its_parts_and_leaves_when_deleted() {
        let conn = crate::store::test_conn();
        let mut e = sample_event("s1", Some("t1"));
        e.tool_input = r#"{"file_path":"src/tokenizer.js","new_string":"function debouncedUpdateTokens() {}"}"#.into();
        ingest_tool_event(&conn, &e).unwrap();
        assert_eq!(hits(&conn, "debouncedUpdateTokens"), 0, "acknowledging a call does not index it");
        index_call(&conn, 1, "Edit", &e.tool_input, &e.tool_response).unwrap();
        assert_eq!(hits(&conn, "written : debouncedUpdateTokens"), 1, "in the column of what it wrote");
        assert_eq!(hits(&conn, "input : debouncedUpdateTokens"), 0);
        assert_eq!(hits(&conn, "debouncedUpdateTokens"), 1);
        assert_eq!(hits(&conn, "debounced AND tokens"), 1);
        assert_eq!(hits(&conn, "tokenizer"), 1);
        let vocab: i64 = conn
            .query_row("SELECT doc FROM tool_uses_vocab WHERE term = 'debouncedupdatetokens'", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(vocab, 1);
        conn.execute("DELETE FROM pending_messages", []).unwrap();
        conn.execute("DELETE FROM tool_uses", []).unwrap();
        assert_eq!(hits(&conn, "debouncedUpdateTokens"), 0);
    }

    #[test]
    fn the_backfill_indexes_calls_stored_without_terms() {
        let mut conn = crate::store::test_conn();
        finish_backfill(&mut conn).unwrap();
        for i in 0..3 {
            let mut e = sample_event("s1", Some(&format!("t{i}")));
            e.tool_input = format!(r#"{{"command":"cargo test parse_toml_{i}"}}"#);
            ingest_tool_event(&conn, &e).unwrap();
        }
        conn.execute("DELETE FROM tool_uses_fts", []).unwrap();
        // Two of the three calls are an observation's sources; the third (no observation yet,
        // or one that was forgotten) is not indexed.
        conn.execute(
            "INSERT INTO observations (memory_session_id, project, platform_source, type, title, content_hash, origin, created_at, created_at_epoch)
             SELECT memory_session_id, 'shop', 'claude', 'change', 'ran tests', 'h', 'extractive', '', 1 FROM sdk_sessions LIMIT 1",
            [],
        )
        .unwrap();
        let obs = conn.last_insert_rowid();
        conn.execute("INSERT INTO observation_sources SELECT ?1, id FROM tool_uses WHERE id <= 2", [obs])
            .unwrap();
        assert_eq!(hits(&conn, "parse_toml_1"), 0);
        assert_eq!(finish_backfill(&mut conn).unwrap(), 0, "a fresh database has no marker left");
        conn.execute("INSERT INTO meta(key, value) VALUES ('raw_index_backfill_after', '0')", [])
            .unwrap();
        assert_eq!(finish_backfill(&mut conn).unwrap(), 2);
        assert_eq!(finish_backfill(&mut conn).unwrap(), 0, "the marker is gone");
        assert_eq!(hits(&conn, "parse_toml_1"), 1);
        assert_eq!(hits(&conn, "toml"), 2);
    }

    #[test]
    fn queued_calls_are_indexed_when_drained_and_a_deleted_call_leaves_the_queue() {
        let conn = crate::store::test_conn();
        for i in 0..3 {
            let mut e = sample_event("s1", Some(&format!("q{i}")));
            e.tool_input = format!(r#"{{"command":"make target_{i}"}}"#);
            ingest_tool_event(&conn, &e).unwrap();
            enqueue(&conn, i + 1).unwrap();
        }
        enqueue(&conn, 1).unwrap();
        assert_eq!((queued(&conn).unwrap(), hits(&conn, "target_1")), (3, 0));
        assert_eq!(drain_queue(&conn, 2).unwrap(), 2);
        assert_eq!((queued(&conn).unwrap(), hits(&conn, "target_1")), (1, 1));
        conn.execute("DELETE FROM pending_messages", []).unwrap();
        conn.execute("DELETE FROM tool_uses WHERE id = 3", []).unwrap();
        assert_eq!(queued(&conn).unwrap(), 0, "a deleted call leaves the queue");
        assert_eq!(drain_queue(&conn, 10).unwrap(), 0);
    }
}
