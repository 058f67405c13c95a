//! `sdk_sessions`: one row per host session per platform; get-or-create, completion, parking.

use rusqlite::{Connection, OptionalExtension, params};

use super::StoreError;
use crate::clock::iso;

/// (platform_source, content_session_id): the identity of a host session.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct SessionKey {
    pub platform_source: String,
    pub content_session_id: String,
}

impl SessionKey {
    pub fn new(platform_source: impl Into<String>, content_session_id: impl Into<String>) -> Self {
        Self {
            platform_source: platform_source.into(),
            content_session_id: content_session_id.into(),
        }
    }
    /// `memd-<platform_source>-<content_session_id>`: never changes once created.
    pub fn memory_session_id(&self) -> String {
        format!("memd-{}-{}", self.platform_source, self.content_session_id)
    }
}

impl std::fmt::Display for SessionKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.platform_source, self.content_session_id)
    }
}

/// What an ingest path knows about the session it writes to.
#[derive(Debug, Clone)]
pub struct SessionSeed {
    pub key: SessionKey,
    pub project: String,
    pub project_root: Option<String>,
    pub transcript_path: Option<String>,
    pub custom_title: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SessionRow {
    pub id: i64,
    pub memory_session_id: String,
    pub project: String,
    pub project_root: Option<String>,
    pub status: String,
    pub prompt_counter: i64,
    pub created: bool,
}

pub fn find(conn: &Connection, key: &SessionKey) -> Result<Option<SessionRow>, StoreError> {
    Ok(conn
        .query_row(
            "SELECT id, memory_session_id, project, project_root, status, prompt_counter FROM sdk_sessions
             WHERE platform_source = ?1 AND content_session_id = ?2",
            params![key.platform_source, key.content_session_id],
            |r| {
                Ok(SessionRow {
                    id: r.get("id")?,
                    memory_session_id: r.get("memory_session_id")?,
                    project: r.get("project")?,
                    project_root: r.get("project_root")?,
                    status: r.get("status")?,
                    prompt_counter: r.get("prompt_counter")?,
                    created: false,
                })
            },
        )
        .optional()?)
}

/// Gets or creates the session, records the event time and makes it `active` again.
pub fn touch(conn: &Connection, seed: &SessionSeed, now: i64) -> Result<SessionRow, StoreError> {
    if let Some(mut row) = find(conn, &seed.key)? {
        conn.execute(
            "UPDATE sdk_sessions SET last_event_epoch = max(last_event_epoch, ?2), status = 'active',
               transcript_path = coalesce(transcript_path, ?3), custom_title = coalesce(custom_title, ?4)
             WHERE id = ?1",
            params![row.id, now, seed.transcript_path, seed.custom_title],
        )?;
        row.status = "active".into();
        return Ok(row);
    }
    let msid = seed.key.memory_session_id();
    conn.execute(
        "INSERT INTO sdk_sessions (content_session_id, memory_session_id, platform_source, project, project_root,
           transcript_path, custom_title, origin, started_at, started_at_epoch, last_event_epoch)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'hook', ?8, ?9, ?9)",
        params![
            seed.key.content_session_id,
            msid,
            seed.key.platform_source,
            seed.project,
            seed.project_root,
            seed.transcript_path,
            seed.custom_title,
            iso(now),
            now
        ],
    )?;
    Ok(SessionRow {
        id: conn.last_insert_rowid(),
        memory_session_id: msid,
        project: seed.project.clone(),
        project_root: seed.project_root.clone(),
        status: "active".into(),
        prompt_counter: 0,
        created: true,
    })
}

/// The project an event of `session` belongs to: the session's own while the event works at or
/// below the session's project root (an agent that `cd`s into `todo-app/` or `types/` is still in
/// the project it started in — without git or `.memd-project`, the directory's name would
/// otherwise become a project of its own), else the event's.
pub fn project_of_event<'a>(session: &'a SessionRow, seed: &'a SessionSeed) -> &'a str {
    match (session.project_root.as_deref(), seed.project_root.as_deref()) {
        (Some(root), Some(at)) if !root.is_empty() && at.strip_prefix(root).is_some_and(|rest| rest.starts_with('/')) => &session.project,
        _ => &seed.project,
    }
}

/// Outcome of `/api/sessions/complete`.
#[derive(Debug, Clone, PartialEq)]
pub enum CompleteOutcome {
    Unknown,
    Completing { session_db_id: i64, pending: i64 },
    Completed { session_db_id: i64 },
}

pub fn complete(conn: &Connection, key: &SessionKey, reason: &str, now: i64) -> Result<CompleteOutcome, StoreError> {
    let Some(row) = find(conn, key)? else {
        return Ok(CompleteOutcome::Unknown);
    };
    let pending: i64 = conn.query_row(
        "SELECT count(*) FROM pending_messages WHERE session_db_id = ?1 AND status != 'failed'",
        [row.id],
        |r| r.get(0),
    )?;
    if pending == 0 {
        mark_completed(conn, row.id, Some(reason), now)?;
        Ok(CompleteOutcome::Completed { session_db_id: row.id })
    } else {
        conn.execute(
            "UPDATE sdk_sessions SET status = 'completing', completed_reason = ?2, last_event_epoch = max(last_event_epoch, ?3) WHERE id = ?1",
            params![row.id, reason, now],
        )?;
        Ok(CompleteOutcome::Completing {
            session_db_id: row.id,
            pending,
        })
    }
}

/// `completed` with `completed_at`; keeps an earlier reason when `reason` is None.
pub fn mark_completed(conn: &Connection, id: i64, reason: Option<&str>, now: i64) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE sdk_sessions SET status = 'completed', completed_reason = coalesce(?2, completed_reason),
           completed_at = ?3, completed_at_epoch = ?4 WHERE id = ?1",
        params![id, reason, iso(now), now],
    )?;
    Ok(())
}

/// An actor stopped idle: the session becomes `completed` (reason `idle`) when nothing is pending.
pub fn complete_idle(conn: &Connection, id: i64, now: i64) -> Result<bool, StoreError> {
    let n = conn.execute(
        "UPDATE sdk_sessions SET status = 'completed', completed_reason = coalesce(completed_reason, 'idle'), completed_at = ?2,
           completed_at_epoch = ?3
         WHERE id = ?1 AND status IN ('active', 'completing')
           AND NOT EXISTS (SELECT 1 FROM pending_messages WHERE session_db_id = ?1 AND status != 'failed')",
        params![id, iso(now), now],
    )?;
    Ok(n > 0)
}

/// Supervision parked the session: `failed` with the reason; its pending rows are kept.
pub fn mark_failed(conn: &Connection, id: i64, reason: &str) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE sdk_sessions SET status = 'failed', failure_reason = ?2 WHERE id = ?1",
        params![id, reason],
    )?;
    Ok(())
}

/// Sessions that have work queued (`pending`/`processing` rows) and are not parked: rebuilt at start.
pub fn with_pending_work(conn: &Connection) -> Result<Vec<(i64, SessionKey)>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT s.id, s.platform_source, s.content_session_id FROM sdk_sessions s
         WHERE s.status != 'failed' AND EXISTS (SELECT 1 FROM pending_messages p WHERE p.session_db_id = s.id AND p.status != 'failed')
         ORDER BY s.last_event_epoch",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok((r.get(0)?, SessionKey::new(r.get::<_, String>(1)?, r.get::<_, String>(2)?)))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_below_the_session_root_stays_in_the_session_project() {
        let row = |root: Option<&str>| SessionRow {
            id: 1,
            memory_session_id: "m".into(),
            project: "Demo".into(),
            project_root: root.map(str::to_owned),
            status: "active".into(),
            prompt_counter: 0,
            created: false,
        };
        let seed = |project: &str, root: &str| SessionSeed {
            key: SessionKey {
                platform_source: "claude".into(),
                content_session_id: "c".into(),
            },
            project: project.into(),
            project_root: Some(root.into()),
            transcript_path: None,
            custom_title: None,
        };
        let demo = row(Some("/p/Demo"));
        assert_eq!(project_of_event(&demo, &seed("todo-app", "/p/Demo/todo-app")), "Demo");
        assert_eq!(
            project_of_event(&demo, &seed("Demo2", "/p/Demo2")),
            "Demo2",
            "a sibling is not below"
        );
        assert_eq!(project_of_event(&demo, &seed("other", "/q/other")), "other");
        assert_eq!(project_of_event(&row(None), &seed("todo-app", "/p/Demo/todo-app")), "todo-app");
    }

    fn seed(id: &str) -> SessionSeed {
        SessionSeed {
            key: SessionKey::new("claude", id),
            project: "shop".into(),
            project_root: None,
            transcript_path: None,
            custom_title: None,
        }
    }

    #[test]
    fn touch_creates_once_and_reactivates() {
        let conn = crate::store::test_conn();
        let a = touch(&conn, &seed("s1"), 10).unwrap();
        assert!(a.created);
        assert_eq!(a.memory_session_id, "memd-claude-s1");
        mark_completed(&conn, a.id, Some("clear"), 20).unwrap();
        let b = touch(&conn, &seed("s1"), 30).unwrap();
        assert!(!b.created);
        assert_eq!(b.id, a.id);
        assert_eq!(find(&conn, &seed("s1").key).unwrap().unwrap().status, "active");
    }

    #[test]
    fn complete_unknown_and_empty() {
        let conn = crate::store::test_conn();
        assert_eq!(
            complete(&conn, &SessionKey::new("claude", "nope"), "other", 1).unwrap(),
            CompleteOutcome::Unknown
        );
        let a = touch(&conn, &seed("s2"), 1).unwrap();
        assert_eq!(
            complete(&conn, &seed("s2").key, "clear", 2).unwrap(),
            CompleteOutcome::Completed { session_db_id: a.id }
        );
    }
}
