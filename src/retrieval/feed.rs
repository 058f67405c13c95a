//! The live feed behind `GET /stream` (docs/spec/api.md §7): what was stored after a cursor.
//!
//! The feed is read from the database, not from an in-memory broadcast, so each stored row reaches
//! each client exactly once whatever the write path (observer, extractive, manual save, import),
//! a reconnect with `Last-Event-ID` resumes where the client stopped — even across a worker
//! restart — and forgotten rows are never sent (they are gone). The cursor is the highest id the
//! client has seen per table; an event's SSE id is the cursor after it.

use rusqlite::{Connection, params};
use serde_json::{Value, json};

use super::RetrievalError;
use super::records::{OBS_COLS, Observation, PROMPT_COLS, Prompt, SUMMARY_COLS, Summary};

/// Rows read per table and poll: a client far behind catches up over several polls.
pub const PER_POLL: i64 = 200;

/// The highest id seen per table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cursor {
    pub observation: i64,
    pub prompt: i64,
    pub summary: i64,
    pub session: i64,
}

impl Cursor {
    /// `o.p.s.n` (as [`Cursor::to_id`] writes it); anything else is None.
    pub fn parse(s: &str) -> Option<Self> {
        let mut it = s.trim().split('.').map(|p| p.parse::<i64>().ok().filter(|n| *n >= 0));
        let c = Self {
            observation: it.next()??,
            prompt: it.next()??,
            summary: it.next()??,
            session: it.next()??,
        };
        it.next().is_none().then_some(c)
    }

    pub fn to_id(self) -> String {
        format!("{}.{}.{}.{}", self.observation, self.prompt, self.summary, self.session)
    }
}

/// The cursor of everything stored now (a new client starts here).
pub fn head(conn: &Connection) -> Result<Cursor, RetrievalError> {
    let max = |table: &str| -> Result<i64, RetrievalError> {
        Ok(conn.query_row(&format!("SELECT coalesce(max(id), 0) FROM {table}"), [], |r| r.get(0))?)
    };
    Ok(Cursor {
        observation: max("observations")?,
        prompt: max("user_prompts")?,
        summary: max("session_summaries")?,
        session: max("sdk_sessions")?,
    })
}

/// One event for the stream: its SSE id (the cursor after it) and its JSON (without `timestamp`).
#[derive(Debug, Clone, PartialEq)]
pub struct FeedEvent {
    pub id: String,
    pub data: Value,
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Table {
    Session,
    Prompt,
    Observation,
    Summary,
}

/// Rows of `table` (aliased `a`) with an id above `after`, each with its content session id (the
/// column after `cols`, at index `at`).
fn joined<T>(
    conn: &Connection,
    cols: &str,
    table: &str,
    a: &str,
    after: i64,
    row: fn(&rusqlite::Row) -> rusqlite::Result<T>,
) -> Result<Vec<rusqlite::Result<(T, String)>>, RetrievalError> {
    let sql = format!(
        "SELECT {cols}, ss.content_session_id AS feed_content_session_id FROM {table} JOIN sdk_sessions ss ON ss.memory_session_id = {a}.memory_session_id \
         WHERE {a}.id > ?1 ORDER BY {a}.id LIMIT ?2"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params![after, PER_POLL], |r| {
        Ok((row(r)?, r.get::<_, String>("feed_content_session_id")?))
    })?;
    Ok(rows.collect())
}

/// The events stored after `from`, oldest first (across tables by creation time), and the cursor
/// after the last of them.
pub fn since(conn: &Connection, from: Cursor) -> Result<(Vec<FeedEvent>, Cursor), RetrievalError> {
    let mut rows: Vec<(i64, Table, i64, Value)> = Vec::new();
    let mut stmt = conn.prepare_cached(
        "SELECT id, content_session_id, project, platform_source, started_at_epoch FROM sdk_sessions WHERE id > ?1 ORDER BY id LIMIT ?2",
    )?;
    for r in stmt.query_map(params![from.session, PER_POLL], |r| {
        Ok((
            r.get::<_, i64>("id")?,
            r.get::<_, String>("content_session_id")?,
            r.get::<_, String>("project")?,
            r.get::<_, String>("platform_source")?,
            r.get::<_, i64>("started_at_epoch")?,
        ))
    })? {
        let (id, content, project, platform, at) = r?;
        let data = json!({"type": "session_started", "sessionDbId": id, "content_session_id": content,
            "project": project, "platform_source": platform});
        rows.push((at, Table::Session, id, data));
    }
    let sql = format!("SELECT {PROMPT_COLS} FROM user_prompts p WHERE p.id > ?1 ORDER BY p.id LIMIT ?2");
    let mut stmt = conn.prepare_cached(&sql)?;
    for p in stmt.query_map(params![from.prompt, PER_POLL], Prompt::from_row)? {
        let p = p?;
        let text = if p.is_private { p.title() } else { p.prompt_text.clone() };
        let data = json!({"type": "new_prompt", "prompt": {"id": p.id, "content_session_id": p.content_session_id,
            "project": p.project, "platform_source": p.platform_source, "prompt_number": p.prompt_number,
            "prompt_text": text, "created_at_epoch": p.created_at_epoch}});
        rows.push((p.created_at_epoch, Table::Prompt, p.id, data));
    }
    for r in joined(conn, OBS_COLS, "observations o", "o", from.observation, Observation::from_row)? {
        let (o, content) = r?;
        let data = json!({"type": "new_observation", "observation": {"id": o.id, "memory_session_id": o.memory_session_id,
            "session_id": content, "platform_source": o.platform_source, "type": o.obs_type, "title": o.title,
            "subtitle": o.subtitle, "text": null, "narrative": o.narrative, "facts": o.facts, "concepts": o.concepts,
            "files_read": o.files_read, "files_modified": o.files_modified, "project": o.project,
            "prompt_number": o.prompt_number, "created_at_epoch": o.created_at_epoch}});
        rows.push((o.created_at_epoch, Table::Observation, o.id, data));
    }
    for r in joined(conn, SUMMARY_COLS, "session_summaries s", "s", from.summary, Summary::from_row)? {
        let (s, content) = r?;
        let data = json!({"type": "new_summary", "summary": {"id": s.id, "session_id": content,
            "platform_source": s.platform_source, "request": s.request, "investigated": s.investigated,
            "learned": s.learned, "completed": s.completed, "next_steps": s.next_steps, "notes": s.notes,
            "project": s.project, "prompt_number": s.prompt_number, "created_at_epoch": s.created_at_epoch}});
        rows.push((s.created_at_epoch, Table::Summary, s.id, data));
    }
    // Within a table ids ascend, so sorting by (time, table, id) keeps each table's part of the
    // cursor monotonic, and an event's id always covers every event before it.
    rows.sort_by_key(|(at, table, id, _)| (*at, *table, *id));
    let mut cursor = from;
    let events = rows
        .into_iter()
        .map(|(_, table, id, data)| {
            let slot = match table {
                Table::Session => &mut cursor.session,
                Table::Prompt => &mut cursor.prompt,
                Table::Observation => &mut cursor.observation,
                Table::Summary => &mut cursor.summary,
            };
            *slot = (*slot).max(id);
            FeedEvent { id: cursor.to_id(), data }
        })
        .collect();
    Ok((events, cursor))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_conn;

    fn seed(conn: &Connection, n: i64, at: i64) -> i64 {
        conn.execute(
            "INSERT OR IGNORE INTO sdk_sessions (content_session_id, memory_session_id, project, started_at, started_at_epoch, last_event_epoch)
             VALUES ('c1', 'm1', 'acme', 'x', 0, 0)",
            [],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO observations (memory_session_id, project, platform_source, type, title, content_hash, origin, created_at, created_at_epoch)
             VALUES ('m1', 'acme', 'claude', 'discovery', ?1, ?1, 'manual', 'x', ?2)",
            params![format!("obs {n}"), at],
        )
        .unwrap();
        conn.last_insert_rowid()
    }

    #[test]
    fn cursors_round_trip_and_refuse_garbage() {
        let c = Cursor {
            observation: 5,
            prompt: 0,
            summary: 2,
            session: 9,
        };
        assert_eq!(Cursor::parse(&c.to_id()), Some(c));
        for bad in ["", "1.2.3", "1.2.3.4.5", "a.b.c.d", "-1.0.0.0", "1..2.3"] {
            assert_eq!(Cursor::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn each_row_is_delivered_once_from_any_cursor() {
        let conn = test_conn();
        let start = head(&conn).unwrap();
        seed(&conn, 1, 10);
        seed(&conn, 2, 20);
        let (first, after) = since(&conn, start).unwrap();
        let kinds: Vec<&str> = first.iter().map(|e| e.data["type"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["session_started", "new_observation", "new_observation"]);
        assert_eq!(since(&conn, after).unwrap().0, vec![], "nothing twice");
        // Resuming from the id of the first observation event yields exactly the second.
        let resume = Cursor::parse(&first[1].id).unwrap();
        let (rest, _) = since(&conn, resume).unwrap();
        assert_eq!(rest.len(), 1);
        assert_eq!(rest[0].data["observation"]["title"], "obs 2");
        assert_eq!(rest[0].data["observation"]["session_id"], "c1");
        let id3 = seed(&conn, 3, 30);
        conn.execute("DELETE FROM observations WHERE id = ?1", [id3]).unwrap();
        assert_eq!(since(&conn, after).unwrap().0, vec![], "a forgotten row is never sent");
        assert_eq!(head(&conn).unwrap().observation, 2, "max(id) after the delete");
    }
}
