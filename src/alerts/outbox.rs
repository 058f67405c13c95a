//! The alert outbox (issue 39, table `alert_outbox`, schema v9): observations of the alerting
//! types are queued once (a cursor in `meta` remembers the last id scanned; the first scan only
//! sets it, so turning alerts on never floods the webhook with history), then delivered with
//! retries. A row is marked sent only after the webhook answered 2xx.

use rusqlite::{Connection, OptionalExtension, params, params_from_iter};
use serde::Serialize;

use crate::store::StoreError;
use crate::store::record::record;

const CURSOR: &str = "alerts_cursor";

/// An outbox row due for delivery, with what the alert says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DueAlert {
    pub observation_id: i64,
    pub attempts: i64,
    /// None when the observation was forgotten since it was queued.
    pub observation: Option<AlertObservation>,
}

record! {
    /// What an alert says of its observation (the `SELECT` of [`due`] names each column).
    #[derive(Eq)]
    pub struct AlertObservation {
        obs_type: String = "type",
        title: String = "title",
        narrative: String = "narrative",
        project: String = "project",
        project_root: Option<String> = "project_root",
        created_at: String = "created_at",
    }
}

/// How one delivery attempt ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivery {
    Sent,
    /// Not sent on purpose (forgotten, an excluded project).
    Skipped(String),
    /// Failed: retried at `next_at` unless `give_up`.
    Failed {
        error: String,
        next_at: i64,
        give_up: bool,
    },
}

/// The outbox's figures for `memd status`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct AlertFigures {
    pub pending: i64,
    pub sent: i64,
    pub failed: i64,
    pub skipped: i64,
    pub last_error: Option<String>,
    pub last_sent_at_epoch: Option<i64>,
}

/// Queues the observations of `types` newer than the cursor; answers how many were queued.
pub fn enqueue(conn: &Connection, types: &[String], now: i64) -> Result<usize, StoreError> {
    let top: i64 = conn.query_row("SELECT coalesce(max(id), 0) FROM observations", [], |r| r.get(0))?;
    let cursor: Option<i64> = conn
        .query_row("SELECT value FROM meta WHERE key = ?1", [CURSOR], |r| r.get::<_, String>(0))
        .optional()?
        .and_then(|v| v.parse().ok());
    let mut queued = 0;
    if let Some(from) = cursor.filter(|c| *c < top)
        && !types.is_empty()
    {
        let marks = vec!["?"; types.len()].join(", ");
        let sql = format!(
            "INSERT OR IGNORE INTO alert_outbox (observation_id, next_attempt_epoch, created_at_epoch)
             SELECT id, {now}, {now} FROM observations
             WHERE id > {from} AND id <= {top} AND quarantined = 0 AND type IN ({marks})"
        );
        queued = conn.execute(&sql, params_from_iter(types.iter()))?;
    }
    if cursor != Some(top) {
        conn.execute(
            "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            params![CURSOR, top.to_string()],
        )?;
    }
    Ok(queued)
}

/// Pending rows due at `now`, oldest first.
pub fn due(conn: &Connection, now: i64, limit: usize) -> Result<Vec<DueAlert>, rusqlite::Error> {
    let mut stmt = conn.prepare_cached(
        "SELECT a.observation_id, a.attempts, o.type, coalesce(o.title, '') AS title, coalesce(o.narrative, '') AS narrative,
                o.project, s.project_root, o.created_at, o.id IS NOT NULL AS present
         FROM alert_outbox a LEFT JOIN observations o ON o.id = a.observation_id
         LEFT JOIN sdk_sessions s ON s.memory_session_id = o.memory_session_id
         WHERE a.status = 'pending' AND a.next_attempt_epoch <= ?1 ORDER BY a.observation_id LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![now, limit as i64], |r| {
        let present: bool = r.get("present")?;
        Ok(DueAlert {
            observation_id: r.get("observation_id")?,
            attempts: r.get("attempts")?,
            observation: match present {
                true => Some(AlertObservation::from_row(r)?),
                false => None,
            },
        })
    })?;
    rows.collect()
}

/// Records how an attempt ended.
pub fn record(conn: &Connection, observation_id: i64, d: &Delivery, now: i64) -> Result<(), StoreError> {
    match d {
        Delivery::Sent => conn.execute(
            "UPDATE alert_outbox SET status = 'sent', attempts = attempts + 1, sent_at_epoch = ?2, last_error = NULL
             WHERE observation_id = ?1",
            params![observation_id, now],
        ),
        Delivery::Skipped(why) => conn.execute(
            "UPDATE alert_outbox SET status = 'skipped', last_error = ?2 WHERE observation_id = ?1",
            params![observation_id, why],
        ),
        Delivery::Failed { error, next_at, give_up } => conn.execute(
            "UPDATE alert_outbox SET status = CASE WHEN ?4 THEN 'failed' ELSE 'pending' END, attempts = attempts + 1,
                 next_attempt_epoch = ?3, last_error = ?2 WHERE observation_id = ?1",
            params![observation_id, error, next_at, give_up],
        ),
    }?;
    Ok(())
}

pub fn figures(conn: &Connection) -> Result<AlertFigures, rusqlite::Error> {
    let mut f = AlertFigures::default();
    let mut stmt = conn.prepare_cached("SELECT status, count(*) FROM alert_outbox GROUP BY status")?;
    for row in stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))? {
        let (status, n) = row?;
        match status.as_str() {
            "pending" => f.pending = n,
            "sent" => f.sent = n,
            "failed" => f.failed = n,
            _ => f.skipped = n,
        }
    }
    f.last_error = conn
        .query_row(
            "SELECT last_error FROM alert_outbox WHERE last_error IS NOT NULL AND status IN ('pending', 'failed')
             ORDER BY next_attempt_epoch DESC LIMIT 1",
            [],
            |r| r.get(0),
        )
        .optional()?;
    f.last_sent_at_epoch = conn.query_row("SELECT max(sent_at_epoch) FROM alert_outbox", [], |r| r.get(0))?;
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::memory::{ManualMemory, save_memory};

    fn save(conn: &Connection, obs_type: &str, text: &str) -> i64 {
        let m = ManualMemory {
            obs_type: obs_type.into(),
            ..ManualMemory::by_user("shop", text, text)
        };
        save_memory(conn, &m, 1_000).unwrap().id
    }

    #[test]
    fn the_first_scan_only_sets_the_cursor_then_each_alerting_observation_is_queued_once() {
        let c = crate::store::test_conn();
        let types = vec!["security_alert".to_string(), "sensitive".to_string()];
        save(&c, "security_alert", "history before alerts were on");
        assert_eq!(enqueue(&c, &types, 1).unwrap(), 0, "history is not sent");
        let a = save(&c, "security_alert", "token committed to the repo");
        save(&c, "discovery", "not an alert");
        let s = save(&c, "sensitive", "customer emails in a log");
        assert_eq!(enqueue(&c, &types, 2).unwrap(), 2);
        assert_eq!(enqueue(&c, &types, 3).unwrap(), 0, "queued once");
        let due_now = due(&c, 2, 10).unwrap();
        assert_eq!(due_now.iter().map(|d| d.observation_id).collect::<Vec<_>>(), [a, s]);
        assert_eq!(due_now[0].observation.as_ref().unwrap().title, "token committed to the repo");

        let err = Delivery::Failed {
            error: "http 500".into(),
            next_at: 100,
            give_up: false,
        };
        record(&c, a, &err, 2).unwrap();
        record(&c, s, &Delivery::Sent, 2).unwrap();
        assert!(due(&c, 50, 10).unwrap().is_empty(), "retried only when due");
        assert_eq!(due(&c, 100, 10).unwrap()[0].attempts, 1);
        let f = figures(&c).unwrap();
        assert_eq!((f.pending, f.sent, f.last_error.as_deref()), (1, 1, Some("http 500")));
        let gone = Delivery::Failed {
            error: "http 500".into(),
            next_at: 200,
            give_up: true,
        };
        record(&c, a, &gone, 100).unwrap();
        assert!(due(&c, 1_000, 10).unwrap().is_empty(), "given up");
        assert_eq!(figures(&c).unwrap().failed, 1);
    }
}
