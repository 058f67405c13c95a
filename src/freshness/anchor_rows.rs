//! Code anchors and staleness in SQLite (issue 38): the queue of observations waiting for their
//! anchors, what an anchor job needs (the files an observation names and the directory its calls
//! ran in), the anchors written, the work trees a project's anchors lie in, and staleness marks.
//! The git side is `freshness/`; nothing here runs a process.

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, params, params_from_iter};

use crate::store::StoreError;
use crate::store::record::record;

/// An observation waiting for its anchors.
#[derive(Debug, Clone, PartialEq)]
pub struct AnchorJob {
    pub observation_id: i64,
    pub project: String,
    /// The directory its calls ran in (else the session's project root); None: no anchors.
    pub cwd: Option<String>,
    /// The files it names, as stored.
    pub paths: Vec<String>,
}

/// One file of one observation, anchored.
#[derive(Debug, Clone, PartialEq)]
pub struct Anchor {
    pub observation_id: i64,
    pub repo_root: String,
    pub path: String,
    pub head_commit: Option<String>,
    pub head_blob: Option<String>,
    pub content_blob: Option<String>,
}

record! {
    /// A live (not yet stale) anchor as the staleness check reads it (a row of
    /// `observation_anchors`).
    pub struct LiveAnchor, LIVE_COLS = "a" {
        observation_id: i64 = "observation_id",
        path: String = "path",
        head_commit: Option<String> = "head_commit",
        head_blob: Option<String> = "head_blob",
        content_blob: Option<String> = "content_blob",
    }
}

/// A file a later commit changed (or deleted), for the observations anchored to it.
#[derive(Debug, Clone, PartialEq)]
pub struct StaleMark {
    pub observation_id: i64,
    pub commit: String,
    pub file: String,
    pub at_epoch: i64,
}

/// Observations queued for anchors, oldest first.
pub fn queued(conn: &Connection, limit: usize) -> Result<Vec<AnchorJob>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT q.observation_id, o.project,
           (SELECT tu.cwd FROM observation_sources s JOIN tool_uses tu ON tu.id = s.tool_use_row_id
             WHERE s.observation_id = q.observation_id AND tu.cwd IS NOT NULL ORDER BY tu.id DESC LIMIT 1) AS cwd,
           (SELECT ss.project_root FROM sdk_sessions ss WHERE ss.memory_session_id = o.memory_session_id) AS root
         FROM anchor_queue q JOIN observations o ON o.id = q.observation_id ORDER BY q.observation_id LIMIT ?1",
    )?;
    let rows = stmt.query_map([limit as i64], |r| {
        let cwd: Option<String> = r.get("cwd")?;
        let root: Option<String> = r.get("root")?;
        Ok((r.get::<_, i64>("observation_id")?, r.get::<_, String>("project")?, cwd.or(root)))
    })?;
    let mut jobs = Vec::new();
    for row in rows {
        let (observation_id, project, cwd) = row?;
        let mut files = conn.prepare_cached("SELECT path FROM observation_files WHERE observation_id = ?1 ORDER BY path")?;
        let paths = files
            .query_map([observation_id], |r| r.get(0))?
            .collect::<Result<Vec<String>, _>>()?;
        jobs.push(AnchorJob {
            observation_id,
            project,
            cwd,
            paths,
        });
    }
    Ok(jobs)
}

/// How many observations wait for anchors.
pub fn queue_len(conn: &Connection) -> Result<i64, StoreError> {
    Ok(conn.query_row("SELECT count(*) FROM anchor_queue", [], |r| r.get(0))?)
}

/// Writes the anchors of finished jobs and takes them off the queue.
pub fn write_anchors(conn: &Connection, done: &[AnchorJob], anchors: &[Anchor]) -> Result<(), StoreError> {
    let mut put = conn.prepare_cached(
        "INSERT OR REPLACE INTO observation_anchors(observation_id, repo_root, path, head_commit, head_blob, content_blob)
         SELECT ?1, ?2, ?3, ?4, ?5, ?6 WHERE EXISTS (SELECT 1 FROM observations WHERE id = ?1)",
    )?;
    for a in anchors {
        put.execute(params![
            a.observation_id,
            a.repo_root,
            a.path,
            a.head_commit,
            a.head_blob,
            a.content_blob
        ])?;
        conn.execute("INSERT OR IGNORE INTO anchor_roots(repo_root) VALUES (?1)", [&a.repo_root])?;
        if let Some(job) = done.iter().find(|j| j.observation_id == a.observation_id) {
            conn.execute(
                "INSERT OR IGNORE INTO anchor_root_projects(project, repo_root) VALUES (?1, ?2)",
                params![job.project, a.repo_root],
            )?;
        }
    }
    let mut unqueue = conn.prepare_cached("DELETE FROM anchor_queue WHERE observation_id = ?1")?;
    for j in done {
        unqueue.execute([j.observation_id])?;
    }
    Ok(())
}

/// The work trees holding anchors of any of `projects` (every one when `projects` is empty), with
/// the HEAD each was last checked at.
pub fn roots(conn: &Connection, projects: &[String]) -> Result<Vec<(String, Option<String>)>, StoreError> {
    let sql = if projects.is_empty() {
        "SELECT repo_root, checked_head FROM anchor_roots ORDER BY repo_root".to_string()
    } else {
        format!(
            "SELECT r.repo_root, r.checked_head FROM anchor_roots r WHERE r.repo_root IN
               (SELECT repo_root FROM anchor_root_projects WHERE project IN ({})) ORDER BY r.repo_root",
            vec!["?"; projects.len()].join(", ")
        )
    };
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params_from_iter(projects.iter().map(|p| SqlValue::Text(p.clone()))), |r| {
        Ok((r.get(0)?, r.get(1)?))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The anchors in `root` of observations not yet stale.
pub fn live_anchors(conn: &Connection, root: &str) -> Result<Vec<LiveAnchor>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {LIVE_COLS}
         FROM observation_anchors a JOIN observations o ON o.id = a.observation_id
         WHERE a.repo_root = ?1 AND o.stale_commit IS NULL ORDER BY a.observation_id, a.path"
    ))?;
    let rows = stmt.query_map([root], LiveAnchor::from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Marks observations stale (an already stale one keeps its first mark) and records the HEAD
/// `root` was checked at. Answers how many were marked.
pub fn mark_stale(conn: &Connection, root: &str, head: Option<&str>, marks: &[StaleMark], now: i64) -> Result<usize, StoreError> {
    let mut n = 0;
    let mut stmt = conn.prepare_cached(
        "UPDATE observations SET stale_commit = ?2, stale_file = ?3, stale_at_epoch = ?4 WHERE id = ?1 AND stale_commit IS NULL",
    )?;
    for m in marks {
        n += stmt.execute(params![m.observation_id, m.commit, m.file, m.at_epoch])?;
    }
    conn.execute(
        "INSERT INTO anchor_roots(repo_root, checked_head, checked_at_epoch) VALUES (?1, ?2, ?3)
         ON CONFLICT(repo_root) DO UPDATE SET checked_head = excluded.checked_head, checked_at_epoch = excluded.checked_at_epoch",
        params![root, head, now],
    )?;
    Ok(n)
}

/// The anchors of one observation: (path, head commit).
pub fn anchors_of(conn: &Connection, observation_id: i64) -> Result<Vec<(String, Option<String>)>, StoreError> {
    let mut stmt = conn.prepare_cached("SELECT path, head_commit FROM observation_anchors WHERE observation_id = ?1 ORDER BY path")?;
    let rows = stmt.query_map([observation_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}
