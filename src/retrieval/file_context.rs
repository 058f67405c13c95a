//! Observations of a file (spec/retrieval.md §3, spec/api.md §4.6): lookup through the
//! `observation_files` index, and the file-context block injected on a Read.

use std::collections::HashSet;

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, params_from_iter};

use super::RetrievalError;
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

/// The file-context block, or empty text when nothing is worth injecting.
pub fn file_context(conn: &Connection, req: &FileContextRequest, mode: &Mode, zone: &Zone, now_ms: i64) -> Result<String, RetrievalError> {
    let found = observations_by_file(conn, req)?;
    let Some(newest) = found.first() else {
        return Ok(String::new());
    };
    if req.file_mtime_ms.is_some_and(|m| m >= newest.created_at_epoch) {
        return Ok(String::new());
    }
    let paths = normalised(&req.paths);
    let mut sessions = HashSet::new();
    let mut kept: Vec<(u8, Observation)> = found
        .into_iter()
        .filter(|o| sessions.insert(o.memory_session_id.clone()))
        .map(|o| (score(&o, &paths), o))
        .collect();
    kept.sort_by_key(|k| std::cmp::Reverse(k.0));
    kept.truncate(FILE_CONTEXT_ROWS);
    let mut obs: Vec<Observation> = kept.into_iter().map(|(_, o)| o).collect();
    obs.sort_by_key(|o| (o.created_at_epoch, o.id));
    Ok(render_file_context(&obs, &display_path(&paths), mode, zone, now_ms))
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
                suffix: String::new(),
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
