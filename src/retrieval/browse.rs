//! The viewer's lists (docs/spec/viewer.md §3): sessions of a project, one session's prompts,
//! observations and summary in order, keyset-paged observation lists (usable at 100,000 rows:
//! every page is an index range, never an OFFSET scan), the raw tool uses an observation was made
//! from, and token usage per day. Plain functions over a read-only connection.

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, OptionalExtension, params};

use super::RetrievalError;
pub use super::browse_rows::{DayUsage, Listed, SessionDetail, SessionHead, SessionItem, SessionRow, ToolUse, ToolUses, Usage};
use super::records::{OBS_COLS, Observation, PROMPT_COLS, Prompt, SUMMARY_COLS, Summary};

/// Longest tool input/response text a tool-use row carries to a client (chars).
pub const TOOL_TEXT_MAX: usize = 20_000;
/// Most records of one kind a session detail carries (the rest: search or the paged lists).
pub const SESSION_ITEMS_MAX: i64 = 1_000;

/// A page of a newest-first list: rows with id below `before` (None = from the newest).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    pub before: Option<i64>,
    pub limit: i64,
}

/// Observations newest first, optionally of one project and/or one session (memory session id).
pub fn observations_page(
    conn: &Connection,
    project: Option<&str>,
    memory_session: Option<&str>,
    page: Page,
) -> Result<Listed<Observation>, RetrievalError> {
    let mut sql = format!("SELECT {OBS_COLS} FROM observations o WHERE o.id < ?1");
    let mut p: Vec<SqlValue> = vec![SqlValue::Integer(page.before.unwrap_or(i64::MAX))];
    if let Some(project) = project {
        p.push(SqlValue::Text(project.into()));
        sql.push_str(&format!(" AND (o.project = ?{n} OR o.merged_into_project = ?{n})", n = p.len()));
    }
    if let Some(m) = memory_session {
        p.push(SqlValue::Text(m.into()));
        sql.push_str(&format!(" AND o.memory_session_id = ?{}", p.len()));
    }
    p.push(SqlValue::Integer(page.limit));
    sql.push_str(&format!(" ORDER BY o.id DESC LIMIT ?{}", p.len()));
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows: Vec<Observation> = stmt
        .query_map(rusqlite::params_from_iter(p), Observation::from_row)?
        .collect::<Result<_, _>>()?;
    let next = (rows.len() as i64 == page.limit).then(|| rows.last().map(|o| o.id)).flatten();
    Ok(Listed {
        items: rows,
        next_before: next,
    })
}

/// A session's title for a person: its custom title, else its first prompt, else its newest
/// summary's request (NULL when it has none of them: the page shows the session id).
const SESSION_TITLE: &str = "coalesce(nullif(s.custom_title, ''), nullif(s.user_prompt, ''),
    (SELECT nullif(ss.request, '') FROM session_summaries ss WHERE ss.memory_session_id = s.memory_session_id ORDER BY ss.id DESC LIMIT 1))";

/// Sessions newest first, with their counts.
pub fn sessions_page(conn: &Connection, project: Option<&str>, page: Page) -> Result<Listed<SessionRow>, RetrievalError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT s.id, s.content_session_id, s.memory_session_id, s.platform_source, s.project, s.user_prompt, s.custom_title,
                s.status, s.started_at_epoch, s.last_event_epoch,
                (SELECT count(*) FROM observations o WHERE o.memory_session_id = s.memory_session_id) AS observations,
                (SELECT count(*) FROM user_prompts p WHERE p.session_db_id = s.id) AS prompts, {SESSION_TITLE} AS title
         FROM sdk_sessions s WHERE s.id < ?1 AND (?2 IS NULL OR s.project = ?2) ORDER BY s.id DESC LIMIT ?3"
    ))?;
    let rows: Vec<SessionRow> = stmt
        .query_map(params![page.before.unwrap_or(i64::MAX), project, page.limit], |r| {
            Ok(SessionRow {
                id: r.get("id")?,
                content_session_id: r.get("content_session_id")?,
                memory_session_id: r.get("memory_session_id")?,
                platform_source: r.get("platform_source")?,
                project: r.get("project")?,
                user_prompt: r.get("user_prompt")?,
                custom_title: r.get("custom_title")?,
                status: r.get("status")?,
                started_at_epoch: r.get("started_at_epoch")?,
                last_event_epoch: r.get("last_event_epoch")?,
                observations: r.get("observations")?,
                prompts: r.get("prompts")?,
                title: r.get("title")?,
            })
        })?
        .collect::<Result<_, _>>()?;
    let next = (rows.len() as i64 == page.limit).then(|| rows.last().map(|s| s.id)).flatten();
    Ok(Listed {
        items: rows,
        next_before: next,
    })
}

/// One session: its row and its prompts, observations and summaries in the order they were stored.
pub fn session_detail(conn: &Connection, id: i64) -> Result<SessionDetail, RetrievalError> {
    let head: Option<SessionHead> = conn
        .query_row(
            &format!(
                "SELECT content_session_id, memory_session_id, platform_source, project, status, {SESSION_TITLE} AS title, started_at_epoch
                 FROM sdk_sessions s WHERE id = ?1"
            ),
            [id],
            |r| {
                Ok(SessionHead {
                    id,
                    content_session_id: r.get("content_session_id")?,
                    memory_session_id: r.get("memory_session_id")?,
                    platform_source: r.get("platform_source")?,
                    project: r.get("project")?,
                    status: r.get("status")?,
                    title: r.get("title")?,
                    started_at_epoch: r.get("started_at_epoch")?,
                })
            },
        )
        .optional()?;
    let Some(session) = head else {
        return Err(RetrievalError::NotFound(format!("Session {id} not found")));
    };
    let memory = session.memory_session_id.clone();
    let mut items: Vec<(i64, u8, i64, SessionItem)> = Vec::new();
    let cap = SESSION_ITEMS_MAX as usize;
    let sql = format!("SELECT {PROMPT_COLS} FROM user_prompts p WHERE p.session_db_id = ?1 ORDER BY p.id LIMIT ?2");
    let prompts: Vec<Prompt> = conn
        .prepare(&sql)?
        .query_map(params![id, SESSION_ITEMS_MAX + 1], Prompt::from_row)?
        .collect::<Result<_, _>>()?;
    let sql = format!("SELECT {OBS_COLS} FROM observations o WHERE o.memory_session_id = ?1 ORDER BY o.id LIMIT ?2");
    let observations: Vec<Observation> = conn
        .prepare(&sql)?
        .query_map(params![memory, SESSION_ITEMS_MAX + 1], Observation::from_row)?
        .collect::<Result<_, _>>()?;
    let truncated = prompts.len() > cap || observations.len() > cap;
    for p in prompts.into_iter().take(cap) {
        items.push((p.created_at_epoch, 0, p.id, SessionItem::Prompt(p)));
    }
    for o in observations.into_iter().take(cap) {
        items.push((o.created_at_epoch, 1, o.id, SessionItem::Observation(Box::new(o))));
    }
    let sql = format!("SELECT {SUMMARY_COLS} FROM session_summaries s WHERE s.memory_session_id = ?1 ORDER BY s.id LIMIT 100");
    for s in conn.prepare(&sql)?.query_map([&memory], Summary::from_row)? {
        let s = s?;
        items.push((s.created_at_epoch, 2, s.id, SessionItem::Summary(Box::new(s))));
    }
    items.sort_by_key(|(at, k, id, _)| (*at, *k, *id));
    Ok(SessionDetail {
        session,
        items: items.into_iter().map(|(_, _, _, v)| v).collect(),
        truncated,
    })
}

fn bounded(s: String) -> String {
    match s.char_indices().nth(TOOL_TEXT_MAX) {
        Some((i, _)) => format!("{}… [{} more chars]", &s[..i], s[i..].chars().count()),
        None => s,
    }
}

/// The raw tool uses observation `id` was made from (as stored: tags stripped, secrets redacted).
pub fn tool_uses_of(conn: &Connection, id: i64) -> Result<ToolUses, RetrievalError> {
    let exists = conn
        .query_row("SELECT 1 FROM observations WHERE id = ?1", [id], |_| Ok(()))
        .optional()?
        .is_some();
    if !exists {
        return Err(RetrievalError::NotFound(format!("Observation #{id} not found")));
    }
    let mut stmt = conn.prepare_cached(
        "SELECT t.id, t.tool_use_id, t.tool_name, t.tool_input, t.tool_response, t.is_error, t.cwd, t.prompt_number,
                t.agent_type, t.duration_ms, t.truncated, t.redactions, t.occurred_at_epoch, t.content_session_id
         FROM observation_sources os JOIN tool_uses t ON t.id = os.tool_use_row_id
         WHERE os.observation_id = ?1 ORDER BY t.occurred_at_epoch, t.id LIMIT 200",
    )?;
    let items: Vec<ToolUse> = stmt
        .query_map([id], |r| {
            Ok(ToolUse {
                id: r.get("id")?,
                tool_use_id: r.get("tool_use_id")?,
                tool_name: r.get("tool_name")?,
                tool_input: bounded(r.get("tool_input")?),
                tool_response: bounded(r.get("tool_response")?),
                is_error: r.get::<_, i64>("is_error")? != 0,
                cwd: r.get("cwd")?,
                prompt_number: r.get("prompt_number")?,
                agent_type: r.get("agent_type")?,
                duration_ms: r.get("duration_ms")?,
                truncated: r.get::<_, i64>("truncated")? != 0,
                redactions: r.get("redactions")?,
                occurred_at_epoch: r.get("occurred_at_epoch")?,
                content_session_id: r.get("content_session_id")?,
            })
        })?
        .collect::<Result<_, _>>()?;
    Ok(ToolUses { observation: id, items })
}

/// Tokens per day and provider for the last `days` days (newest last).
pub fn usage_by_day(conn: &Connection, days: i64, today: &str) -> Result<Usage, RetrievalError> {
    let mut stmt = conn.prepare_cached(
        "SELECT day, provider, sum(calls) AS calls, sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
                sum(failures) AS failures
         FROM token_usage WHERE day > date(?1, '-' || ?2 || ' days') GROUP BY day, provider ORDER BY day, provider",
    )?;
    let items: Vec<DayUsage> = stmt
        .query_map(params![today, days], |r| {
            Ok(DayUsage {
                day: r.get("day")?,
                provider: r.get("provider")?,
                calls: r.get("calls")?,
                input_tokens: r.get("input_tokens")?,
                output_tokens: r.get("output_tokens")?,
                failures: r.get("failures")?,
            })
        })?
        .collect::<Result<_, _>>()?;
    Ok(Usage { days, items })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_conn;

    fn obs(conn: &Connection, memory: &str, title: &str) -> i64 {
        conn.execute(
            "INSERT INTO observations (memory_session_id, project, platform_source, type, title, content_hash, origin, created_at, created_at_epoch)
             VALUES (?1, 'acme', 'claude', 'discovery', ?2, ?2, 'manual', 'x', 1)",
            params![memory, title],
        )
        .unwrap();
        conn.last_insert_rowid()
    }

    fn session(conn: &Connection, content: &str) -> i64 {
        conn.execute(
            "INSERT INTO sdk_sessions (content_session_id, memory_session_id, project, started_at, started_at_epoch, last_event_epoch)
             VALUES (?1, 'm-' || ?1, 'acme', 'x', 0, 0)",
            [content],
        )
        .unwrap();
        conn.last_insert_rowid()
    }

    #[test]
    fn pages_walk_every_row_once_newest_first() {
        let conn = test_conn();
        session(&conn, "a");
        let ids: Vec<i64> = (0..7).map(|i| obs(&conn, "m-a", &format!("t{i}"))).collect();
        let mut seen = Vec::new();
        let mut before = None;
        loop {
            let page = observations_page(&conn, Some("acme"), None, Page { before, limit: 3 }).unwrap();
            seen.extend(page.items.iter().map(|o| o.id));
            match page.next_before {
                Some(n) => before = Some(n),
                None => break,
            }
        }
        assert_eq!(seen, ids.iter().rev().copied().collect::<Vec<_>>());
        let none = observations_page(&conn, Some("other"), None, Page { before: None, limit: 3 }).unwrap();
        assert!(none.items.is_empty());
    }

    #[test]
    fn a_session_lists_its_records_and_an_observation_its_tool_uses() {
        let conn = test_conn();
        let sid = session(&conn, "a");
        let o = obs(&conn, "m-a", "first");
        conn.execute(
            "INSERT INTO tool_uses (session_db_id, content_session_id, platform_source, project, prompt_number, tool_name,
               tool_input, tool_response, input_chars, response_chars, occurred_at_epoch, created_at_epoch)
             VALUES (?1, 'a', 'claude', 'acme', 1, 'Bash', '{\"command\":\"ls\"}', 'ok', 1, 1, 1, 1)",
            [sid],
        )
        .unwrap();
        let t = conn.last_insert_rowid();
        conn.execute("INSERT INTO observation_sources VALUES (?1, ?2)", [o, t]).unwrap();
        let d = session_detail(&conn, sid).unwrap().to_json();
        assert_eq!(d["items"][0]["title"], "first");
        assert_eq!(d["items"][0]["kind"], "observation");
        let uses = tool_uses_of(&conn, o).unwrap();
        assert_eq!(uses.items[0].tool_name, "Bash");
        assert!(matches!(tool_uses_of(&conn, 999), Err(RetrievalError::NotFound(_))));
        assert!(matches!(session_detail(&conn, 999), Err(RetrievalError::NotFound(_))));
        let s = sessions_page(&conn, None, Page { before: None, limit: 10 }).unwrap();
        assert_eq!(s.items[0].observations, 1);
        assert_eq!(s.to_json()["items"][0]["observations"], 1);
    }

    #[test]
    fn long_tool_texts_are_cut() {
        let long = "x".repeat(TOOL_TEXT_MAX + 10);
        assert!(bounded(long).ends_with("[10 more chars]"));
        assert_eq!(bounded("short".into()), "short");
    }
}
