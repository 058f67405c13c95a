//! The figures `memd stats` and the viewer's status page draw: captured tool calls per day,
//! memories per project, LLM tokens per day (apart from local embedding work, which costs
//! nothing), over the last `days` days with every day present (0 where nothing happened), so a
//! chart's bars line up with its axis.

use rusqlite::{Connection, params};
use serde::Serialize;

use super::RetrievalError;
use crate::clock::day;

const DAY_MS: i64 = 86_400_000;

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DayCount {
    pub day: String,
    pub count: i64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ProjectCount {
    pub project: String,
    pub count: i64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Stats {
    pub days: i64,
    /// Tool calls captured per day, oldest first.
    pub captures_per_day: Vec<DayCount>,
    /// Observations and manual memories per project (largest first; forgotten ones are gone).
    pub memories_per_project: Vec<ProjectCount>,
    /// Observer tokens (input + output) per day: what counts against the daily budget.
    pub llm_tokens_per_day: Vec<DayCount>,
    /// Tokens the local embedding model read per day: no cost, shown apart.
    pub embedding_tokens_per_day: Vec<DayCount>,
}

/// The `days` UTC days ending with the day of `now`, oldest first.
pub fn day_range(now: i64, days: i64) -> Vec<String> {
    (0..days).rev().map(|back| day(now - back * DAY_MS)).collect()
}

/// Epoch ms of the start of the UTC day `days - 1` days before the day of `now`.
fn range_start(now: i64, days: i64) -> i64 {
    let today_start = now.div_euclid(DAY_MS) * DAY_MS;
    today_start - (days - 1) * DAY_MS
}

fn fill(range: &[String], rows: Vec<(String, i64)>) -> Vec<DayCount> {
    range
        .iter()
        .map(|d| DayCount {
            day: d.clone(),
            count: rows.iter().find(|(r, _)| r == d).map_or(0, |(_, n)| *n),
        })
        .collect()
}

fn pairs(conn: &Connection, sql: &str, p: impl rusqlite::Params) -> Result<Vec<(String, i64)>, RetrievalError> {
    let mut stmt = conn.prepare_cached(sql)?;
    let rows = stmt.query_map(p, |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

pub fn stats(conn: &Connection, now: i64, days: i64) -> Result<Stats, RetrievalError> {
    let range = day_range(now, days);
    let start = range_start(now, days);
    let captures = pairs(
        conn,
        "SELECT date(created_at_epoch / 1000, 'unixepoch'), count(*) FROM tool_uses WHERE created_at_epoch >= ?1 GROUP BY 1",
        params![start],
    )?;
    let first = range.first().cloned().unwrap_or_default();
    let tokens = |embeddings: bool| {
        let cond = if embeddings {
            "provider = 'embeddings'"
        } else {
            "provider NOT IN ('extractive', 'embeddings')"
        };
        let sql = format!("SELECT day, sum(input_tokens + output_tokens) FROM token_usage WHERE day >= ?1 AND {cond} GROUP BY day");
        pairs(conn, &sql, params![first])
    };
    let projects = pairs(
        conn,
        "SELECT project, count(*) FROM observations GROUP BY project ORDER BY 2 DESC, 1 LIMIT 20",
        [],
    )?;
    Ok(Stats {
        days,
        captures_per_day: fill(&range, captures),
        memories_per_project: projects
            .into_iter()
            .map(|(project, count)| ProjectCount { project, count })
            .collect(),
        llm_tokens_per_day: fill(&range, tokens(false)?),
        embedding_tokens_per_day: fill(&range, tokens(true)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_conn;

    const NOW: i64 = 1_796_400_000_000; // 2026-12-04T…Z

    #[test]
    fn every_day_is_present_and_embedding_tokens_are_apart() {
        let conn = test_conn();
        let today = day(NOW);
        let yesterday = day(NOW - DAY_MS);
        for (d, provider, tokens) in [
            (&today, "anthropic", 1200),
            (&today, "embeddings", 900),
            (&yesterday, "extractive", 50),
        ] {
            conn.execute(
                "INSERT INTO token_usage(day, provider, model, calls, input_tokens, output_tokens) VALUES (?1, ?2, 'm', 1, ?3, 0)",
                params![d, provider, tokens],
            )
            .unwrap();
        }
        let s = stats(&conn, NOW, 7).unwrap();
        assert_eq!(s.captures_per_day.len(), 7);
        assert_eq!(s.captures_per_day.last().unwrap().day, today);
        assert!(s.captures_per_day.iter().all(|d| d.count == 0));
        let llm: Vec<i64> = s.llm_tokens_per_day.iter().map(|d| d.count).collect();
        assert_eq!(llm, vec![0, 0, 0, 0, 0, 0, 1200]);
        assert_eq!(s.embedding_tokens_per_day.last().unwrap().count, 900);
        assert!(s.memories_per_project.is_empty());
    }

    #[test]
    fn captures_are_counted_by_their_day_and_memories_by_project() {
        let conn = test_conn();
        let mut ev = crate::store::tool_events::sample_event("s1", Some("t1"));
        (ev.now, ev.occurred_at) = (NOW - DAY_MS, NOW - DAY_MS);
        crate::store::tool_events::ingest_tool_event(&conn, &ev).unwrap();
        ev.tool_use_id = Some("t2".into());
        (ev.now, ev.occurred_at) = (NOW - 30 * DAY_MS, NOW - 30 * DAY_MS);
        crate::store::tool_events::ingest_tool_event(&conn, &ev).unwrap();
        for (project, title) in [("shop", "a"), ("shop", "b"), ("web", "c")] {
            let m = crate::store::memory::ManualMemory::by_user(project, title, title);
            crate::store::memory::save_memory(&conn, &m, NOW).unwrap();
        }
        let s = stats(&conn, NOW, 7).unwrap();
        let counts: Vec<i64> = s.captures_per_day.iter().map(|d| d.count).collect();
        assert_eq!(counts, vec![0, 0, 0, 0, 0, 1, 0], "the 30-day-old call is outside the range");
        let projects: Vec<(&str, i64)> = s.memories_per_project.iter().map(|p| (p.project.as_str(), p.count)).collect();
        assert_eq!(projects, vec![("shop", 2), ("web", 1)]);
    }
}
