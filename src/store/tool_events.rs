//! `tool_uses` + `pending_messages`: the `ingest_tool_event` and `ingest_summary_request` commands.

use rusqlite::{Connection, OptionalExtension, params};

use super::StoreError;
use super::prompts::{current_prompt_private, record_event, seen_event};
use super::sessions::{SessionSeed, touch};

/// A tool event after filters and privacy processing, ready to be stored.
#[derive(Debug, Clone)]
pub struct ToolEventIn {
    pub seed: SessionSeed,
    pub tool_use_id: Option<String>,
    pub tool_name: String,
    /// JSON text, already cleaned and size-bounded.
    pub tool_input: String,
    pub tool_response: String,
    pub is_error: bool,
    pub cwd: Option<String>,
    pub agent_id: Option<String>,
    pub agent_type: Option<String>,
    pub duration_ms: Option<i64>,
    pub input_chars: i64,
    pub response_chars: i64,
    pub truncated: i64,
    pub images_stripped: i64,
    pub redactions: i64,
    pub prompt_id: Option<String>,
    pub event_id: Option<String>,
    pub occurred_at: i64,
    pub now: i64,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ToolEventOutcome {
    Queued { pending_id: i64, session_db_id: i64 },
    Duplicate,
    Private,
}

pub fn ingest_tool_event(conn: &Connection, e: &ToolEventIn) -> Result<ToolEventOutcome, StoreError> {
    if seen_event(conn, e.event_id.as_deref())?.is_some() {
        return Ok(ToolEventOutcome::Duplicate);
    }
    if let Some(tuid) = &e.tool_use_id {
        let known: Option<i64> = conn
            .query_row(
                "SELECT t.id FROM tool_uses t JOIN sdk_sessions s ON s.id = t.session_db_id
                 WHERE s.platform_source = ?1 AND s.content_session_id = ?2 AND t.tool_use_id = ?3",
                params![e.seed.key.platform_source, e.seed.key.content_session_id, tuid],
                |r| r.get(0),
            )
            .optional()?;
        if known.is_some() {
            return Ok(ToolEventOutcome::Duplicate);
        }
    }
    let session = touch(conn, &e.seed, e.now)?;
    if current_prompt_private(conn, session.id)? {
        return Ok(ToolEventOutcome::Private);
    }
    let prompt_number = session.prompt_counter;
    let project = super::sessions::project_of_event(&session, &e.seed);
    conn.execute(
        "INSERT INTO tool_uses(session_db_id, content_session_id, platform_source, project, prompt_number, prompt_id, tool_use_id,
           tool_name, tool_input, tool_response, is_error, cwd, agent_id, agent_type, duration_ms, input_chars, response_chars,
           truncated, images_stripped, redactions, occurred_at_epoch, created_at_epoch)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22)",
        params![
            session.id,
            e.seed.key.content_session_id,
            e.seed.key.platform_source,
            project,
            prompt_number,
            e.prompt_id,
            e.tool_use_id,
            e.tool_name,
            e.tool_input,
            e.tool_response,
            e.is_error,
            e.cwd,
            e.agent_id,
            e.agent_type,
            e.duration_ms,
            e.input_chars,
            e.response_chars,
            e.truncated,
            e.images_stripped,
            e.redactions,
            e.occurred_at,
            e.now
        ],
    )?;
    let tool_row = conn.last_insert_rowid();
    conn.execute(
        "INSERT INTO pending_messages(session_db_id, content_session_id, message_type, tool_use_row_id, tool_use_id, prompt_number,
           project, cwd, agent_id, agent_type, created_at_epoch)
         VALUES (?1, ?2, 'observation', ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        params![
            session.id,
            e.seed.key.content_session_id,
            tool_row,
            e.tool_use_id,
            prompt_number,
            project,
            e.cwd,
            e.agent_id,
            e.agent_type,
            e.occurred_at
        ],
    )?;
    let pending_id = conn.last_insert_rowid();
    record_event(conn, e.event_id.as_deref(), "observations", session.id, Some(prompt_number), e.now)?;
    Ok(ToolEventOutcome::Queued {
        pending_id,
        session_db_id: session.id,
    })
}

#[derive(Debug, Clone)]
pub struct SummaryRequestIn {
    pub seed: SessionSeed,
    pub last_assistant_message: String,
    pub event_id: Option<String>,
    pub at: i64,
}

#[derive(Debug, Clone, PartialEq)]
pub enum SummaryRequestOutcome {
    Queued {
        pending_id: i64,
        session_db_id: i64,
        replaced: bool,
    },
    Duplicate,
    Private,
}

pub fn ingest_summary_request(conn: &Connection, s: &SummaryRequestIn) -> Result<SummaryRequestOutcome, StoreError> {
    if let Some(sid) = super::sessions::find(conn, &s.seed.key)?
        && current_prompt_private(conn, sid.id)?
    {
        return Ok(SummaryRequestOutcome::Private);
    }
    if seen_event(conn, s.event_id.as_deref())?.is_some() {
        return Ok(SummaryRequestOutcome::Duplicate);
    }
    let session = touch(conn, &s.seed, s.at)?;
    // A Stop hook often carries no cwd: the session's own project is the better guess.
    let project = if s.seed.project == crate::pipeline::project::UNKNOWN_PROJECT {
        &session.project
    } else {
        &s.seed.project
    };
    let replaced = conn.execute(
        "DELETE FROM pending_messages WHERE session_db_id = ?1 AND message_type = 'summarize' AND status = 'pending'",
        [session.id],
    )? > 0;
    conn.execute(
        "INSERT INTO pending_messages(session_db_id, content_session_id, message_type, prompt_number, project, last_assistant_message, created_at_epoch)
         VALUES (?1, ?2, 'summarize', ?3, ?4, ?5, ?6)",
        params![session.id, s.seed.key.content_session_id, session.prompt_counter, project, s.last_assistant_message, s.at],
    )?;
    let pending_id = conn.last_insert_rowid();
    record_event(
        conn,
        s.event_id.as_deref(),
        "summarize",
        session.id,
        Some(session.prompt_counter),
        s.at,
    )?;
    Ok(SummaryRequestOutcome::Queued {
        pending_id,
        session_db_id: session.id,
        replaced,
    })
}

#[cfg(test)]
pub(crate) fn sample_event(session: &str, tool_use_id: Option<&str>) -> ToolEventIn {
    use super::sessions::SessionKey;
    ToolEventIn {
        seed: SessionSeed {
            key: SessionKey::new("claude", session),
            project: "shop".into(),
            project_root: Some("/r".into()),
            transcript_path: None,
            custom_title: None,
        },
        tool_use_id: tool_use_id.map(String::from),
        tool_name: "Bash".into(),
        tool_input: r#"{"command":"cargo test"}"#.into(),
        tool_response: r#"{"stdout":"test result: ok. 3 passed","stderr":""}"#.into(),
        is_error: false,
        cwd: Some("/r".into()),
        agent_id: None,
        agent_type: None,
        duration_ms: None,
        input_chars: 24,
        response_chars: 40,
        truncated: 0,
        images_stripped: 0,
        redactions: 0,
        prompt_id: None,
        event_id: None,
        occurred_at: 1_000,
        now: 1_000,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_use_id_is_queued_once() {
        let conn = crate::store::test_conn();
        let a = ingest_tool_event(&conn, &sample_event("s1", Some("tu1"))).unwrap();
        assert!(matches!(a, ToolEventOutcome::Queued { .. }));
        let mut again = sample_event("s1", Some("tu1"));
        again.event_id = Some("other".into());
        assert_eq!(ingest_tool_event(&conn, &again).unwrap(), ToolEventOutcome::Duplicate);
        let n: i64 = conn.query_row("SELECT count(*) FROM pending_messages", [], |r| r.get(0)).unwrap();
        assert_eq!(n, 1);
        assert!(matches!(
            ingest_tool_event(&conn, &sample_event("s2", Some("tu1"))).unwrap(),
            ToolEventOutcome::Queued { .. }
        ));
    }

    #[test]
    fn newer_summary_request_replaces_the_unclaimed_one() {
        let conn = crate::store::test_conn();
        let seed = sample_event("s1", None).seed;
        let req = |m: &str| SummaryRequestIn {
            seed: seed.clone(),
            last_assistant_message: m.into(),
            event_id: None,
            at: 5,
        };
        assert!(matches!(
            ingest_summary_request(&conn, &req("a")).unwrap(),
            SummaryRequestOutcome::Queued { replaced: false, .. }
        ));
        assert!(matches!(
            ingest_summary_request(&conn, &req("b")).unwrap(),
            SummaryRequestOutcome::Queued { replaced: true, .. }
        ));
        let n: i64 = conn
            .query_row("SELECT count(*) FROM pending_messages WHERE message_type='summarize'", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(n, 1);
    }
}
