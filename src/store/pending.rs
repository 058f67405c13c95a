//! `pending_messages`: claiming batches for the observer, releasing them on failure, start-up revert.

use rusqlite::{Connection, params};

use super::StoreError;
use crate::observer::types::ToolEvent;
pub use crate::observer::types::{BatchMeta, BatchWork, ClaimedBatch};

/// Batch bounds (docs/spec/pipeline.md §7).
#[derive(Debug, Clone, Copy)]
pub struct BatchLimits {
    pub max_events: usize,
    pub max_chars: usize,
}

#[derive(Debug, Clone)]
pub enum Claim {
    Batch(Box<ClaimedBatch>),
    /// Rows exist but none is due before this time (backoff).
    WaitUntil(i64),
    /// A batch of this session is already in flight.
    InFlight,
    Empty,
}

struct Row {
    id: i64,
    kind: String,
    tool_row: Option<i64>,
    prompt_number: i64,
    project: Option<String>,
    agent_id: Option<String>,
    agent_type: Option<String>,
    last_message: Option<String>,
    created: i64,
    due: i64,
    processing: bool,
    attempts: i64,
}

fn rows(conn: &Connection, session_db_id: i64) -> Result<Vec<Row>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, message_type, tool_use_row_id, prompt_number, project, agent_id, agent_type, last_assistant_message,
                created_at_epoch, next_attempt_epoch, status = 'processing' AS processing, attempts
         FROM pending_messages WHERE session_db_id = ?1 AND status != 'failed' ORDER BY id LIMIT 1000",
    )?;
    let it = stmt.query_map([session_db_id], |r| {
        Ok(Row {
            id: r.get("id")?,
            kind: r.get("message_type")?,
            tool_row: r.get("tool_use_row_id")?,
            prompt_number: r.get("prompt_number")?,
            project: r.get("project")?,
            agent_id: r.get("agent_id")?,
            agent_type: r.get("agent_type")?,
            last_message: r.get("last_assistant_message")?,
            created: r.get("created_at_epoch")?,
            due: r.get("next_attempt_epoch")?,
            processing: r.get("processing")?,
            attempts: r.get("attempts")?,
        })
    })?;
    Ok(it.collect::<Result<_, _>>()?)
}

/// Chooses and marks `processing` the next batch of a session (one in flight at a time).
pub fn claim_batch(conn: &Connection, session_db_id: i64, now: i64, limits: BatchLimits) -> Result<Claim, StoreError> {
    let rows = rows(conn, session_db_id)?;
    if rows.is_empty() {
        return Ok(Claim::Empty);
    }
    if rows.iter().any(|r| r.processing) {
        return Ok(Claim::InFlight);
    }
    let Some(first_due) = rows.iter().position(|r| r.due <= now) else {
        return Ok(Claim::WaitUntil(rows.iter().map(|r| r.due).min().unwrap_or(now)));
    };
    // A summary waits for every observation row of its prompt or earlier.
    let summary_ready = |s: &Row| !rows.iter().any(|r| r.kind == "observation" && r.prompt_number <= s.prompt_number);
    let first = &rows[first_due];
    let chosen: Vec<&Row> = if first.kind == "summarize" && summary_ready(first) {
        vec![first]
    } else {
        let Some(start) = rows.iter().position(|r| r.kind == "observation" && r.due <= now) else {
            return Ok(Claim::WaitUntil(
                rows.iter()
                    .filter(|r| r.kind == "observation")
                    .map(|r| r.due)
                    .min()
                    .unwrap_or(now + 1000),
            ));
        };
        let head = &rows[start];
        rows[start..]
            .iter()
            .take_while(|r| {
                r.kind == "observation"
                    && r.due <= now
                    && r.prompt_number == head.prompt_number
                    && r.project == head.project
                    && r.agent_id == head.agent_id
            })
            .take(limits.max_events)
            .collect()
    };
    let head = chosen[0];
    let session = session_meta(conn, session_db_id)?;
    let mut meta = BatchMeta {
        session_db_id,
        memory_session_id: session.0,
        content_session_id: session.1,
        platform_source: session.2,
        project: head.project.clone().unwrap_or(session.3),
        project_root: session.4.unwrap_or_default(),
        prompt_number: head.prompt_number,
        prompt_text: super::prompts::prompt_text(conn, session_db_id, head.prompt_number)?,
        agent_id: head.agent_id.clone(),
        agent_type: head.agent_type.clone(),
        pending_ids: Vec::new(),
        prompt_private: false,
        prompt_epoch: head.created,
        attempts: 0,
        oldest_epoch: head.created,
    };
    if let Some((private, at)) = prompt_flags(conn, session_db_id, head.prompt_number)? {
        meta.prompt_private = private;
        meta.prompt_epoch = at;
    }
    let work = if head.kind == "summarize" {
        meta.pending_ids.push(head.id);
        meta.attempts = head.attempts;
        let (observation_types, observation_titles) = titles(conn, &meta)?.into_iter().unzip();
        BatchWork::Summary {
            last_assistant_message: head.last_message.clone().unwrap_or_default(),
            observation_titles,
            observation_types,
        }
    } else {
        let mut events = Vec::new();
        let mut chars = 0usize;
        for r in chosen {
            let Some(ev) = r.tool_row.map(|id| load_event(conn, id)).transpose()?.flatten() else {
                // The evidence row is gone (retention): nothing to observe, but the row still belongs to this batch.
                meta.pending_ids.push(r.id);
                continue;
            };
            let size = ev.tool_input.to_string().len() + ev.tool_response.to_string().len();
            if !events.is_empty() && chars + size > limits.max_chars {
                break;
            }
            chars += size;
            meta.pending_ids.push(r.id);
            meta.attempts = meta.attempts.max(r.attempts);
            meta.oldest_epoch = meta.oldest_epoch.min(r.created);
            events.push(ev);
        }
        BatchWork::Observations(events)
    };
    for id in &meta.pending_ids {
        conn.execute(
            "UPDATE pending_messages SET status = 'processing', claimed_at_epoch = ?2 WHERE id = ?1",
            params![id, now],
        )?;
    }
    Ok(Claim::Batch(Box::new(ClaimedBatch { meta, work })))
}

type SessionMetaRow = (String, String, String, String, Option<String>);

fn session_meta(conn: &Connection, id: i64) -> Result<SessionMetaRow, StoreError> {
    Ok(conn.query_row(
        "SELECT memory_session_id, content_session_id, platform_source, project, project_root FROM sdk_sessions WHERE id = ?1",
        [id],
        |r| {
            Ok((
                r.get("memory_session_id")?,
                r.get("content_session_id")?,
                r.get("platform_source")?,
                r.get("project")?,
                r.get("project_root")?,
            ))
        },
    )?)
}

fn prompt_flags(conn: &Connection, session_db_id: i64, prompt_number: i64) -> Result<Option<(bool, i64)>, StoreError> {
    use rusqlite::OptionalExtension;
    Ok(conn
        .query_row(
            "SELECT is_private, created_at_epoch FROM user_prompts WHERE session_db_id = ?1 AND prompt_number = ?2",
            params![session_db_id, prompt_number],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?)
}

/// (type, title) of the newest 50 observations of the batch's prompt, oldest first.
fn titles(conn: &Connection, meta: &BatchMeta) -> Result<Vec<(String, String)>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT type, title FROM (SELECT type, coalesce(title, 'Untitled') AS title, created_at_epoch, id FROM observations
           WHERE memory_session_id = ?1 AND prompt_number IS ?2 ORDER BY created_at_epoch DESC, id DESC LIMIT 50)
         ORDER BY created_at_epoch, id",
    )?;
    let prompt = (meta.prompt_number > 0).then_some(meta.prompt_number);
    let it = stmt.query_map(params![meta.memory_session_id, prompt], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(it.collect::<Result<_, _>>()?)
}

fn load_event(conn: &Connection, tool_row: i64) -> Result<Option<ToolEvent>, StoreError> {
    use rusqlite::OptionalExtension;
    let raw = conn
        .query_row(
            "SELECT id, tool_name, tool_input, tool_response, is_error, cwd, occurred_at_epoch FROM tool_uses WHERE id = ?1",
            [tool_row],
            |r| {
                Ok((
                    r.get::<_, i64>("id")?,
                    r.get::<_, String>("tool_name")?,
                    r.get::<_, String>("tool_input")?,
                    r.get::<_, String>("tool_response")?,
                    r.get::<_, bool>("is_error")?,
                    r.get::<_, Option<String>>("cwd")?,
                    r.get::<_, i64>("occurred_at_epoch")?,
                ))
            },
        )
        .optional()?;
    Ok(raw.map(|(row_id, tool_name, input, response, is_error, cwd, at)| ToolEvent {
        row_id,
        tool_name,
        tool_input: serde_json::from_str(&input).unwrap_or(serde_json::Value::String(input)),
        tool_response: serde_json::from_str(&response).unwrap_or(serde_json::Value::String(response)),
        is_error,
        cwd,
        occurred_at_epoch: at,
    }))
}

/// Where released rows go.
#[derive(Debug, Clone)]
pub enum Release {
    /// Back to `pending`, claimable again at `retry_at`; `count_attempt` bumps `attempts`.
    Retry { retry_at: i64, count_attempt: bool },
    /// Parked as `failed` (visible in status, retryable by `memd retry`).
    Fail,
}

pub fn release_batch(conn: &Connection, ids: &[i64], how: &Release, error: &str, now: i64) -> Result<(), StoreError> {
    for id in ids {
        match how {
            Release::Retry { retry_at, count_attempt } => conn.execute(
                "UPDATE pending_messages SET status = 'pending', attempts = attempts + ?2, last_error = ?3, next_attempt_epoch = ?4,
                   claimed_at_epoch = NULL WHERE id = ?1",
                params![id, i64::from(*count_attempt), error, retry_at],
            )?,
            Release::Fail => conn.execute(
                "UPDATE pending_messages SET status = 'failed', last_error = ?2, failed_at_epoch = ?3 WHERE id = ?1",
                params![id, error, now],
            )?,
        };
    }
    Ok(())
}

/// At start (and when a session actor restarts): claimed rows of a dead batch become claimable again.
pub fn revert_processing(conn: &Connection) -> Result<usize, StoreError> {
    Ok(conn.execute(
        "UPDATE pending_messages SET status = 'pending', claimed_at_epoch = NULL WHERE status = 'processing'",
        [],
    )?)
}

pub fn revert_session(conn: &Connection, session_db_id: i64) -> Result<usize, StoreError> {
    Ok(conn.execute(
        "UPDATE pending_messages SET status = 'pending', claimed_at_epoch = NULL WHERE status = 'processing' AND session_db_id = ?1",
        [session_db_id],
    )?)
}

/// (queue depth not in flight, in flight) of a session.
pub fn depth(conn: &Connection, session_db_id: i64) -> Result<(i64, i64), StoreError> {
    Ok(conn.query_row(
        "SELECT coalesce(sum(status = 'pending'), 0), coalesce(sum(status = 'processing'), 0) FROM pending_messages WHERE session_db_id = ?1",
        [session_db_id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?)
}
