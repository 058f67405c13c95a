//! Reading a claude-mem database, opened read-only (`file:<path>?mode=ro`), whatever its schema
//! age: each table's columns come from `PRAGMA table_info`; a missing optional column reads as
//! NULL; `claude_session_id` stands for `content_session_id` and `sdk_session_id` for
//! `memory_session_id` (docs/spec/storage.md §7.1).

use std::collections::HashSet;
use std::path::Path;

use rusqlite::types::Value;
use rusqlite::{Connection, OpenFlags, Row};

use super::ImportError;

/// One source row as column name → value, in the order asked for.
#[derive(Debug, Clone)]
pub struct SourceRow {
    pub id: i64,
    values: Vec<(&'static str, Value)>,
}

impl SourceRow {
    fn get(&self, name: &str) -> Option<&Value> {
        self.values.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }
    /// Text, with numbers rendered; NULL and blobs → None.
    pub fn text(&self, name: &str) -> Option<String> {
        match self.get(name)? {
            Value::Text(s) => Some(s.clone()),
            Value::Integer(i) => Some(i.to_string()),
            Value::Real(f) => Some(f.to_string()),
            _ => None,
        }
    }
    /// Integer, also from numeric text.
    pub fn int(&self, name: &str) -> Option<i64> {
        match self.get(name)? {
            Value::Integer(i) => Some(*i),
            Value::Real(f) => Some(*f as i64),
            Value::Text(s) => s.trim().parse().ok(),
            _ => None,
        }
    }
}

/// Wanted columns per table: (memd name, source aliases tried in order).
pub const SESSION_COLUMNS: &[(&str, &[&str])] = &[
    ("content_session_id", &["content_session_id", "claude_session_id"]),
    ("memory_session_id", &["memory_session_id", "sdk_session_id"]),
    ("platform_source", &["platform_source"]),
    ("project", &["project"]),
    ("custom_title", &["custom_title"]),
    ("user_prompt", &["user_prompt"]),
    ("started_at", &["started_at"]),
    ("started_at_epoch", &["started_at_epoch"]),
    ("completed_at", &["completed_at"]),
    ("completed_at_epoch", &["completed_at_epoch"]),
    ("status", &["status"]),
];
pub const PROMPT_COLUMNS: &[(&str, &[&str])] = &[
    ("session_db_id", &["session_db_id"]),
    ("content_session_id", &["content_session_id", "claude_session_id"]),
    ("prompt_number", &["prompt_number"]),
    ("prompt_text", &["prompt_text"]),
    ("created_at", &["created_at"]),
    ("created_at_epoch", &["created_at_epoch"]),
];
pub const OBSERVATION_COLUMNS: &[(&str, &[&str])] = &[
    ("memory_session_id", &["memory_session_id", "sdk_session_id"]),
    ("project", &["project"]),
    ("merged_into_project", &["merged_into_project"]),
    ("type", &["type"]),
    ("title", &["title"]),
    ("subtitle", &["subtitle"]),
    ("narrative", &["narrative"]),
    ("text", &["text"]),
    ("facts", &["facts"]),
    ("concepts", &["concepts"]),
    ("files_read", &["files_read"]),
    ("files_modified", &["files_modified"]),
    ("prompt_number", &["prompt_number"]),
    ("discovery_tokens", &["discovery_tokens"]),
    ("created_at", &["created_at"]),
    ("created_at_epoch", &["created_at_epoch"]),
    ("agent_id", &["agent_id"]),
    ("agent_type", &["agent_type"]),
    ("generated_by_model", &["generated_by_model"]),
    ("metadata", &["metadata"]),
    ("reinforcement_dates", &["reinforcement_dates"]),
    ("occurrence_count", &["occurrence_count"]),
];
pub const SUMMARY_COLUMNS: &[(&str, &[&str])] = &[
    ("memory_session_id", &["memory_session_id", "sdk_session_id"]),
    ("project", &["project"]),
    ("merged_into_project", &["merged_into_project"]),
    ("request", &["request"]),
    ("investigated", &["investigated"]),
    ("learned", &["learned"]),
    ("completed", &["completed"]),
    ("next_steps", &["next_steps"]),
    ("notes", &["notes"]),
    ("files_read", &["files_read"]),
    ("files_edited", &["files_edited"]),
    ("prompt_number", &["prompt_number"]),
    ("discovery_tokens", &["discovery_tokens"]),
    ("created_at", &["created_at"]),
    ("created_at_epoch", &["created_at_epoch"]),
];

/// The open source database.
pub struct Source {
    conn: Connection,
}

impl Source {
    /// Opens read-only; fails when the file is unreadable or lacks `sdk_sessions`/`observations`.
    pub fn open(path: &Path) -> Result<Self, ImportError> {
        if !path.is_file() {
            return Err(ImportError::Source(format!("{} is not a readable file", path.display())));
        }
        let uri = format!("file:{}?mode=ro", path.display());
        let conn = Connection::open_with_flags(&uri, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI)
            .map_err(|e| ImportError::Source(format!("cannot open {}: {e}", path.display())))?;
        let _ = conn.execute_batch("PRAGMA query_only=ON; PRAGMA busy_timeout=5000;");
        let source = Self { conn };
        for required in ["sdk_sessions", "observations"] {
            if source.columns(required)?.is_empty() {
                return Err(ImportError::Source(format!(
                    "{} is not a claude-mem database (no {required} table)",
                    path.display()
                )));
            }
        }
        Ok(source)
    }

    /// Column names of `table` (empty when the table does not exist).
    pub fn columns(&self, table: &str) -> Result<HashSet<String>, ImportError> {
        let mut stmt = self
            .conn
            .prepare(&format!("PRAGMA table_info(\"{table}\")"))
            .map_err(|e| ImportError::Source(e.to_string()))?;
        let names = stmt
            .query_map([], |r| r.get::<_, String>(1))
            .and_then(|rows| rows.collect::<Result<HashSet<_>, _>>())
            .map_err(|e| ImportError::Source(e.to_string()))?;
        Ok(names)
    }

    /// Row count of `table` (0 when absent).
    pub fn count(&self, table: &str) -> Result<u64, ImportError> {
        if self.columns(table)?.is_empty() {
            return Ok(0);
        }
        self.conn
            .query_row(&format!("SELECT count(*) FROM \"{table}\""), [], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(|e| ImportError::Source(e.to_string()))
    }

    /// Up to `limit` rows of `table` with `id > after`, in id order, with the wanted columns.
    pub fn chunk(&self, table: &str, wanted: &[(&'static str, &[&str])], after: i64, limit: usize) -> Result<Vec<SourceRow>, ImportError> {
        let cols = self.columns(table)?;
        if cols.is_empty() {
            return Ok(Vec::new());
        }
        let exprs: Vec<String> = wanted
            .iter()
            .map(|(_, aliases)| {
                aliases
                    .iter()
                    .find(|a| cols.contains(**a))
                    .map_or_else(|| "NULL".to_string(), |a| format!("\"{a}\""))
            })
            .collect();
        let sql = format!(
            "SELECT id, {} FROM \"{table}\" WHERE id > ?1 ORDER BY id LIMIT ?2",
            exprs.join(", ")
        );
        let mut stmt = self.conn.prepare(&sql).map_err(|e| ImportError::Source(e.to_string()))?;
        let read = |r: &Row<'_>| -> rusqlite::Result<SourceRow> {
            let mut values = Vec::with_capacity(wanted.len());
            for (i, (name, _)) in wanted.iter().enumerate() {
                values.push((*name, r.get::<_, Value>(i + 1)?));
            }
            Ok(SourceRow { id: r.get(0)?, values })
        };
        stmt.query_map(rusqlite::params![after, limit as i64], read)
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| ImportError::Source(e.to_string()))
    }
}
