//! `memd redact --rescan`: the current redaction rules over every stored row, a chunk at a time.
//! A changed observation, summary or prompt has its FTS rows rebuilt by the update triggers and
//! its vector dropped and queued for re-embedding (and for the Chroma mirror), so no old
//! embedding or document keeps a secret the text no longer has.

use rusqlite::{Connection, OptionalExtension, params};

use crate::pipeline::redact::RedactionCounts;

/// How a column is cleaned: as plain text, or as a JSON document (structure-aware).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Text,
    Json,
}

/// One table's columns that hold captured text, and the vector document kind of its rows.
pub struct TableSpec {
    pub table: &'static str,
    pub columns: &'static [(&'static str, Shape)],
    pub doc_kind: Option<&'static str>,
}

pub const TABLES: &[TableSpec] = &[
    TableSpec {
        table: "tool_uses",
        columns: &[
            ("tool_name", Shape::Text),
            ("cwd", Shape::Text),
            ("tool_input", Shape::Json),
            ("tool_response", Shape::Json),
        ],
        doc_kind: None,
    },
    TableSpec {
        table: "observations",
        columns: &[
            ("title", Shape::Text),
            ("subtitle", Shape::Text),
            ("narrative", Shape::Text),
            ("facts", Shape::Json),
            ("concepts", Shape::Json),
            ("metadata", Shape::Json),
        ],
        doc_kind: Some("observation"),
    },
    TableSpec {
        table: "user_prompts",
        columns: &[("prompt_text", Shape::Text), ("cwd", Shape::Text)],
        doc_kind: Some("prompt"),
    },
    TableSpec {
        table: "session_summaries",
        columns: &[
            ("request", Shape::Text),
            ("investigated", Shape::Text),
            ("learned", Shape::Text),
            ("completed", Shape::Text),
            ("next_steps", Shape::Text),
            ("notes", Shape::Text),
        ],
        doc_kind: None, // its update trigger re-queues the vector
    },
];

/// Cleans one value; None when the rules change nothing.
pub type Clean<'a> = &'a dyn Fn(&str, Shape) -> Option<(String, RedactionCounts)>;

/// What one chunk did.
#[derive(Debug, Default, Clone, Copy)]
pub struct Chunk {
    pub last_id: i64,
    pub scanned: u64,
    pub changed: u64,
}

/// Rows of `spec` with `id > after`, at most `limit`; changed values are written unless
/// `dry_run`. Counts per detector go to `counts`.
pub fn rescan_chunk(
    conn: &Connection,
    spec: &TableSpec,
    after: i64,
    limit: i64,
    dry_run: bool,
    clean: Clean<'_>,
    counts: &mut RedactionCounts,
) -> rusqlite::Result<Chunk> {
    let cols: Vec<&str> = spec.columns.iter().map(|(c, _)| *c).collect();
    let sql = format!(
        "SELECT id, {} FROM {} WHERE id > ?1 ORDER BY id LIMIT ?2",
        cols.join(", "),
        spec.table
    );
    let rows: Vec<(i64, Vec<Option<String>>)> = {
        let mut st = conn.prepare(&sql)?;
        st.query_map(params![after, limit], |r| {
            let id: i64 = r.get(0)?;
            let vals = (0..cols.len())
                .map(|i| r.get::<_, Option<String>>(i + 1))
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok((id, vals))
        })?
        .collect::<rusqlite::Result<_>>()?
    };
    let mut chunk = Chunk {
        last_id: after,
        ..Default::default()
    };
    for (id, vals) in rows {
        chunk.last_id = id;
        chunk.scanned += 1;
        let mut row_changed = false;
        for ((col, shape), val) in spec.columns.iter().zip(vals) {
            let Some(val) = val else { continue };
            let Some((clean_val, c)) = clean(&val, *shape) else { continue };
            counts.merge(&c);
            row_changed = true;
            if !dry_run {
                conn.execute(
                    &format!("UPDATE {} SET {col} = ?1 WHERE id = ?2", spec.table),
                    params![clean_val, id],
                )?;
            }
        }
        if row_changed {
            chunk.changed += 1;
            if let (false, Some(kind)) = (dry_run, spec.doc_kind) {
                requeue_vector(conn, kind, id)?;
            }
            if !dry_run && spec.table == "tool_uses" {
                super::raw_index::reindex_call(conn, id)?;
            }
        }
    }
    Ok(chunk)
}

/// Drops the row's embedding and queues it again for the embedded index and the Chroma target.
pub(crate) fn requeue_vector(conn: &Connection, kind: &str, id: i64) -> rusqlite::Result<()> {
    let had = conn
        .query_row(
            "SELECT 1 FROM vectors WHERE doc_kind = ?1 AND row_id = ?2",
            params![kind, id],
            |_| Ok(()),
        )
        .optional()?
        .is_some();
    conn.execute("DELETE FROM vectors WHERE doc_kind = ?1 AND row_id = ?2", params![kind, id])?;
    if had {
        conn.execute(
            "INSERT OR REPLACE INTO vector_sync(target, doc_kind, row_id, state, attempts, updated_at_epoch)
             VALUES ('sqlite', ?1, ?2, 'pending', 0, CAST(unixepoch('subsec') * 1000 AS INTEGER))",
            params![kind, id],
        )?;
    }
    conn.execute(
        "INSERT OR REPLACE INTO vector_sync(target, doc_kind, row_id, state, attempts, updated_at_epoch)
         SELECT value, ?1, ?2, 'pending', 0, CAST(unixepoch('subsec') * 1000 AS INTEGER)
         FROM meta WHERE key = 'vector_target' AND value LIKE 'chroma:%'",
        params![kind, id],
    )?;
    Ok(())
}

/// The meta key holding the rules version the stored rows were last scanned with.
pub const RULES_META: &str = "redaction_rules_version";

pub fn rules_version(conn: &Connection) -> rusqlite::Result<i64> {
    Ok(conn
        .query_row("SELECT value FROM meta WHERE key = ?1", [RULES_META], |r| r.get::<_, String>(0))
        .optional()?
        .and_then(|v| v.parse().ok())
        .unwrap_or(1))
}

pub fn set_rules_version(conn: &Connection, v: i64) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)",
        params![RULES_META, v.to_string()],
    )?;
    Ok(())
}
