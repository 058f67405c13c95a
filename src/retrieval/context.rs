//! SessionStart context injection (docs/spec/retrieval.md §1): selection of observations and
//! summaries in scope (chain × platform), optional ACT-R ranking, then [`render_context`].

use rusqlite::{Connection, params_from_iter};

use super::RetrievalError;
use super::context_render::{ContextData, RenderOptions, RenderedContext, has_summary_fields, render_context};
use super::records::{OBS_COLS, Observation, SUMMARY_COLS, Summary, json_list};
use super::reinforce::{Candidate, select};
use super::scope::{Conditions, Scope, placeholders, text_params};
use super::zone::Zone;
use crate::config::ContextSettings;
use crate::modes::Mode;

/// The observations that may be injected (issue 38): never a superseded one; a stale one (a
/// later commit changed a file it is about) only when nothing newer and current is anchored to
/// that file — it is then shown with its "changed since" marker.
pub const INJECTABLE: &str = "o.superseded_by IS NULL AND (o.stale_commit IS NULL OR NOT EXISTS (
    SELECT 1 FROM observation_anchors a
      JOIN observation_anchors b ON b.repo_root = a.repo_root AND b.path = a.path AND b.observation_id <> a.observation_id
      JOIN observations n ON n.id = b.observation_id
    WHERE a.observation_id = o.id AND a.path = o.stale_file AND n.created_at_epoch >= o.created_at_epoch
      AND n.stale_commit IS NULL AND n.superseded_by IS NULL AND n.quarantined = 0))";

/// Counts of a `full=true` request.
const FULL_OBSERVATIONS: usize = 200;
const FULL_SUMMARIES: usize = 50;
const POOL_MAX: usize = 500;

/// One context request (docs/spec/api.md §4.1).
#[derive(Debug, Clone, PartialEq)]
pub struct ContextRequest {
    /// Project chain, primary last (never empty).
    pub chain: Vec<String>,
    /// Normalised platform source (absent → `claude`).
    pub platform: String,
    pub full: bool,
    /// Explicit `maxChars`; else the setting.
    pub max_chars: Option<usize>,
    /// Lines of Claude Code's memory files loaded in this session (issue 39): an observation that
    /// only restates one is left out.
    pub memory_lines: Vec<(String, std::collections::BTreeSet<String>)>,
}

fn scope_of(req: &ContextRequest) -> Scope {
    Scope::new(Some(req.chain.clone()), Some(req.platform.clone()))
}

/// Selects and renders the context text.
pub fn context_inject(
    conn: &Connection,
    req: &ContextRequest,
    cfg: &ContextSettings,
    mode: &Mode,
    zone: &Zone,
    now_ms: i64,
) -> Result<RenderedContext, RetrievalError> {
    let scope = scope_of(req);
    let (n, n_summaries) = if req.full {
        (FULL_OBSERVATIONS, FULL_SUMMARIES)
    } else {
        (cfg.observations, cfg.summaries)
    };
    let pool_size = if cfg.reinforce_alpha > 0.0 { (5 * n).min(POOL_MAX) } else { n };
    // Room for the rows a memory file already says, left out below.
    let spare = if req.memory_lines.is_empty() { 0 } else { n.min(50) };
    let mut pool = newest_observations(conn, &scope, mode, cfg.drop_unused_after, pool_size + spare)?;
    prefer_used(
        &mut pool,
        used_observations(conn, &scope, mode, (n / USED_SHARE).max(1))?,
        pool_size + spare,
    );
    if spare > 0 {
        pool.retain(|o| {
            !crate::pipeline::restatement::restates(
                o.title.as_deref().unwrap_or_default(),
                o.narrative.as_deref().unwrap_or_default(),
                &req.memory_lines,
            )
        });
    }
    pool.truncate(pool_size);
    let observations = if cfg.reinforce_alpha > 0.0 {
        let candidates: Vec<Candidate> = pool
            .iter()
            .map(|o| Candidate {
                id: o.id,
                created_at_epoch: o.created_at_epoch,
                reinforcement_dates: json_list(&o.reinforcement_dates),
            })
            .collect();
        let chosen = select(&candidates, n, now_ms, cfg.reinforce_alpha);
        pool.into_iter().filter(|o| chosen.contains(&o.id)).collect()
    } else {
        pool
    };
    let summaries = newest_summaries(conn, &scope, n_summaries)?;
    let last_summary = if cfg.show_last_summary {
        last_summary(conn, &scope, &summaries)?
    } else {
        None
    };
    let data = ContextData {
        primary: req.chain.last().cloned().unwrap_or_default(),
        observations,
        summaries,
        last_summary,
        degraded: degraded_reason(conn)?,
    };
    let opts = RenderOptions {
        full_count: cfg.full_count,
        full_field_facts: cfg.full_field_facts,
        show_stats: cfg.show_stats,
        max_chars: req.max_chars.unwrap_or(cfg.max_chars),
    };
    Ok(render_context(&data, mode, &opts, zone, now_ms))
}

/// At most this share (1/n) of the index is given to records the agent used before.
const USED_SHARE: usize = 5;

/// The records the agent used (issue 53), most recently used first, in scope.
fn used_observations(conn: &Connection, scope: &Scope, mode: &Mode, limit: usize) -> Result<Vec<Observation>, RetrievalError> {
    let c = injectable_conditions(scope, mode);
    let sql = format!(
        "SELECT {OBS_COLS} FROM record_use u JOIN observations o ON o.id = u.observation_id WHERE u.used > 0{}
         ORDER BY u.last_used_epoch DESC LIMIT {limit}",
        c.sql
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params_from_iter(c.params.iter()), Observation::from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// `used` records join the pool (newest first, `size` kept): a used record already in it stays, one
/// older than the pool takes the place of the oldest unused row.
fn prefer_used(pool: &mut Vec<Observation>, used: Vec<Observation>, size: usize) {
    let known: std::collections::HashSet<i64> = pool.iter().map(|o| o.id).collect();
    let used_ids: std::collections::HashSet<i64> = used.iter().map(|o| o.id).collect();
    let add: Vec<Observation> = used.into_iter().filter(|o| !known.contains(&o.id)).collect();
    if add.is_empty() {
        return;
    }
    let room = size.saturating_sub(add.len());
    let mut kept = 0;
    pool.retain(|o| {
        let keep = used_ids.contains(&o.id) || kept < room;
        if keep && !used_ids.contains(&o.id) {
            kept += 1;
        }
        keep
    });
    pool.extend(add);
    pool.sort_by_key(|o| std::cmp::Reverse((o.created_at_epoch, o.id)));
}

fn injectable_conditions(scope: &Scope, mode: &Mode) -> Conditions {
    let mut c = Conditions::default();
    scope.conditions("o", true, &mut c);
    let types: Vec<String> = mode.type_ids().into_iter().map(String::from).collect();
    c.push(&format!("o.type IN ({})", placeholders(types.len())), text_params(&types));
    // Quarantined records are never injected (issue 36).
    c.push("o.quarantined = 0", []);
    c.push(INJECTABLE, []);
    c
}

fn newest_observations(
    conn: &Connection,
    scope: &Scope,
    mode: &Mode,
    drop_after: u64,
    limit: usize,
) -> Result<Vec<Observation>, RetrievalError> {
    let mut c = injectable_conditions(scope, mode);
    // Delivered often and never used: out of the index (still searchable), issue 53.
    if drop_after > 0 {
        c.push(
            "NOT EXISTS (SELECT 1 FROM record_use u WHERE u.observation_id = o.id AND u.used = 0 AND u.delivered >= ?)",
            [rusqlite::types::Value::Integer(drop_after as i64)],
        );
    }
    let sql = format!(
        "SELECT {OBS_COLS} FROM observations o WHERE 1=1{} ORDER BY o.created_at_epoch DESC, o.id DESC LIMIT {limit}",
        c.sql
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params_from_iter(c.params.iter()), Observation::from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn newest_summaries(conn: &Connection, scope: &Scope, limit: usize) -> Result<Vec<Summary>, RetrievalError> {
    if limit == 0 {
        return Ok(Vec::new());
    }
    let mut c = Conditions::default();
    scope.conditions("s", true, &mut c);
    c.push("s.quarantined = 0", []);
    let sql = format!(
        "SELECT {SUMMARY_COLS} FROM session_summaries s WHERE 1=1{} ORDER BY s.created_at_epoch DESC, s.id DESC LIMIT {limit}",
        c.sql
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params_from_iter(c.params.iter()), Summary::from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The newest summary in scope, when it has content and is newer than every observation in scope.
fn last_summary(conn: &Connection, scope: &Scope, selected: &[Summary]) -> Result<Option<Summary>, RetrievalError> {
    let newest = match selected.first() {
        Some(s) => Some(s.clone()),
        None => newest_summaries(conn, scope, 1)?.into_iter().next(),
    };
    let Some(summary) = newest.filter(has_summary_fields) else {
        return Ok(None);
    };
    let mut c = Conditions::default();
    scope.conditions("o", true, &mut c);
    let sql = format!("SELECT max(o.created_at_epoch) FROM observations o WHERE 1=1{}", c.sql);
    let newest_obs: Option<i64> = conn.query_row(&sql, params_from_iter(c.params.iter()), |r| r.get(0))?;
    Ok(newest_obs.is_none_or(|t| summary.created_at_epoch > t).then_some(summary))
}

/// `failed rows: <n>` when failed pending rows exist (the breaker states come with the LLM provider).
fn degraded_reason(conn: &Connection) -> Result<Option<String>, RetrievalError> {
    let failed: i64 = conn.query_row("SELECT count(*) FROM pending_messages WHERE status = 'failed'", [], |r| r.get(0))?;
    Ok((failed > 0).then(|| format!("failed rows: {failed}")))
}

#[cfg(test)]
#[path = "context_use_tests.rs"]
mod use_tests;
