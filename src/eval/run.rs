//! Running the benchmark against a worker through its public API: memories saved with
//! `POST /api/memory/save` (the raw path) or sessions replayed as hook events with the extractive
//! observer (the product's path), then every question asked with `GET /api/search` in each mode.
//! Blocking; the CLI starts the worker and calls these.

use crate::protocol::paths;
use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags};
use serde_json::{Value, json};

use super::EvalError;
use super::dataset::{Memory, Question};
use super::metrics::{DEPTH, Scores, score};
use crate::client::http::query_value;
use crate::client::worker::Worker;

/// A row of the worker: (kind, id) as the search JSON names them.
pub type Row = (String, i64);

const CALL: Duration = Duration::from_secs(60);

/// Which half of search answers (`mode=` of `GET /api/search`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    Keyword,
    Vector,
    Hybrid,
}

impl SearchMode {
    pub const ALL: [SearchMode; 3] = [SearchMode::Keyword, SearchMode::Vector, SearchMode::Hybrid];
    pub fn name(self) -> &'static str {
        match self {
            SearchMode::Keyword => "keyword",
            SearchMode::Vector => "vector",
            SearchMode::Hybrid => "hybrid",
        }
    }
}

fn http(e: impl std::fmt::Display) -> EvalError {
    EvalError::Worker(e.to_string())
}

/// Saves every memory; returns dataset id → row.
pub fn save_memories(w: &Worker, memories: &[Memory]) -> Result<HashMap<String, Vec<Row>>, EvalError> {
    let mut map = HashMap::new();
    for m in memories {
        let body = json!({"text": m.text, "title": m.title, "project": m.project, "type": m.obs_type});
        let r = w.post(paths::MEMORY_SAVE, body.to_string().as_bytes(), CALL).map_err(http)?;
        let id = r.json().and_then(|v| v["id"].as_i64()).filter(|_| r.status == 200);
        let id = id.ok_or_else(|| EvalError::Worker(format!("save {}: HTTP {} {}", m.id, r.status, r.text())))?;
        map.insert(m.id.clone(), vec![("observation".to_owned(), id)]);
    }
    Ok(map)
}

/// Dataset id → rows for a worker that replayed the sessions: `tool:<id>` → the observations made
/// from that tool use (`observation_sources`), `prompt:<session>:<n>` → the stored prompt. Read
/// from the worker's database file, read-only (the API has no route from a tool use to its rows).
pub fn replayed_rows(db: &Path) -> Result<HashMap<String, Vec<Row>>, EvalError> {
    let db_err = |e: rusqlite::Error| EvalError::Worker(e.to_string());
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY).map_err(db_err)?;
    let mut map: HashMap<String, Vec<Row>> = HashMap::new();
    let mut st = conn
        .prepare(
            "SELECT t.tool_use_id, s.observation_id FROM observation_sources s JOIN tool_uses t ON t.id = s.tool_use_row_id
             WHERE t.tool_use_id IS NOT NULL ORDER BY s.observation_id",
        )
        .map_err(db_err)?;
    let rows = st
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))
        .map_err(db_err)?;
    for row in rows {
        let (tid, oid) = row.map_err(db_err)?;
        map.entry(format!("tool:{tid}")).or_default().push(("observation".to_owned(), oid));
    }
    let mut st = conn
        .prepare("SELECT content_session_id, prompt_number, id FROM user_prompts")
        .map_err(db_err)?;
    let rows = st
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?)))
        .map_err(db_err)?;
    for row in rows {
        let (session, n, id) = row.map_err(db_err)?;
        map.entry(format!("prompt:{session}:{n}"))
            .or_default()
            .push(("prompt".to_owned(), id));
    }
    Ok(map)
}

/// The ranked rows of one search answer (its `ranked` list).
fn ranked(v: &Value) -> Vec<Row> {
    v["ranked"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|r| Some((r["kind"].as_str()?.to_owned(), r["id"].as_i64()?)))
                .collect()
        })
        .unwrap_or_default()
}

/// One answered question.
#[derive(Debug, Clone)]
pub struct Answer {
    pub scores: Scores,
    pub ms: f64,
    /// The question's evidence mapped to no row (the observer made nothing of it).
    pub unmapped: bool,
    /// The first three results: kind, id, title and modified files (`memd eval --trace`).
    pub top: Vec<String>,
}

fn top_three(v: &Value) -> Vec<String> {
    let obs = v["observations"].as_array().cloned().unwrap_or_default();
    v["ranked"]
        .as_array()
        .into_iter()
        .flatten()
        .take(3)
        .map(|r| {
            let (kind, id) = (r["kind"].as_str().unwrap_or(""), r["id"].as_i64().unwrap_or(0));
            let o = obs.iter().find(|o| kind == "observation" && o["id"].as_i64() == Some(id));
            let title = o.and_then(|o| o["title"].as_str()).unwrap_or("");
            let files = o.map(|o| o["files_modified"].to_string()).unwrap_or_default();
            let matched = r["matched"].as_str().unwrap_or("");
            format!("{kind} #{id} [{matched}] {title} {files}")
        })
        .collect()
}

/// Asks `q` in `mode` and scores the answer against its evidence rows.
pub fn ask(w: &Worker, q: &Question, mode: SearchMode, rows: &HashMap<String, Vec<Row>>) -> Result<Answer, EvalError> {
    let path = format!(
        "{}?format=json&limit={DEPTH}&mode={}&project={}&query={}",
        paths::SEARCH,
        mode.name(),
        query_value(&q.project),
        query_value(&q.query)
    );
    let start = Instant::now();
    let r = w.get(&path, CALL).map_err(http)?;
    let ms = start.elapsed().as_secs_f64() * 1000.0;
    let v = r
        .json()
        .filter(|_| r.status == 200)
        .ok_or_else(|| EvalError::Worker(format!("search {}: HTTP {} {}", q.id, r.status, r.text())))?;
    let mut relevant: Vec<Row> = Vec::new();
    for e in &q.evidence {
        for row in rows.get(e).into_iter().flatten() {
            if !relevant.contains(row) {
                relevant.push(row.clone());
            }
        }
    }
    Ok(Answer {
        scores: score(&ranked(&v), &relevant),
        ms,
        unmapped: relevant.is_empty(),
        top: top_three(&v),
    })
}

/// Waits until the worker's vector backfill has embedded every row (or `timeout`); returns rows
/// embedded and the seconds waited. `some` = rows were stored, so an empty backfill is not done.
pub fn wait_embedded(w: &Worker, some: bool, timeout: Duration) -> Result<(i64, f64), EvalError> {
    let start = Instant::now();
    loop {
        let doc = w.get(paths::STATUS, CALL).map_err(http)?.json().unwrap_or_default();
        let b = &doc["vectors"]["backfill"];
        let (done, total) = (b["done"].as_i64().unwrap_or(0), b["total"].as_i64().unwrap_or(-1));
        let state = doc["vectors"]["state"].as_str().unwrap_or("");
        if (total >= 0 && done >= total && (total > 0 || !some)) || state == "disabled" || state == "no_model" {
            return Ok((done, start.elapsed().as_secs_f64()));
        }
        if start.elapsed() >= timeout {
            return Err(EvalError::Worker(format!("vector backfill at {done}/{total} after {timeout:?}")));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}
