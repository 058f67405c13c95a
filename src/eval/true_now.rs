//! "What is true now" (issue 38), from scripted git histories: in each of a few small
//! repositories a function is edited in one session and committed, then edited again in a later
//! session and committed. The question is the function's name; the answer must be the later
//! edit's observation, first; the earlier one — stale since the second commit — must not be in
//! the SessionStart index. Also reported: the share of the index's bytes spent on stale or
//! superseded rows. The same histories run against a worker with `MEMD_FRESHNESS=false` give the
//! "before" figures. Needs `git` on PATH.

use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags};
use serde_json::json;

use super::EvalError;
use crate::client::http::query_value;
use crate::client::worker::Worker;
use crate::protocol::{IngestRoute, paths};

const NAMES: &[(&str, &str)] = &[
    ("parse_invoice", "invoice"),
    ("round_total", "totals"),
    ("retry_upload", "upload"),
    ("hash_password", "auth"),
    ("render_badge", "badge"),
    ("merge_config", "config"),
    ("open_socket", "net"),
    ("flush_journal", "journal"),
    ("score_match", "ranking"),
    ("split_chunks", "chunker"),
    ("resolve_alias", "alias"),
    ("format_amount", "money"),
];

/// The figures of one run.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct TrueNow {
    pub freshness: bool,
    pub questions: usize,
    /// The later edit's observation ranked first.
    pub current_first: usize,
    /// The earlier (stale) observation was in the SessionStart index.
    pub stale_injected: usize,
    /// Bytes of the SessionStart indexes, and of their rows that are stale or superseded.
    pub index_bytes: usize,
    pub outdated_bytes: usize,
}

fn io(e: impl std::fmt::Display) -> EvalError {
    EvalError::Worker(e.to_string())
}

fn git(repo: &Path, args: &[&str]) -> Result<(), EvalError> {
    let out = crate::guard::git::command(repo)
        .args(["-c", "user.name=eval", "-c", "user.email=eval@memd.invalid"])
        .args(args)
        .output()
        .map_err(|e| io(format!("git: {e}")))?;
    if !out.status.success() {
        return Err(io(format!("git {args:?}: {}", String::from_utf8_lossy(&out.stderr))));
    }
    Ok(())
}

fn line(name: &str, v: u32) -> String {
    format!("pub fn {name}() -> u32 {{ {v} }}")
}

/// Edits the file of every scenario from `from` to `to` in session `tag`, as a hook would send it.
fn edit_all(w: &Worker, root: &Path, tag: &str, from: u32, to: u32) -> Result<(), EvalError> {
    for (name, file) in NAMES {
        let repo = root.join(format!("truenow-{file}"));
        let path = repo.join(format!("src/{file}.rs"));
        std::fs::write(&path, format!("{}\n", line(name, to))).map_err(io)?;
        let (cwd, session) = (repo.to_string_lossy().into_owned(), format!("truenow-{file}-{tag}"));
        let init = json!({"contentSessionId": session, "prompt": format!("change {name}"), "cwd": cwd});
        let edit = json!({
            "contentSessionId": session, "tool_name": "Edit", "tool_use_id": format!("toolu_{file}_{tag}"), "cwd": cwd,
            "tool_input": {"file_path": path.to_string_lossy(), "old_string": line(name, from), "new_string": line(name, to)},
            "tool_response": {"filePath": path.to_string_lossy(), "success": true},
        });
        for (p, body) in [(IngestRoute::Init.path(), init), (IngestRoute::Observations.path(), edit)] {
            let r = w.post(p, body.to_string().as_bytes(), Duration::from_secs(30)).map_err(io)?;
            if r.status != 200 {
                return Err(io(format!("{p}: HTTP {}", r.status)));
            }
        }
    }
    Ok(())
}

/// Waits until every edit of session `tag` has its observation (and its anchors, with freshness).
fn wait_stored(db: &Path, tag: &str, anchors: bool) -> Result<(), EvalError> {
    let start = Instant::now();
    let like = format!("toolu_%_{tag}");
    loop {
        let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY).map_err(io)?;
        let made: i64 = conn
            .query_row(
                "SELECT count(DISTINCT t.tool_use_id) FROM observation_sources s JOIN tool_uses t ON t.id = s.tool_use_row_id WHERE t.tool_use_id LIKE ?1",
                [&like],
                |r| r.get(0),
            )
            .map_err(io)?;
        let queued: i64 = conn.query_row("SELECT count(*) FROM anchor_queue", [], |r| r.get(0)).map_err(io)?;
        if made as usize == NAMES.len() && (!anchors || queued == 0) {
            return Ok(());
        }
        if start.elapsed() > Duration::from_secs(120) {
            return Err(io(format!("session {tag}: {made} of {} observations after 120 s", NAMES.len())));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn observation_of(conn: &Connection, tool_use_id: &str) -> Result<i64, EvalError> {
    conn.query_row(
        "SELECT max(s.observation_id) FROM observation_sources s JOIN tool_uses t ON t.id = s.tool_use_row_id WHERE t.tool_use_id = ?1",
        [tool_use_id],
        |r| r.get(0),
    )
    .map_err(io)
}

/// Runs the scripted histories under `root` against `w` (whose database is `db`).
pub fn run(w: &Worker, db: &Path, root: &Path, freshness: bool) -> Result<TrueNow, EvalError> {
    for (name, file) in NAMES {
        let repo = root.join(format!("truenow-{file}"));
        std::fs::create_dir_all(repo.join("src")).map_err(io)?;
        git(&repo, &["init", "-q"])?;
        std::fs::write(repo.join(format!("src/{file}.rs")), format!("{}\n", line(name, 1))).map_err(io)?;
        git(&repo, &["add", "."])?;
        git(&repo, &["commit", "-q", "-m", "start"])?;
    }
    for (tag, from, to) in [("a", 1, 2), ("b", 2, 3)] {
        edit_all(w, root, tag, from, to)?;
        wait_stored(db, tag, freshness)?;
        for (_, file) in NAMES {
            git(&root.join(format!("truenow-{file}")), &["commit", "-q", "-am", tag])?;
        }
    }
    let mut out = TrueNow {
        freshness,
        questions: NAMES.len(),
        ..TrueNow::default()
    };
    for (name, file) in NAMES {
        let project = format!("truenow-{file}");
        let index = w
            .get(
                &format!("{}?projects={project}&fence=false", paths::CONTEXT_INJECT),
                Duration::from_secs(30),
            )
            .map_err(io)?
            .text();
        let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY).map_err(io)?;
        let (older, newer) = (
            observation_of(&conn, &format!("toolu_{file}_a"))?,
            observation_of(&conn, &format!("toolu_{file}_b"))?,
        );
        let search = w
            .get(
                &format!("{}?format=json&project={project}&query={}", paths::SEARCH, query_value(name)),
                Duration::from_secs(30),
            )
            .map_err(io)?
            .json()
            .unwrap_or_default();
        if search["observations"][0]["id"].as_i64() == Some(newer) {
            out.current_first += 1;
        }
        let mut outdated: Vec<i64> = Vec::new();
        let mut stmt = conn
            .prepare("SELECT id FROM observations WHERE project = ?1 AND (stale_commit IS NOT NULL OR superseded_by IS NOT NULL)")
            .map_err(io)?;
        for id in stmt.query_map([&project], |r| r.get(0)).map_err(io)? {
            outdated.push(id.map_err(io)?);
        }
        // Before freshness nothing is marked: the earlier edit is what is outdated.
        if !freshness && !outdated.contains(&older) {
            outdated.push(older);
        }
        out.index_bytes += index.len();
        for l in index.lines() {
            let id = l.split(' ').next().and_then(|t| t.parse::<i64>().ok());
            if id.is_some_and(|id| outdated.contains(&id)) {
                out.outdated_bytes += l.len() + 1;
                if id == Some(older) {
                    out.stale_injected += 1;
                }
            }
        }
    }
    Ok(out)
}

/// The Markdown lines of a before/after pair.
pub fn markdown(runs: &[TrueNow]) -> String {
    let mut s = String::from(
        "\n### what is true now — scripted git histories (a function edited and committed twice)\n\n\
         | MEMD_FRESHNESS | questions | current edit first | stale edit injected | index bytes | stale/superseded share |\n|---|---:|---:|---:|---:|---:|\n",
    );
    for r in runs {
        let share = if r.index_bytes == 0 {
            0.0
        } else {
            100.0 * r.outdated_bytes as f64 / r.index_bytes as f64
        };
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {share:.1} % |\n",
            r.freshness, r.questions, r.current_first, r.stale_injected, r.index_bytes
        ));
    }
    s
}
