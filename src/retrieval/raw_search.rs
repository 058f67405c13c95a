//! Search over the raw archive (issue 35): the query's selective words — those the raw index holds
//! in few calls, looked up in its vocabulary — are matched against every stored tool call's terms
//! (schema v5, `tool_uses_fts`), the input weighted above the response; each matching call
//! surfaces the observations made from it, filtered like any observation. Bounded: a word found
//! in more than [`selective_max`] calls (`where`, `file`, `change`) is not asked, so the matches
//! read stay few whatever the archive's size.

use std::collections::HashSet;

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, OptionalExtension, params_from_iter};

use super::RetrievalError;
use super::query::quote;
use super::record_kind::Kind;
use super::scope::Conditions;
use super::search_sql::Filters;
use crate::pipeline::terms::query_terms;

/// bm25 weights of the call's input and response: a call that wrote a word (an edit's new text, a
/// command) ranks above one that only read it back.
const WEIGHTS: &str = "4.0, 1.0";
/// Calls read per query at most (their observations are fewer).
const CALLS_MAX: usize = 2_000;

/// An observation surfaced by a raw call: its id, time and the best-matching call's row id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawHit {
    pub id: i64,
    pub at_ms: i64,
    pub call: i64,
}

/// The largest document frequency a word may have to be asked: 1 in 50 calls, at least 64.
pub fn selective_max(calls: i64) -> i64 {
    (calls / 50).max(64)
}

/// A plain English word of the query is asked only when at most this many calls hold it (an
/// identifier is asked up to [`selective_max`]): `change` or `file` in "where did we change X?"
/// would otherwise bring every call that says them.
const PLAIN_MAX: i64 = 3;

/// The query's words worth asking: identifiers found in at least one and at most
/// [`selective_max`] calls, plain words found in at most [`PLAIN_MAX`].
fn selective_words(conn: &Connection, query: &str) -> Result<Vec<String>, RetrievalError> {
    let words = query_terms(query);
    if words.is_empty() {
        return Ok(Vec::new());
    }
    let calls: i64 = conn.query_row("SELECT coalesce(max(id), 0) FROM tool_uses", [], |r| r.get(0))?;
    let max = selective_max(calls);
    let mut st = conn.prepare_cached("SELECT doc FROM tool_uses_vocab WHERE term = ?1")?;
    let mut out = Vec::new();
    for (w, identifier) in words {
        let df: Option<i64> = st.query_row([&w], |r| r.get(0)).optional()?;
        let cap = if identifier { max } else { PLAIN_MAX };
        if df.is_some_and(|d| d >= 1 && d <= cap) {
            out.push(w);
        }
    }
    Ok(out)
}

/// Observations whose calls match `query`'s selective words, best first, at most `limit`.
pub fn raw_hits(conn: &Connection, query: &str, filters: &Filters, limit: usize) -> Result<Vec<RawHit>, RetrievalError> {
    let words = selective_words(conn, query)?;
    if words.is_empty() {
        return Ok(Vec::new());
    }
    let expr = words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" OR ");
    let mut c = Conditions::default();
    filters.conditions(Kind::Observation, &mut c);
    let sql = format!(
        "WITH hits AS (SELECT rowid AS call, bm25(tool_uses_fts, {WEIGHTS}) AS score FROM tool_uses_fts
                       WHERE tool_uses_fts MATCH ? ORDER BY score LIMIT {CALLS_MAX})
         SELECT o.id, o.created_at_epoch, h.call FROM hits h
           JOIN observation_sources s ON s.tool_use_row_id = h.call
           JOIN observations o ON o.id = s.observation_id
         WHERE 1=1{} ORDER BY h.score, o.created_at_epoch DESC, o.id DESC",
        c.sql
    );
    let params = std::iter::once(SqlValue::Text(expr)).chain(c.params);
    let mut st = conn.prepare_cached(&sql)?;
    let mut rows = st.query(params_from_iter(params))?;
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let hit = RawHit {
            id: r.get(0)?,
            at_ms: r.get(1)?,
            call: r.get(2)?,
        };
        if seen.insert(hit.id) {
            out.push(hit);
            if out.len() >= limit {
                break;
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;

/// The weight of the raw list beside the observations' own keyword list.
const RAW_WEIGHT: f64 = 1.0;

/// Joins the raw hits to the observations among `all` (the keyword list): each observation scores
/// 1/(60 + its keyword position) + 1/(60 + its raw position); those matched with every term (tier 0)
/// or through a raw call are the strong group, ranked first by that score; the rest keep the fill
/// tier. Returns how many observations only a raw call found (they count in the total).
pub(crate) fn merge_raw(all: &mut Vec<super::search_types::Ranked>, raw: &[RawHit]) -> usize {
    use super::ids::RecordId;
    use super::search_types::Ranked;
    if raw.is_empty() {
        return 0;
    }
    let (mut obs, rest): (Vec<Ranked>, Vec<Ranked>) = all.drain(..).partition(|r| r.rid.kind == Kind::Observation);
    *all = rest;
    obs.sort_by_key(|r| (r.tier.min(1), r.rank, r.tier));
    let rrf = |pos: usize| 1.0 / (super::fusion::RRF_K + pos as f64);
    // (rid, time, score, strong, keyword position)
    let mut rows: Vec<(RecordId, i64, f64, bool, usize)> = obs
        .iter()
        .enumerate()
        .map(|(i, r)| (r.rid, r.at_ms, rrf(i + 1), r.tier == 0, i + 1))
        .collect();
    let mut only_raw = 0;
    for (j, h) in raw.iter().enumerate() {
        let rid = RecordId {
            kind: Kind::Observation,
            id: h.id,
        };
        match rows.iter_mut().find(|row| row.0 == rid) {
            Some(row) => {
                row.2 += RAW_WEIGHT * rrf(j + 1);
                row.3 = true;
            }
            None => {
                only_raw += 1;
                rows.push((rid, h.at_ms, RAW_WEIGHT * rrf(j + 1), true, usize::MAX));
            }
        }
    }
    rows.sort_by(|a, b| b.3.cmp(&a.3).then(b.2.total_cmp(&a.2)).then(a.4.cmp(&b.4)).then(b.1.cmp(&a.1)));
    let mut ranks = [0usize; 2];
    for (rid, at_ms, _, strong, _) in rows {
        let tier = if strong { 0 } else { 1 };
        ranks[tier as usize] += 1;
        all.push(Ranked {
            rid,
            at_ms,
            tier,
            rank: ranks[tier as usize],
        });
    }
    only_raw
}
