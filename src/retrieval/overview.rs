//! Project list and database figures (docs/spec/api.md §6.1–§6.2).

use rusqlite::Connection;
use serde_json::{Map, Value, json};

use super::RetrievalError;

/// `{"projects","sources","projectsBySource"}`; projects by latest activity, newest first.
pub fn projects(conn: &Connection, platform: Option<&str>) -> Result<Value, RetrievalError> {
    let mut stmt = conn.prepare(
        "SELECT project, CASE WHEN platform_source = '' THEN 'claude' ELSE platform_source END AS src, max(last_event_epoch) AS t
         FROM sdk_sessions GROUP BY project, src ORDER BY t DESC, project",
    )?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
    let mut projects: Vec<String> = Vec::new();
    let mut sources: Vec<String> = Vec::new();
    let mut by_source: Map<String, Value> = Map::new();
    for row in rows {
        let (project, src) = row?;
        if platform.is_some_and(|p| p != src) {
            continue;
        }
        if !projects.contains(&project) {
            projects.push(project.clone());
        }
        if !sources.contains(&src) {
            sources.push(src.clone());
        }
        let list = by_source.entry(src).or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(a) = list
            && !a.iter().any(|v| v.as_str() == Some(project.as_str()))
        {
            a.push(Value::from(project));
        }
    }
    Ok(json!({"projects": projects, "sources": sources, "projectsBySource": by_source}))
}

/// Row counts and the oldest observation's time.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DatabaseFigures {
    pub observations: i64,
    pub sessions: i64,
    pub summaries: i64,
    pub prompts: i64,
    pub first_observation_at: Option<String>,
}

pub fn database_figures(conn: &Connection) -> Result<DatabaseFigures, RetrievalError> {
    let count = |sql: &str| -> Result<i64, RetrievalError> { Ok(conn.query_row(sql, [], |r| r.get(0))?) };
    Ok(DatabaseFigures {
        observations: count("SELECT count(*) FROM observations")?,
        sessions: count("SELECT count(*) FROM sdk_sessions")?,
        summaries: count("SELECT count(*) FROM session_summaries")?,
        prompts: count("SELECT count(*) FROM user_prompts")?,
        first_observation_at: conn
            .query_row(
                "SELECT created_at FROM observations ORDER BY created_at_epoch, id LIMIT 1",
                [],
                |r| r.get(0),
            )
            .ok(),
    })
}
