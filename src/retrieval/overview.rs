//! Project list and database figures (docs/spec/api.md §6.1–§6.2).

use rusqlite::Connection;

use super::RetrievalError;
use super::browse_rows::ProjectList;

/// `{"projects","sources","projectsBySource"}`; projects by latest activity, newest first.
pub fn projects(conn: &Connection, platform: Option<&str>) -> Result<ProjectList, RetrievalError> {
    let mut stmt = conn.prepare(
        "SELECT project, CASE WHEN platform_source = '' THEN 'claude' ELSE platform_source END AS src, max(last_event_epoch) AS t
         FROM sdk_sessions GROUP BY project, src ORDER BY t DESC, project",
    )?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>("project")?, r.get::<_, String>("src")?)))?;
    let mut out = ProjectList::default();
    for row in rows {
        let (project, src) = row?;
        if platform.is_some_and(|p| p != src) {
            continue;
        }
        if !out.projects.contains(&project) {
            out.projects.push(project.clone());
        }
        if !out.sources.contains(&src) {
            out.sources.push(src.clone());
        }
        let list = out.projects_by_source.entry(src).or_default();
        if !list.contains(&project) {
            list.push(project);
        }
    }
    Ok(out)
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
