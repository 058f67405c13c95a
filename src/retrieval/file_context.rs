//! Observations of a file (docs/spec/retrieval.md §3, docs/spec/api.md §4.6): lookup through the
//! `observation_files` index, and the file-context block injected on a Read.
//!
//! With vectors, when more rows qualify than the block keeps, the spec's score order is fused by
//! RRF with the rows' similarity to the session's latest prompt (its stored vector: nothing is
//! embedded on this path), so the 15 kept are the ones nearest to the current task.

use std::collections::HashSet;

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, params_from_iter};

use super::RetrievalError;
use super::ids::RecordId;
use super::record_kind::Kind;
use super::records::{OBS_COLS, Observation, json_list};
use super::render::{Row, TITLE_MAX, cut_utf16, day_grouped, title_or_untitled, utf16_len};
use super::scope::{Conditions, Scope, placeholders};
use super::zone::{Zone, header_time};
use crate::modes::Mode;

/// Rows kept in the file-context block.
pub const FILE_CONTEXT_ROWS: usize = 15;
/// Length cap of the block (UTF-16 units).
pub const FILE_CONTEXT_MAX_CHARS: usize = 10_000;

#[derive(Debug, Clone, PartialEq)]
pub struct FileContextRequest {
    /// Path forms of one file (absolute, cwd-relative, git-root-relative); `\` read as `/`.
    pub paths: Vec<String>,
    pub scope: Scope,
    pub limit: usize,
    /// The file's mtime: nothing is injected when it is ≥ the newest match's time.
    pub file_mtime_ms: Option<i64>,
    /// The asking session (its latest prompt steers the ranking when `vectors` is on).
    pub content_session_id: Option<String>,
    /// The embedded vector store may be used for ranking.
    pub vectors: bool,
}

fn normalised(paths: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for p in paths {
        let p = p.replace('\\', "/");
        if !p.is_empty() && !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

/// Observations with a `files_read` / `files_modified` entry equal to any path form, newest first.
pub fn observations_by_file(conn: &Connection, req: &FileContextRequest) -> Result<Vec<Observation>, RetrievalError> {
    let paths = normalised(&req.paths);
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    let mut c = Conditions::default();
    c.push(
        &format!(
            "o.id IN (SELECT observation_id FROM observation_files WHERE path IN ({}))",
            placeholders(paths.len())
        ),
        paths.iter().map(|p| SqlValue::Text(p.clone())),
    );
    req.scope.conditions("o", true, &mut c);
    // Quarantined records are never injected (issue 36).
    c.push("o.quarantined = 0", []);
    c.push(super::context::INJECTABLE, []);
    let sql = format!(
        "SELECT {OBS_COLS} FROM observations o WHERE 1=1{} ORDER BY o.created_at_epoch DESC, o.id DESC LIMIT {}",
        c.sql, req.limit
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params_from_iter(c.params.iter()), Observation::from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The path named in the block: the last relative form given (git-root-relative by the hook's
/// order), else the first.
fn display_path(paths: &[String]) -> String {
    paths
        .iter()
        .rev()
        .find(|p| !p.starts_with('/'))
        .or(paths.first())
        .cloned()
        .unwrap_or_default()
}

fn score(o: &Observation, paths: &[String]) -> u8 {
    let modified = json_list(&o.files_modified);
    let mut all: HashSet<String> = json_list(&o.files_read).into_iter().collect();
    all.extend(modified.iter().cloned());
    let mut s = 0;
    if modified.iter().any(|m| paths.contains(&m.replace('\\', "/"))) {
        s += 2;
    }
    s += match all.len() {
        0..=3 => 2,
        4..=8 => 1,
        _ => 0,
    };
    s
}

/// The file-context block (empty text when nothing is worth injecting) and the observations it
/// shows.
pub fn file_context(
    conn: &Connection,
    req: &FileContextRequest,
    mode: &Mode,
    zone: &Zone,
    now_ms: i64,
) -> Result<(String, Vec<i64>), RetrievalError> {
    let found = observations_by_file(conn, req)?;
    let Some(newest) = found.first() else {
        return Ok((String::new(), Vec::new()));
    };
    if req.file_mtime_ms.is_some_and(|m| m >= newest.created_at_epoch) {
        return Ok((String::new(), Vec::new()));
    }
    let paths = normalised(&req.paths);
    let mut sessions = HashSet::new();
    let mut kept: Vec<(u8, Observation)> = found
        .into_iter()
        .filter(|o| sessions.insert(o.memory_session_id.clone()))
        .map(|o| (score(&o, &paths), o))
        .collect();
    kept.sort_by_key(|k| std::cmp::Reverse(k.0));
    let mut obs: Vec<Observation> = kept.into_iter().map(|(_, o)| o).collect();
    if obs.len() > FILE_CONTEXT_ROWS
        && req.vectors
        && let Some(session) = &req.content_session_id
    {
        obs = by_relevance(conn, obs, session);
    }
    obs.truncate(FILE_CONTEXT_ROWS);
    obs.sort_by_key(|o| (o.created_at_epoch, o.id));
    // The read file's name is attacker-chosen text too (a newline, a closing tag): one safe line.
    let text = render_file_context(&obs, &crate::text::sink::inline(&display_path(&paths)), mode, zone, now_ms);
    let ids = if text.trim().is_empty() {
        Vec::new()
    } else {
        obs.iter().map(|o| o.id).collect()
    };
    Ok((text, ids))
}

/// `obs` (in score order) re-ordered by RRF of that order and their similarity to the session's
/// latest embedded prompt; unchanged when there is no such vector or the vector store fails.
fn by_relevance(conn: &Connection, obs: Vec<Observation>, content_session_id: &str) -> Vec<Observation> {
    use crate::vectors::nearest::{latest_prompt_vector, row_similarities};
    let ids: Vec<i64> = obs.iter().map(|o| o.id).collect();
    let sims = match latest_prompt_vector(conn, content_session_id) {
        Ok(Some(prompt)) => row_similarities(conn, &prompt, crate::vectors::documents::DocKind::Observation, &ids),
        Ok(None) => return obs,
        Err(e) => Err(e),
    };
    let sims = match sims {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(error = %e, "file-context ranking without vectors");
            return obs;
        }
    };
    let rid = |id: i64| RecordId {
        kind: Kind::Observation,
        id,
    };
    let by_score: Vec<RecordId> = ids.iter().map(|id| rid(*id)).collect();
    let mut by_similarity: Vec<(i64, f32)> = sims.into_iter().collect();
    by_similarity.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
    let by_similarity: Vec<RecordId> = by_similarity.into_iter().map(|(id, _)| rid(id)).collect();
    let order = super::fusion::merge_lists(&[&by_score, &by_similarity]);
    let mut rows: std::collections::HashMap<i64, Observation> = obs.into_iter().map(|o| (o.id, o)).collect();
    order.iter().filter_map(|r| rows.remove(&r.id)).collect()
}

/// Renders the block for `obs` (chronological), dropping the oldest rows until it fits.
pub fn render_file_context(obs: &[Observation], path: &str, mode: &Mode, zone: &Zone, now_ms: i64) -> String {
    let mut start = 0;
    loop {
        let shown = &obs[start..];
        let n = shown.len();
        let ids: Vec<String> = shown.iter().map(|o| o.id.to_string()).collect();
        let rows: Vec<Row> = shown
            .iter()
            .map(|o| Row {
                at_ms: o.created_at_epoch,
                id: o.id.to_string(),
                glyph: mode.glyph(&o.obs_type).to_string(),
                title: title_or_untitled(o.title.as_deref(), TITLE_MAX),
                suffix: o.tags(),
                detail: None,
            })
            .collect();
        let mut lines = vec![
            format!("Current: {}", header_time(zone, now_ms)),
            format!(
                "memd has {n} earlier observation{} of {path}; the Read result below is still complete.",
                if n == 1 { "" } else { "s" }
            ),
            format!("Full records: get_observations([{}])", ids.join(", ")),
        ];
        lines.extend(day_grouped(&rows, zone));
        let text = lines.join("\n");
        if utf16_len(&text) <= FILE_CONTEXT_MAX_CHARS || start + 1 >= obs.len() {
            return cut_utf16(&text, FILE_CONTEXT_MAX_CHARS);
        }
        start += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(i: usize) -> Vec<u8> {
        let mut v = vec![0.0f32; 384];
        v[i] = 1.0;
        crate::vectors::index::to_stored_blob(&v)
    }

    /// 20 sessions each with one observation of `src/a.rs` (ids 1..=20, oldest first), each
    /// embedded as a distinct unit vector; a current session whose prompt points at the oldest.
    fn conn() -> Connection {
        let c = crate::store::test_conn();
        for i in 0..20 {
            c.execute(
                "INSERT INTO sdk_sessions(content_session_id, memory_session_id, project, started_at, started_at_epoch, last_event_epoch)
                 VALUES (?1, ?2, 'proj', 'x', 0, 0)",
                [format!("c{i}"), format!("m{i}")],
            )
            .unwrap();
            c.execute(
                "INSERT INTO observations(memory_session_id, project, platform_source, type, title, narrative, files_read, content_hash, origin, created_at, created_at_epoch)
                 VALUES (?1, 'proj', 'claude', 'discovery', ?2, 'n', '[\"src/a.rs\"]', ?2, 'manual', 'x', ?3)",
                rusqlite::params![format!("m{i}"), format!("t{i}"), 1_000 + i as i64],
            )
            .unwrap();
            c.execute(
                "INSERT INTO vectors(doc_id, doc_kind, row_id, field, project, platform_source, created_at_epoch, model, dim, embedding)
                 VALUES (?1, 'observation', ?2, 'narrative', 'proj', 'claude', 0, 'm', 384, ?3)",
                rusqlite::params![format!("obs_{}_narrative", i + 1), i as i64 + 1, unit(i + 1)],
            )
            .unwrap();
        }
        c.execute_batch(
            "INSERT INTO sdk_sessions(content_session_id, memory_session_id, project, started_at, started_at_epoch, last_event_epoch)
               VALUES ('cur', 'mcur', 'proj', 'x', 0, 0);
             INSERT INTO user_prompts(session_db_id, content_session_id, platform_source, project, prompt_number, prompt_text, created_at, created_at_epoch)
               VALUES (21, 'cur', 'claude', 'proj', 1, 'the oldest thing', 'x', 5000);",
        )
        .unwrap();
        let prompt_id = c.last_insert_rowid();
        c.execute(
            "INSERT INTO vectors(doc_id, doc_kind, row_id, field, project, platform_source, created_at_epoch, model, dim, embedding)
             VALUES (?1, 'prompt', ?2, 'prompt', 'proj', 'claude', 0, 'm', 384, ?3)",
            rusqlite::params![format!("prompt_{prompt_id}"), prompt_id, unit(1)],
        )
        .unwrap();
        c
    }

    fn ids_shown(conn: &Connection, vectors: bool, session: Option<&str>) -> String {
        let req = FileContextRequest {
            paths: vec!["src/a.rs".into()],
            scope: Scope::default(),
            limit: 40,
            file_mtime_ms: None,
            content_session_id: session.map(str::to_string),
            vectors,
        };
        let mode = crate::modes::load_mode("code", &[]).0;
        let (block, _) = file_context(conn, &req, &mode, &Zone::Utc, 10_000).unwrap();
        block.lines().find(|l| l.starts_with("Full records")).unwrap().to_string()
    }

    #[test]
    fn the_prompt_of_the_session_pulls_a_relevant_older_row_into_the_block() {
        let c = conn();
        // Spec order alone keeps the 15 newest (6..=20).
        assert_eq!(
            ids_shown(&c, false, Some("cur")),
            "Full records: get_observations([6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20])"
        );
        // The prompt's vector is observation 1's: it enters, the 15th newest (6) leaves.
        let fused = ids_shown(&c, true, Some("cur"));
        assert!(fused.contains("([1, 7,"), "{fused}");
        assert!(!fused.contains(" 6,"), "{fused}");
        // No session, or a session without an embedded prompt: the spec order.
        assert_eq!(ids_shown(&c, true, None), ids_shown(&c, false, None));
        assert_eq!(ids_shown(&c, true, Some("c3")), ids_shown(&c, false, None));
    }
}
