//! `POST /api/pending/retry`: `failed` pending rows back to `pending` with their attempts reset, and
//! their sessions out of `failed` (docs/spec/api.md §6.4).

use rusqlite::{Connection, params_from_iter};

use super::StoreError;
use super::sessions::SessionKey;

/// What was requeued: row count and the sessions (db id, key) to start again.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Requeued {
    pub rows: usize,
    pub sessions: Vec<(i64, SessionKey)>,
}

/// Requeues `failed` rows, all of them or those of one session and/or with the given ids.
pub fn requeue_failed(conn: &Connection, content_session_id: Option<&str>, ids: Option<&[i64]>) -> Result<Requeued, StoreError> {
    let mut sql = String::from(
        "UPDATE pending_messages SET status = 'pending', attempts = 0, last_error = NULL, next_attempt_epoch = 0,
           failed_at_epoch = NULL, claimed_at_epoch = NULL
         WHERE status = 'failed'",
    );
    let mut args: Vec<rusqlite::types::Value> = Vec::new();
    if let Some(c) = content_session_id {
        sql.push_str(" AND content_session_id = ?");
        args.push(c.to_string().into());
    }
    if let Some(ids) = ids {
        let marks = vec!["?"; ids.len()].join(",");
        sql.push_str(&format!(" AND id IN ({marks})"));
        args.extend(ids.iter().map(|i| rusqlite::types::Value::from(*i)));
    }
    sql.push_str(" RETURNING session_db_id");
    let mut touched: Vec<i64> = Vec::new();
    let mut rows = 0;
    {
        let mut stmt = conn.prepare(&sql)?;
        let it = stmt.query_map(params_from_iter(args), |r| r.get::<_, i64>(0))?;
        for sid in it {
            let sid = sid?;
            rows += 1;
            if !touched.contains(&sid) {
                touched.push(sid);
            }
        }
    }
    let mut sessions = Vec::with_capacity(touched.len());
    for sid in touched {
        conn.execute(
            "UPDATE sdk_sessions SET status = 'active', failure_reason = NULL WHERE id = ?1 AND status = 'failed'",
            [sid],
        )?;
        let key = conn.query_row(
            "SELECT platform_source, content_session_id FROM sdk_sessions WHERE id = ?1",
            [sid],
            |r| Ok(SessionKey::new(r.get::<_, String>(0)?, r.get::<_, String>(1)?)),
        )?;
        sessions.push((sid, key));
    }
    Ok(Requeued { rows, sessions })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requeues_only_failed_rows_matching_the_filter() {
        let conn = crate::store::test_conn();
        conn.execute_batch(
            "INSERT INTO sdk_sessions(id, content_session_id, memory_session_id, project, status, started_at, started_at_epoch, last_event_epoch)
               VALUES (1, 'a', 'memd-claude-a', 'p', 'failed', '', 0, 0), (2, 'b', 'memd-claude-b', 'p', 'active', '', 0, 0);
             INSERT INTO pending_messages(session_db_id, content_session_id, message_type, status, attempts, created_at_epoch)
               VALUES (1, 'a', 'summarize', 'failed', 3, 0), (2, 'b', 'observation', 'failed', 3, 0), (2, 'b', 'observation', 'pending', 0, 0);",
        )
        .unwrap();
        let r = requeue_failed(&conn, Some("a"), None).unwrap();
        assert_eq!(r.rows, 1);
        assert_eq!(r.sessions, vec![(1, SessionKey::new("claude", "a"))]);
        let status: String = conn
            .query_row("SELECT status FROM sdk_sessions WHERE id = 1", [], |r| r.get(0))
            .unwrap();
        assert_eq!(status, "active");
        let all = requeue_failed(&conn, None, None).unwrap();
        assert_eq!(all.rows, 1);
        assert_eq!(requeue_failed(&conn, None, Some(&[])).unwrap().rows, 0);
    }
}
