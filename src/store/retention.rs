//! Retention (docs/spec/storage.md §6): rules applied in chunks of ≤ 1,000 rows per transaction,
//! a dry run that only counts, and the closing incremental vacuum. `memd gc` and the worker's
//! periodic run use the same functions.

use rusqlite::{Connection, params};

use super::StoreError;
use crate::clock::day;
use crate::config::RetentionSettings;

pub const CHUNK: i64 = 1_000;
const DAY_MS: i64 = 86_400_000;
const INGEST_EVENTS_DAYS: i64 = 7;
const EMPTY_SESSION_DAYS: i64 = 30;
/// What memd showed a session is kept this long (the use check reads it when the session ends).
const INJECTIONS_DAYS: i64 = 90;
const MIB: i64 = 1024 * 1024;

/// Rows deleted (or, in a dry run, deletable) per rule, in the order rules run.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct RetentionReport {
    pub rules: Vec<(String, usize)>,
}

impl RetentionReport {
    fn add(&mut self, rule: &str, n: usize) {
        match self.rules.iter_mut().find(|(r, _)| r == rule) {
            Some((_, c)) => *c += n,
            None => self.rules.push((rule.to_string(), n)),
        }
    }
    pub fn total(&self) -> usize {
        self.rules.iter().map(|(_, n)| n).sum()
    }
    pub fn merge(&mut self, other: &RetentionReport) {
        for (rule, n) in &other.rules {
            self.add(rule, *n);
        }
    }
    /// `{"tool_uses": n, …}` in rule order.
    pub fn as_map(&self) -> serde_json::Map<String, serde_json::Value> {
        self.rules.iter().map(|(r, n)| (r.clone(), serde_json::Value::from(*n))).collect()
    }
}

/// A rule: name, table, key column and the condition (`?1` = cutoff epoch or day).
struct Rule {
    name: &'static str,
    table: &'static str,
    key: &'static str,
    cond: &'static str,
    cutoff: Option<rusqlite::types::Value>,
}

const UNREFERENCED_TOOL_USE: &str = "NOT EXISTS (SELECT 1 FROM pending_messages p WHERE p.tool_use_row_id = tool_uses.id)";

fn cutoff(now: i64, days: u64) -> Option<i64> {
    (days > 0).then(|| now - days as i64 * DAY_MS)
}

fn rules(r: &RetentionSettings, now: i64) -> Vec<Rule> {
    let v = |x: Option<i64>| x.map(rusqlite::types::Value::from);
    vec![
        Rule {
            name: "tool_uses",
            table: "tool_uses",
            key: "id",
            cond: "created_at_epoch < ?1 AND NOT EXISTS (SELECT 1 FROM pending_messages p WHERE p.tool_use_row_id = tool_uses.id)",
            cutoff: v(cutoff(now, r.tool_uses_days)),
        },
        Rule {
            name: "failed_pending",
            table: "pending_messages",
            key: "id",
            cond: "status = 'failed' AND coalesce(failed_at_epoch, created_at_epoch) < ?1",
            cutoff: v(cutoff(now, r.failed_days)),
        },
        Rule {
            name: "observations",
            table: "observations",
            key: "id",
            cond: "created_at_epoch < ?1 AND origin != 'manual' AND (last_reinforced_epoch IS NULL OR last_reinforced_epoch < ?1)",
            cutoff: v(cutoff(now, r.observations_days)),
        },
        Rule {
            name: "summaries",
            table: "session_summaries",
            key: "id",
            cond: "created_at_epoch < ?1",
            cutoff: v(cutoff(now, r.summaries_days)),
        },
        Rule {
            name: "prompts",
            table: "user_prompts",
            key: "id",
            cond: "created_at_epoch < ?1",
            cutoff: v(cutoff(now, r.prompts_days)),
        },
        Rule {
            name: "token_usage",
            table: "token_usage",
            key: "day",
            cond: "day < ?1",
            cutoff: cutoff(now, r.token_usage_days).map(|c| day(c).into()),
        },
        Rule {
            name: "ingest_events",
            table: "ingest_events",
            key: "event_id",
            cond: "created_at_epoch < ?1",
            cutoff: Some((now - INGEST_EVENTS_DAYS * DAY_MS).into()),
        },
        // The action index (issue 53) lives as long as the calls it was learned from.
        Rule {
            name: "action_failures",
            table: "action_failures",
            key: "(project, command_key)",
            cond: "failed_at_epoch < ?1",
            cutoff: v(cutoff(now, r.tool_uses_days)),
        },
        Rule {
            name: "action_file_notes",
            table: "action_file_notes",
            key: "(project, file, kind)",
            cond: "at_epoch < ?1",
            cutoff: v(cutoff(now, r.tool_uses_days)),
        },
        Rule {
            name: "injections",
            table: "injections",
            key: "id",
            cond: "at_epoch < ?1",
            cutoff: Some((now - INJECTIONS_DAYS * DAY_MS).into()),
        },
        Rule {
            name: "empty_sessions",
            table: "sdk_sessions",
            key: "id",
            cond: "last_event_epoch < ?1
               AND NOT EXISTS (SELECT 1 FROM user_prompts x WHERE x.session_db_id = sdk_sessions.id)
               AND NOT EXISTS (SELECT 1 FROM tool_uses x WHERE x.session_db_id = sdk_sessions.id)
               AND NOT EXISTS (SELECT 1 FROM pending_messages x WHERE x.session_db_id = sdk_sessions.id)
               AND NOT EXISTS (SELECT 1 FROM observations x WHERE x.memory_session_id = sdk_sessions.memory_session_id)
               AND NOT EXISTS (SELECT 1 FROM session_summaries x WHERE x.memory_session_id = sdk_sessions.memory_session_id)",
            cutoff: Some((now - EMPTY_SESSION_DAYS * DAY_MS).into()),
        },
    ]
}

/// Bytes held by live pages: `(page_count − freelist_count) × page_size`.
pub fn used_bytes(conn: &Connection) -> Result<i64, StoreError> {
    let p = |name: &str| conn.query_row(&format!("PRAGMA {name}"), [], |r| r.get::<_, i64>(0));
    Ok((p("page_count")? - p("freelist_count")?) * p("page_size")?)
}

/// Oldest unreferenced `tool_uses` rows whose payloads add up to the excess over 90 % of the cap.
fn size_excess_rows(conn: &Connection, max_mb: u64, limit: i64) -> Result<Vec<i64>, StoreError> {
    if max_mb == 0 {
        return Ok(Vec::new());
    }
    let cap = max_mb as i64 * MIB;
    let used = used_bytes(conn)?;
    if used <= cap {
        return Ok(Vec::new());
    }
    let mut excess = used - cap * 9 / 10;
    let mut stmt = conn.prepare(&format!(
        "SELECT id, length(tool_input) + length(tool_response) + 200 FROM tool_uses WHERE {UNREFERENCED_TOOL_USE} ORDER BY id LIMIT ?1"
    ))?;
    let mut ids = Vec::new();
    let mut rows = stmt.query([limit])?;
    while excess > 0
        && let Some(row) = rows.next()?
    {
        ids.push(row.get::<_, i64>(0)?);
        excess -= row.get::<_, i64>(1)?;
    }
    Ok(ids)
}

/// Counts what a run would delete; writes nothing.
pub fn dry_run(conn: &Connection, r: &RetentionSettings, now: i64) -> Result<RetentionReport, StoreError> {
    let mut report = RetentionReport::default();
    for rule in rules(r, now) {
        let Some(c) = &rule.cutoff else { continue };
        let n: i64 = conn.query_row(
            &format!("SELECT count(*) FROM {} WHERE {}", rule.table, rule.cond),
            params![c],
            |x| x.get(0),
        )?;
        report.add(rule.name, n as usize);
    }
    report.add("db_size", size_excess_rows(conn, r.db_max_mb, i64::MAX)?.len());
    Ok(report)
}

/// Deletes at most [`CHUNK`] rows per rule; call until the report's total is 0.
pub fn run_chunk(conn: &Connection, r: &RetentionSettings, now: i64) -> Result<RetentionReport, StoreError> {
    let mut report = RetentionReport::default();
    for rule in rules(r, now) {
        let Some(c) = &rule.cutoff else { continue };
        let sql = format!(
            "DELETE FROM {t} WHERE {k} IN (SELECT {cols} FROM {t} WHERE {cond} LIMIT {CHUNK})",
            t = rule.table,
            k = rule.key,
            cols = rule.key.trim_start_matches('(').trim_end_matches(')'),
            cond = rule.cond
        );
        report.add(rule.name, conn.execute(&sql, params![c])?);
    }
    let ids = size_excess_rows(conn, r.db_max_mb, CHUNK)?;
    for id in &ids {
        conn.execute("DELETE FROM tool_uses WHERE id = ?1", [id])?;
    }
    report.add("db_size", ids.len());
    Ok(report)
}

/// After the chunks: return up to 2,000 free pages and record the run.
pub fn finish(conn: &Connection, now: i64) -> Result<(), StoreError> {
    conn.execute_batch("PRAGMA incremental_vacuum(2000);")?;
    conn.execute(
        "INSERT INTO meta(key, value) VALUES ('last_retention_epoch', ?1) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [now.to_string()],
    )?;
    Ok(())
}

/// Records a completed `VACUUM` (run outside any transaction by the caller).
pub fn record_vacuum(conn: &Connection, now: i64) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO meta(key, value) VALUES ('last_vacuum_epoch', ?1) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [now.to_string()],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: i64 = DAY_MS;

    fn settings() -> RetentionSettings {
        RetentionSettings {
            tool_uses_days: 30,
            db_max_mb: 0,
            failed_days: 30,
            observations_days: 90,
            summaries_days: 0,
            prompts_days: 0,
            token_usage_days: 400,
            backup_interval_hours: 0,
            backup_keep: 3,
            freshness: true,
            consolidate_interval_hours: 24,
        }
    }

    #[test]
    fn s12_s13_rules_keep_referenced_manual_and_reinforced_rows() {
        let conn = crate::store::test_conn();
        let now = 1_000 * DAY;
        let old = now - 200 * DAY;
        conn.execute_batch(&format!(
            "INSERT INTO sdk_sessions(id, content_session_id, memory_session_id, project, started_at, started_at_epoch, last_event_epoch)
               VALUES (1, 's', 'm', 'p', '', {old}, {now});
             INSERT INTO tool_uses(id, session_db_id, content_session_id, platform_source, project, prompt_number, tool_name, tool_input,
               tool_response, input_chars, response_chars, occurred_at_epoch, created_at_epoch)
               VALUES (1, 1, 's', 'claude', 'p', 1, 'Bash', '{{}}', '{{}}', 2, 2, {old}, {old}),
                      (2, 1, 's', 'claude', 'p', 1, 'Bash', '{{}}', '{{}}', 2, 2, {old}, {old});
             INSERT INTO pending_messages(session_db_id, content_session_id, message_type, tool_use_row_id, created_at_epoch)
               VALUES (1, 's', 'observation', 2, {old});
             INSERT INTO observations(memory_session_id, project, platform_source, type, title, content_hash, origin, created_at, created_at_epoch, last_reinforced_epoch)
               VALUES ('m', 'p', 'claude', 'discovery', 'manual', 'h1', 'manual', '', {old}, NULL),
                      ('m', 'p', 'claude', 'discovery', 'reinforced', 'h2', 'observer', '', {old}, {}),
                      ('m', 'p', 'claude', 'discovery', 'stale', 'h3', 'observer', '', {old}, NULL);",
            now - DAY
        ))
        .unwrap();
        let dry = dry_run(&conn, &settings(), now).unwrap();
        assert_eq!(dry.rules.iter().find(|(r, _)| r == "tool_uses").map(|x| x.1), Some(1));
        assert_eq!(dry.rules.iter().find(|(r, _)| r == "observations").map(|x| x.1), Some(1));
        let done = run_chunk(&conn, &settings(), now).unwrap();
        assert_eq!(done, dry);
        assert_eq!(run_chunk(&conn, &settings(), now).unwrap().total(), 0);
        finish(&conn, now).unwrap();
        let titles: Vec<String> = conn
            .prepare("SELECT title FROM observations ORDER BY id")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(titles, ["manual", "reinforced"]);
        let left: i64 = conn.query_row("SELECT id FROM tool_uses", [], |r| r.get(0)).unwrap();
        assert_eq!(left, 2);
    }

    #[test]
    fn the_action_index_and_old_injections_expire() {
        let conn = crate::store::test_conn();
        let now = 1_000 * DAY;
        let old = now - 100 * DAY;
        conn.execute_batch(&format!(
            "INSERT INTO action_failures(project, command_key, command, failed_session, failed_at_epoch, open)
               VALUES ('p', 'cargo test', 'cargo test', 's', {old}, 1), ('p', 'cargo build', 'cargo build', 's', {now}, 1);
             INSERT INTO action_file_notes(project, file, kind, session, at_epoch) VALUES ('p', 'a.rs', 'edit_failed', 's', {old});
             INSERT INTO injections(content_session_id, project, source, item, at_epoch) VALUES ('s', 'p', 'index', '1', {old}), ('s', 'p', 'index', '2', {now});"
        ))
        .unwrap();
        let done = run_chunk(&conn, &settings(), now).unwrap();
        let n = |rule: &str| done.rules.iter().find(|(r, _)| r == rule).map(|x| x.1);
        assert_eq!(n("action_failures"), Some(1));
        assert_eq!(n("action_file_notes"), Some(1));
        assert_eq!(n("injections"), Some(1));
        let left: String = conn
            .query_row("SELECT group_concat(command_key) FROM action_failures", [], |r| r.get(0))
            .unwrap();
        assert_eq!(left, "cargo build");
    }
}
