//! `user_prompts` and the `ingest_events` idempotency ledger: the `ingest_prompt` command.

use rusqlite::{Connection, OptionalExtension, params};

use super::StoreError;
use super::sessions::{SessionSeed, touch};
use crate::clock::iso;

/// Duplicate window for the same normalised prompt text (docs/spec/pipeline.md §4 step 6).
pub const DUPLICATE_WINDOW_MS: i64 = 10_000;

#[derive(Debug, Clone)]
pub struct PromptIn {
    pub seed: SessionSeed,
    /// Cleaned text (tags stripped, redacted, capped); empty when private.
    pub text: String,
    pub is_private: bool,
    pub prompt_id: Option<String>,
    pub cwd: Option<String>,
    pub event_id: Option<String>,
    pub at: i64,
}

#[derive(Debug, Clone, PartialEq)]
pub enum PromptOutcome {
    Stored {
        session_db_id: i64,
        prompt_number: i64,
        prompt_id: i64,
        new_session: bool,
    },
    Private {
        session_db_id: i64,
        prompt_number: i64,
    },
    Duplicate {
        session_db_id: i64,
        prompt_number: i64,
    },
}

/// Returns the recorded (session, prompt number) when `event_id` was accepted before.
/// (session_db_id, prompt_number) recorded with an accepted event id.
pub type SeenEvent = (Option<i64>, Option<i64>);

pub fn seen_event(conn: &Connection, event_id: Option<&str>) -> Result<Option<SeenEvent>, StoreError> {
    let Some(id) = event_id else { return Ok(None) };
    Ok(conn
        .query_row(
            "SELECT session_db_id, prompt_number FROM ingest_events WHERE event_id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?)
}

pub fn record_event(
    conn: &Connection,
    event_id: Option<&str>,
    route: &str,
    session_db_id: i64,
    prompt_number: Option<i64>,
    now: i64,
) -> Result<(), StoreError> {
    if let Some(id) = event_id {
        conn.execute(
            "INSERT OR IGNORE INTO ingest_events(event_id, route, session_db_id, prompt_number, created_at_epoch) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![id, route, session_db_id, prompt_number, now],
        )?;
    }
    Ok(())
}

pub fn ingest_prompt(conn: &Connection, p: &PromptIn) -> Result<PromptOutcome, StoreError> {
    if let Some((sid, num)) = seen_event(conn, p.event_id.as_deref())? {
        return Ok(PromptOutcome::Duplicate {
            session_db_id: sid.unwrap_or(0),
            prompt_number: num.unwrap_or(0),
        });
    }
    let session = touch(conn, &p.seed, p.at)?;
    let earlier: Option<i64> = conn
        .query_row(
            "SELECT prompt_number FROM user_prompts WHERE session_db_id = ?1 AND prompt_text = ?2 AND is_private = ?3
               AND created_at_epoch >= ?4 ORDER BY created_at_epoch DESC LIMIT 1",
            params![session.id, p.text, p.is_private, p.at - DUPLICATE_WINDOW_MS],
            |r| r.get(0),
        )
        .optional()?;
    if let Some(n) = earlier {
        record_event(conn, p.event_id.as_deref(), "init", session.id, Some(n), p.at)?;
        return Ok(PromptOutcome::Duplicate {
            session_db_id: session.id,
            prompt_number: n,
        });
    }
    let number = session.prompt_counter + 1;
    conn.execute(
        "INSERT INTO user_prompts(session_db_id, content_session_id, platform_source, project, prompt_number, prompt_text,
           is_private, prompt_id, cwd, created_at, created_at_epoch)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        params![
            session.id,
            p.seed.key.content_session_id,
            p.seed.key.platform_source,
            p.seed.project,
            number,
            p.text,
            p.is_private,
            p.prompt_id,
            p.cwd,
            iso(p.at),
            p.at
        ],
    )?;
    let prompt_row = conn.last_insert_rowid();
    conn.execute(
        "UPDATE sdk_sessions SET prompt_counter = ?2, user_prompt = CASE WHEN user_prompt IS NULL AND ?3 != '' THEN ?3 ELSE user_prompt END WHERE id = ?1",
        params![session.id, number, p.text],
    )?;
    record_event(conn, p.event_id.as_deref(), "init", session.id, Some(number), p.at)?;
    Ok(if p.is_private {
        PromptOutcome::Private {
            session_db_id: session.id,
            prompt_number: number,
        }
    } else {
        PromptOutcome::Stored {
            session_db_id: session.id,
            prompt_number: number,
            prompt_id: prompt_row,
            new_session: session.created,
        }
    })
}

/// Whether the session's current (highest-numbered) prompt is private: the privacy gate.
pub fn current_prompt_private(conn: &Connection, session_db_id: i64) -> Result<bool, StoreError> {
    Ok(conn
        .query_row(
            "SELECT is_private FROM user_prompts WHERE session_db_id = ?1 ORDER BY prompt_number DESC LIMIT 1",
            [session_db_id],
            |r| r.get::<_, bool>(0),
        )
        .optional()?
        .unwrap_or(false))
}

pub fn prompt_text(conn: &Connection, session_db_id: i64, prompt_number: i64) -> Result<Option<String>, StoreError> {
    Ok(conn
        .query_row(
            "SELECT prompt_text FROM user_prompts WHERE session_db_id = ?1 AND prompt_number = ?2",
            params![session_db_id, prompt_number],
            |r| r.get(0),
        )
        .optional()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::sessions::SessionKey;

    fn prompt(text: &str, at: i64, event: Option<&str>) -> PromptIn {
        PromptIn {
            seed: SessionSeed {
                key: SessionKey::new("claude", "s1"),
                project: "p".into(),
                project_root: None,
                transcript_path: None,
                custom_title: None,
            },
            text: text.into(),
            is_private: text.is_empty(),
            prompt_id: None,
            cwd: None,
            event_id: event.map(String::from),
            at,
        }
    }

    #[test]
    fn numbers_prompts_and_skips_duplicates() {
        let conn = crate::store::test_conn();
        assert!(matches!(
            ingest_prompt(&conn, &prompt("fix it", 1_000, Some("e1"))).unwrap(),
            PromptOutcome::Stored {
                prompt_number: 1,
                new_session: true,
                ..
            }
        ));
        assert_eq!(
            ingest_prompt(&conn, &prompt("fix it", 2_000, None)).unwrap(),
            PromptOutcome::Duplicate {
                session_db_id: 1,
                prompt_number: 1
            }
        );
        assert!(matches!(
            ingest_prompt(&conn, &prompt("fix it", 20_000, None)).unwrap(),
            PromptOutcome::Stored { prompt_number: 2, .. }
        ));
        assert_eq!(
            ingest_prompt(&conn, &prompt("other", 21_000, Some("e1"))).unwrap(),
            PromptOutcome::Duplicate {
                session_db_id: 1,
                prompt_number: 1
            }
        );
        assert_eq!(
            ingest_prompt(&conn, &prompt("", 22_000, None)).unwrap(),
            PromptOutcome::Private {
                session_db_id: 1,
                prompt_number: 3
            }
        );
        assert!(current_prompt_private(&conn, 1).unwrap());
    }
}
