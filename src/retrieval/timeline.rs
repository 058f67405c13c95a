//! Timeline around an anchor (docs/spec/retrieval.md §5): observations, summaries and prompts in
//! scope, ascending by time (same instant: prompt, observation, summary, then id); the window is
//! `depth_before` items, the anchor, `depth_after` items.

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, params_from_iter};
use serde_json::{Value, json};

use super::RetrievalError;
use super::ids::{RecordId, fetch_records};
use super::record_kind::{Kind, Record};
use super::records::{OBS_COLS, Observation, PROMPT_COLS, Prompt, SUMMARY_COLS, Summary};
use super::render::{Row, day_grouped};
use super::scope::{Conditions, Scope};
use super::search::{Order, SearchRequest, search};
use super::search_render::glyph_and_title;
use super::search_sql::Filters;
use super::zone::Zone;
use crate::modes::Mode;

/// Largest allowed depth.
pub const DEPTH_MAX: usize = crate::protocol::search::DEPTH_MAX as usize;

/// What the window is centred on.
#[derive(Debug, Clone, PartialEq)]
pub enum Anchor {
    Record(RecordId),
    /// Epoch ms: the first item at or after it, else the last item before it.
    Time(i64),
    /// The top observation hit of a search.
    Query(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct TimelineRequest {
    pub anchor: Anchor,
    pub depth_before: usize,
    pub depth_after: usize,
    /// None: the anchor row's project (record anchors) or all projects.
    pub projects: Option<Vec<String>>,
    pub platform: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TimelineResult {
    pub anchor: RecordId,
    pub items: Vec<Record>,
    pub anchor_index: usize,
    pub project: String,
}

fn order_rank(k: Kind) -> u8 {
    match k {
        Kind::Prompt => 0,
        Kind::Observation => 1,
        Kind::Summary => 2,
    }
}

fn key(r: &Record) -> (i64, u8, i64) {
    (r.at_ms(), order_rank(r.kind()), r.id())
}

fn project_of(r: &Record) -> String {
    match r {
        Record::Observation(o) => o.project.clone(),
        Record::Summary(s) => s.project.clone(),
        Record::Prompt(p) => p.project.clone(),
    }
}

fn not_found(rid: RecordId) -> RetrievalError {
    let what = match rid.kind {
        Kind::Observation => "Observation",
        Kind::Summary => "Summary",
        Kind::Prompt => "Prompt",
    };
    RetrievalError::NotFound(format!("{what} {} not found", rid.hash_label()))
}

/// Items of kind `k` in scope strictly before (`before`) or after the key, nearest first.
fn neighbours(
    conn: &Connection,
    k: Kind,
    scope: &Scope,
    at: (i64, u8, i64),
    before: bool,
    limit: usize,
) -> Result<Vec<Record>, RetrievalError> {
    if limit == 0 {
        return Ok(Vec::new());
    }
    let (cols, table, a, merged) = match k {
        Kind::Observation => (OBS_COLS, "observations", "o", true),
        Kind::Summary => (SUMMARY_COLS, "session_summaries", "s", true),
        Kind::Prompt => (PROMPT_COLS, "user_prompts", "p", false),
    };
    let mut c = Conditions::default();
    let kr = order_rank(k);
    let (cmp, dir) = if before { ("<", "DESC") } else { (">", "ASC") };
    let t = SqlValue::Integer(at.0);
    if kr == at.1 {
        c.push(
            &format!("({a}.created_at_epoch, {a}.id) {cmp} (?, ?)"),
            [t, SqlValue::Integer(at.2)],
        );
    } else if (kr < at.1) == before {
        c.push(&format!("{a}.created_at_epoch {cmp}= ?"), [t]);
    } else {
        c.push(&format!("{a}.created_at_epoch {cmp} ?"), [t]);
    }
    scope.conditions(a, merged, &mut c);
    let sql = format!(
        "SELECT {cols} FROM {table} {a} WHERE 1=1{} ORDER BY {a}.created_at_epoch {dir}, {a}.id {dir} LIMIT {limit}",
        c.sql
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params_from_iter(c.params.iter()), |r| {
        Ok(match k {
            Kind::Observation => Record::Observation(Observation::from_row(r)?),
            Kind::Summary => Record::Summary(Summary::from_row(r)?),
            Kind::Prompt => Record::Prompt(Prompt::from_row(r)?),
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The `limit` nearest items on one side of `at`, across kinds, nearest first.
fn side(conn: &Connection, scope: &Scope, at: (i64, u8, i64), before: bool, limit: usize) -> Result<Vec<Record>, RetrievalError> {
    let mut all = Vec::new();
    for k in [Kind::Prompt, Kind::Observation, Kind::Summary] {
        all.extend(neighbours(conn, k, scope, at, before, limit)?);
    }
    all.sort_by_key(key);
    if before {
        all.reverse();
    }
    all.truncate(limit);
    Ok(all)
}

/// Resolves the anchor and collects the window. `Ok(None)`: a query anchor without any hit.
pub fn timeline(conn: &Connection, req: &TimelineRequest) -> Result<Option<TimelineResult>, RetrievalError> {
    let asked = Scope::new(req.projects.clone(), req.platform.clone());
    let anchor = match &req.anchor {
        Anchor::Record(rid) => fetch_records(conn, &[*rid], &asked)?.remove(rid).ok_or_else(|| not_found(*rid))?,
        Anchor::Query(q) => {
            let s = SearchRequest {
                query: q.clone(),
                kinds: vec![Kind::Observation],
                filters: Filters {
                    scope: asked.clone(),
                    ..Filters::default()
                },
                limit: 1,
                offset: 0,
                order: Some(Order::Relevance),
            };
            match search(conn, &s)?.records.into_iter().next() {
                Some(r) => r,
                None => return Ok(None),
            }
        }
        Anchor::Time(t) => {
            let after = side(conn, &asked, (*t, 0, i64::MIN), false, 1)?;
            let pick = match after.into_iter().next() {
                Some(r) => Some(r),
                None => side(conn, &asked, (*t, 0, i64::MIN), true, 1)?.into_iter().next(),
            };
            match pick {
                Some(r) => r,
                None => return Err(RetrievalError::NotFound("No items in scope".into())),
            }
        }
    };
    let scope = match (&req.anchor, &req.projects) {
        (Anchor::Record(_), None) => Scope::new(Some(vec![project_of(&anchor)]), req.platform.clone()),
        _ => asked,
    };
    let at = key(&anchor);
    let mut items = side(conn, &scope, at, true, req.depth_before)?;
    items.reverse();
    let anchor_index = items.len();
    let rid = RecordId {
        kind: anchor.kind(),
        id: anchor.id(),
    };
    let project = scope.primary().map(str::to_string).unwrap_or_else(|| project_of(&anchor));
    items.push(anchor);
    items.extend(side(conn, &scope, at, false, req.depth_after)?);
    Ok(Some(TimelineResult {
        anchor: rid,
        items,
        anchor_index,
        project,
    }))
}

/// The §5 text.
pub fn render_timeline(res: &TimelineResult, mode: &Mode, zone: &Zone) -> String {
    let before = res.anchor_index;
    let after = res.items.len() - before - 1;
    let mut lines = vec![format!(
        "Timeline around {} — {} ({before} before, {after} after)",
        res.anchor.hash_label(),
        crate::text::sink::inline(&res.project)
    )];
    let rows: Vec<Row> = res
        .items
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let (glyph, title) = glyph_and_title(r, mode);
            let mut suffix = match r {
                Record::Prompt(_) => String::new(),
                _ => format!(" (~{}t)", r.read_tokens()),
            };
            if i == res.anchor_index {
                suffix.push_str(" <- anchor");
            }
            Row {
                at_ms: r.at_ms(),
                id: r.kind().label(r.id()),
                glyph,
                title,
                suffix,
                detail: None,
            }
        })
        .collect();
    lines.extend(day_grouped(&rows, zone));
    let ids: Vec<String> = res
        .items
        .iter()
        .filter(|r| r.kind() != Kind::Prompt)
        .map(|r| r.kind().label(r.id()))
        .collect();
    if !ids.is_empty() {
        lines.push(format!("Full records: get_observations([{}])", ids.join(", ")));
    }
    lines.join("\n")
}

/// `format=json`: `{"anchor":{"kind","id"},"items":[{"kind","row"}]}`.
pub fn timeline_json(res: &TimelineResult) -> Value {
    let items: Vec<Value> = res
        .items
        .iter()
        .map(|r| {
            let row = match r {
                Record::Observation(o) => o.to_json(),
                Record::Summary(s) => s.to_json(),
                Record::Prompt(p) => p.to_json(),
            };
            json!({"kind": r.kind().name(), "row": row})
        })
        .collect();
    json!({"anchor": {"kind": res.anchor.kind.name(), "id": res.anchor.id}, "items": items})
}
