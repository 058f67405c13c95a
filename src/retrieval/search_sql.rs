//! Keyword candidate queries of one record kind (docs/spec/retrieval.md §4.3): the FTS5 match (word
//! and/or trigram index, intersected on rowid), LIKE for short CJK terms, and every filter as SQL
//! conditions of the same query, so ranks are within the filtered set. Speed at 100,000 rows: an
//! unfiltered match is ranked and counted inside FTS5; a filtered one joins the covering filter
//! index of schema v3 rather than whole rows (docs/decisions.md, retrieval).

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, params_from_iter};

use super::RetrievalError;
use super::query::Form;
use super::record_kind::Kind;
use super::scope::{Conditions, Scope, placeholders, text_params};

/// Keyword candidates per kind and tier.
pub const CANDIDATES: usize = 100;
/// Totals are counted up to this many (shown as `10,000+` above).
pub const COUNT_CAP: usize = 10_000;

/// Table facts of one kind.
pub struct KindSpec {
    pub table: &'static str,
    pub alias: &'static str,
    pub fts: &'static str,
    pub tri: &'static str,
    pub weights: &'static str,
    pub columns: &'static [&'static str],
    pub merged: bool,
    /// Covering index keyed by id with every indexable filter column (schema v3).
    pub filter_index: &'static str,
}

pub fn spec(kind: Kind) -> &'static KindSpec {
    const OBS: KindSpec = KindSpec {
        table: "observations",
        alias: "o",
        fts: "observations_fts",
        tri: "observations_tri",
        weights: "10.0, 5.0, 3.0, 3.0, 1.0",
        columns: &["title", "subtitle", "narrative", "facts", "concepts"],
        merged: true,
        filter_index: "observations_search_filter",
    };
    const SUM: KindSpec = KindSpec {
        table: "session_summaries",
        alias: "s",
        fts: "session_summaries_fts",
        tri: "session_summaries_tri",
        weights: "5.0, 2.0, 3.0, 3.0, 2.0, 1.0",
        columns: &["request", "investigated", "learned", "completed", "next_steps", "notes"],
        merged: true,
        filter_index: "session_summaries_search_filter",
    };
    const PROMPT: KindSpec = KindSpec {
        table: "user_prompts",
        alias: "p",
        fts: "user_prompts_fts",
        tri: "user_prompts_tri",
        weights: "1.0",
        columns: &["prompt_text"],
        merged: false,
        filter_index: "user_prompts_search_filter",
    };
    match kind {
        Kind::Observation => &OBS,
        Kind::Summary => &SUM,
        Kind::Prompt => &PROMPT,
    }
}

/// The match part of a candidate query.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MatchSpec {
    pub words: Option<String>,
    pub trigrams: Option<String>,
    pub likes: Vec<String>,
    /// `words` is a natural-mode OR of these forms, one group per query word: its ranking may be
    /// pruned ([`super::search_prune`]). Empty for every other match.
    pub groups: Vec<Vec<Form>>,
}

impl MatchSpec {
    pub fn is_empty(&self) -> bool {
        self.words.is_none() && self.trigrams.is_none() && self.likes.is_empty()
    }
}

/// SQL filters other than the match.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filters {
    pub scope: Scope,
    pub obs_types: Vec<String>,
    pub concepts: Vec<String>,
    pub files: Vec<String>,
    pub date_start: Option<i64>,
    pub date_end: Option<i64>,
    /// Only records of these provenances (a prompt is the user's own).
    pub provenance: Vec<String>,
    /// Only this machine's records, or only the team's (pulled from the team server).
    pub origin: Option<OriginFilter>,
}

/// The summaries pulled from the team server.
const PULLED_SUMMARIES: &str = "SELECT summary_id FROM team_rows WHERE mine = 0 AND summary_id IS NOT NULL";

/// `origin=mine|team` (issue 40): a pulled observation's `imported_from` is `team:<origin>`, a
/// pulled summary is in `team_rows`; prompts are always this machine's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OriginFilter {
    Mine,
    Team,
}

impl OriginFilter {
    /// `mine`, `team`; `all` (or nothing) is no filter.
    pub fn parse(s: &str) -> Result<Option<Self>, super::RetrievalError> {
        match s.trim() {
            "" | "all" => Ok(None),
            "mine" => Ok(Some(Self::Mine)),
            "team" => Ok(Some(Self::Team)),
            other => Err(super::RetrievalError::Invalid(format!(
                "origin {other:?} must be mine, team or all"
            ))),
        }
    }

    fn conditions(self, k: Kind, a: &str, out: &mut Conditions) {
        match (self, k) {
            (Self::Team, Kind::Observation) => out.push(&format!("coalesce({a}.imported_from, '') LIKE 'team:%'"), []),
            (Self::Mine, Kind::Observation) => out.push(&format!("coalesce({a}.imported_from, '') NOT LIKE 'team:%'"), []),
            (Self::Team, Kind::Summary) => out.push(&format!("{a}.id IN ({PULLED_SUMMARIES})"), []),
            (Self::Mine, Kind::Summary) => out.push(&format!("{a}.id NOT IN ({PULLED_SUMMARIES})"), []),
            (Self::Team, _) => out.push("0", []),
            (Self::Mine, _) => {}
        }
    }
}

impl Filters {
    /// The conditions for kind `k` on its alias.
    pub fn conditions(&self, k: Kind, out: &mut Conditions) {
        let s = spec(k);
        let a = s.alias;
        self.scope.conditions(a, s.merged, out);
        if let Some(t) = self.date_start {
            out.push(&format!("{a}.created_at_epoch >= ?"), [SqlValue::Integer(t)]);
        }
        if let Some(t) = self.date_end {
            out.push(&format!("{a}.created_at_epoch <= ?"), [SqlValue::Integer(t)]);
        }
        if k == Kind::Observation && !self.obs_types.is_empty() {
            out.push(
                &format!("{a}.type IN ({})", placeholders(self.obs_types.len())),
                text_params(&self.obs_types),
            );
        }
        if k == Kind::Observation && !self.concepts.is_empty() {
            out.push(
                &format!(
                    "EXISTS (SELECT 1 FROM json_each({a}.concepts) WHERE value IN ({}))",
                    placeholders(self.concepts.len())
                ),
                text_params(&self.concepts),
            );
        }
        if !self.provenance.is_empty() {
            match k {
                Kind::Prompt if self.provenance.iter().any(|p| p == "user") => {}
                Kind::Prompt => out.push("0", []),
                _ => out.push(
                    &format!("{a}.provenance IN ({})", placeholders(self.provenance.len())),
                    text_params(&self.provenance),
                ),
            }
        }
        if let Some(o) = self.origin {
            o.conditions(k, a, out);
        }
        if !self.files.is_empty() {
            let cols: [&str; 2] = match k {
                Kind::Summary => ["files_read", "files_edited"],
                _ => ["files_read", "files_modified"],
            };
            let any = vec!["instr(value, ?) > 0"; self.files.len()].join(" OR ");
            let sql = format!(
                "(EXISTS (SELECT 1 FROM json_each({a}.{}) WHERE {any}) OR EXISTS (SELECT 1 FROM json_each({a}.{}) WHERE {any}))",
                cols[0], cols[1]
            );
            out.push(&sql, text_params(&self.files).chain(text_params(&self.files)));
        }
    }
}

/// `FROM … WHERE …` of a candidate query and the rank expression.
fn from_where(k: Kind, m: &MatchSpec, f: &Filters) -> (String, String, Vec<SqlValue>) {
    let s = spec(k);
    let a = s.alias;
    let mut params = Vec::new();
    // Every FTS5 match is joined to its table; when the conditions read only columns of the
    // covering filter index (schema v3), the join reads that index instead of whole rows.
    let joined = if m.likes.is_empty() && f.concepts.is_empty() && f.files.is_empty() {
        format!("{} {a} INDEXED BY {}", s.table, s.filter_index)
    } else {
        format!("{} {a}", s.table)
    };
    let (from, rank) = match (&m.words, &m.trigrams) {
        (Some(w), _) => {
            params.push(SqlValue::Text(w.clone()));
            (
                format!("{fts} JOIN {joined} ON {a}.id = {fts}.rowid WHERE {fts} MATCH ?", fts = s.fts),
                format!("bm25({}, {})", s.fts, s.weights),
            )
        }
        (None, Some(t)) => {
            params.push(SqlValue::Text(t.clone()));
            (
                format!("{tri} JOIN {joined} ON {a}.id = {tri}.rowid WHERE {tri} MATCH ?", tri = s.tri),
                format!("bm25({}, {})", s.tri, s.weights),
            )
        }
        (None, None) => (format!("{} {a} WHERE 1=1", s.table), "0.0".to_string()),
    };
    let mut c = Conditions::default();
    if let (Some(_), Some(t)) = (&m.words, &m.trigrams) {
        c.push(
            &format!("{a}.id IN (SELECT rowid FROM {tri} WHERE {tri} MATCH ?)", tri = s.tri),
            [SqlValue::Text(t.clone())],
        );
    }
    for pattern in &m.likes {
        let any = s
            .columns
            .iter()
            .map(|col| format!("{a}.{col} LIKE ? ESCAPE '\\'"))
            .collect::<Vec<_>>()
            .join(" OR ");
        c.push(
            &format!("({any})"),
            std::iter::repeat_n(SqlValue::Text(pattern.clone()), s.columns.len()),
        );
    }
    f.conditions(k, &mut c);
    params.extend(c.params);
    (format!("{from}{}", c.sql), rank, params)
}

/// One candidate: id and time (rank order is the list order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Candidate {
    pub id: i64,
    pub at_ms: i64,
}

/// The FTS5 table and expression of `m` when it is one FTS5 match and no filter applies: such a
/// match is ranked and counted inside FTS5, without joining the table for every matching row.
fn fts_only<'m>(k: Kind, m: &'m MatchSpec, f: &Filters) -> Option<(&'static str, &'m str)> {
    if !m.likes.is_empty() || *f != Filters::default() {
        return None;
    }
    match (&m.words, &m.trigrams) {
        (Some(w), None) => Some((spec(k).fts, w)),
        (None, Some(t)) => Some((spec(k).tri, t)),
        _ => None,
    }
}

/// Whether [`candidates`] of `m` read every match anyway (a joined query ranks every filtered
/// match; a newest-first one scans for them), so reading up to [`COUNT_CAP`] + 1 of them counts
/// the matches at little extra cost. False for a match ranked inside FTS5, which counts cheaper alone.
pub fn counts_while_ranking(k: Kind, m: &MatchSpec, f: &Filters) -> bool {
    fts_only(k, m, f).is_none()
}

/// The top `limit` of an unfiltered FTS5 match: bm25 ranks inside FTS5 and the rows are read in
/// score order up to the `limit`-th and every row tied with it; only those are looked up for
/// their time (the tie-break), through the covering filter index.
fn ranked_in_fts(
    conn: &Connection,
    k: Kind,
    fts: &str,
    expr: &str,
    groups: &[Vec<Form>],
    limit: usize,
) -> Result<Vec<Candidate>, RetrievalError> {
    let s = spec(k);
    let pruned = if groups.is_empty() || fts != s.fts {
        None
    } else {
        super::search_prune::ranked_pruned(conn, fts, s.weights, expr, groups, limit)?
    };
    let scored = match pruned {
        Some(scored) => scored,
        None => ranked_all(conn, fts, s.weights, expr, limit)?,
    };
    if scored.is_empty() {
        return Ok(Vec::new());
    }
    let ids = format!("[{}]", scored.iter().map(|(id, _)| id.to_string()).collect::<Vec<_>>().join(","));
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT id, created_at_epoch FROM {} INDEXED BY {} WHERE id IN (SELECT value FROM json_each(?1))",
        s.table, s.filter_index
    ))?;
    let times: std::collections::HashMap<i64, i64> = stmt.query_map([ids], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<Result<_, _>>()?;
    let mut list: Vec<(f64, Candidate)> = scored
        .into_iter()
        .filter_map(|(id, score)| times.get(&id).map(|&at_ms| (score, Candidate { id, at_ms })))
        .collect();
    list.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.at_ms.cmp(&a.1.at_ms)).then(b.1.id.cmp(&a.1.id)));
    list.truncate(limit);
    Ok(list.into_iter().map(|(_, c)| c).collect())
}

/// Every match of `expr` scored by bm25, read in score order up to the `limit`-th and its ties.
pub(super) fn ranked_all(conn: &Connection, fts: &str, weights: &str, expr: &str, limit: usize) -> Result<Vec<(i64, f64)>, RetrievalError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT rowid, bm25({fts}, {weights}) FROM {fts} WHERE {fts} MATCH ?1 ORDER BY 2"
    ))?;
    top_scored(stmt.query([expr])?, limit)
}

/// `(rowid, score)` rows in score order, read up to the `limit`-th and every row tied with it.
pub(super) fn top_scored(mut rows: rusqlite::Rows<'_>, limit: usize) -> Result<Vec<(i64, f64)>, RetrievalError> {
    let mut scored: Vec<(i64, f64)> = Vec::new();
    while let Some(row) = rows.next()? {
        let (id, score): (i64, f64) = (row.get(0)?, row.get(1)?);
        if scored.len() >= limit && scored.last().is_none_or(|last| last.1 != score) {
            break;
        }
        scored.push((id, score));
    }
    Ok(scored)
}

/// Top `limit` candidates of kind `k`: by bm25 when there is a match, else newest first.
pub fn candidates(conn: &Connection, k: Kind, m: &MatchSpec, f: &Filters, limit: usize) -> Result<Vec<Candidate>, RetrievalError> {
    match fts_only(k, m, f) {
        Some((fts, expr)) => ranked_in_fts(conn, k, fts, expr, &m.groups, limit),
        None => joined_candidates(conn, k, m, f, limit),
    }
}

/// [`candidates`] by one query joining every match to its table (filters apply there).
fn joined_candidates(conn: &Connection, k: Kind, m: &MatchSpec, f: &Filters, limit: usize) -> Result<Vec<Candidate>, RetrievalError> {
    let (fw, rank, params) = from_where(k, m, f);
    let a = spec(k).alias;
    let order = if m.words.is_some() || m.trigrams.is_some() {
        format!("{rank}, {a}.created_at_epoch DESC, {a}.id DESC")
    } else {
        format!("{a}.created_at_epoch DESC, {a}.id DESC")
    };
    let sql = format!("SELECT {a}.id, {a}.created_at_epoch FROM {fw} ORDER BY {order} LIMIT {limit}");
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params_from_iter(params.iter()), |r| {
        Ok(Candidate {
            id: r.get(0)?,
            at_ms: r.get(1)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Number of distinct rows matching any of `matches` (an empty match = filters only), up to
/// [`COUNT_CAP`] + 1. Unfiltered matches of one FTS5 index are counted as one expression, their
/// OR, which FTS5 merges by rowid: cheaper than a SQL UNION of their rows (9 ms against 3 for the
/// 10,001 rows of a sentence at 100,000 observations).
pub fn count(conn: &Connection, k: Kind, matches: &[&MatchSpec], f: &Filters) -> Result<usize, RetrievalError> {
    let a = spec(k).alias;
    let mut parts = Vec::new();
    let mut params = Vec::new();
    let mut by_index: Vec<(&str, Vec<&str>)> = Vec::new();
    for m in matches {
        if let Some((fts, expr)) = fts_only(k, m, f) {
            match by_index.iter_mut().find(|(t, _)| *t == fts) {
                Some((_, exprs)) => exprs.push(expr),
                None => by_index.push((fts, vec![expr])),
            }
        } else {
            let (fw, _, p) = from_where(k, m, f);
            parts.push(format!("SELECT {a}.id FROM {fw}"));
            params.extend(p);
        }
    }
    for (fts, exprs) in by_index {
        let expr = match exprs.as_slice() {
            [one] => one.to_string(),
            many => many.iter().map(|e| format!("({e})")).collect::<Vec<_>>().join(" OR "),
        };
        parts.push(format!("SELECT rowid FROM {fts} WHERE {fts} MATCH ?"));
        params.push(SqlValue::Text(expr));
    }
    if parts.is_empty() {
        return Ok(0);
    }
    let sql = format!("SELECT count(*) FROM ({} LIMIT {})", parts.join(" UNION "), COUNT_CAP + 1);
    let n: i64 = conn.query_row(&sql, params_from_iter(params.iter()), |r| r.get(0))?;
    Ok(n as usize)
}

#[cfg(test)]
mod tests;
