//! Search over the raw archive (issue 35): the query's selective words — those the raw index holds
//! in few calls, looked up in its vocabulary — are matched against every stored tool call's terms
//! (schema v14, `tool_uses_fts`); each matching call surfaces the observations made from it,
//! filtered like any observation. A call that *wrote* the words (an edit's new text: the
//! `written` column) comes before every call that only showed them (a read, a grep, a test log:
//! its input and response, the input weighted above the response) — issue 54. Bounded: a word
//! found in more than [`selective_max`] calls (`where`, `file`, `change`) is not asked, so the
//! matches read stay few whatever the archive's size; a query none of whose words is selective
//! asks its rarest word, newest calls first, so a word a stored call holds is always found.

use std::collections::HashSet;

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, OptionalExtension, params_from_iter};

use super::RetrievalError;
use super::query::quote;
use super::record_kind::Kind;
use super::scope::Conditions;
use super::search_sql::Filters;
use crate::pipeline::terms::query_terms;

/// bm25 weights of the call's written text, the rest of its input and its response: a call that
/// wrote a word (an edit's new text), or named it (a command), ranks above one that only read it
/// back.
const WEIGHTS: &str = "8.0, 4.0, 1.0";
/// The calls that wrote a word, ranked by what they wrote (and the rest of their input).
const WRITTEN_WEIGHTS: &str = "8.0, 4.0, 0.0";
/// For a query that does not ask for a change: a call's whole input above its response, as
/// before the written column (schema v5).
const PLAIN_WEIGHTS: &str = "4.0, 4.0, 1.0";
/// Calls read per query at most (their observations are fewer).
const CALLS_MAX: usize = 2_000;

/// An observation surfaced by a raw call: its id, time and the best-matching call's row id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawHit {
    pub id: i64,
    pub at_ms: i64,
    pub call: i64,
    /// The call wrote the words (an edit's new text), not only showed them.
    pub wrote: bool,
    /// Strong evidence: the call wrote the words, or holds a selective word (a rare identifier,
    /// a plain word few calls say); a call that only shows a common plain word is not.
    pub strong: bool,
}

/// The largest document frequency a word may have to be asked: 1 in 50 calls, at least 64.
pub fn selective_max(calls: i64) -> i64 {
    (calls / 50).max(64)
}

/// A plain English word of the query is asked only when at most this many calls hold it (an
/// identifier is asked up to [`selective_max`]): `change` or `file` in "where did we change X?"
/// would otherwise bring every call that says them.
const PLAIN_MAX: i64 = 3;

/// The rarest plain word of a query is asked when at most this many calls hold it (and no more
/// than [`selective_max`]): `transition` in "where did we change transition?" is what the
/// question is about, though a handful of calls say it.
const RAREST_PLAIN_MAX: i64 = 256;
/// Calls read, newest first, for a query none of whose words is selective.
const FALLBACK_CALLS: usize = CALLS_MAX;

/// How the query's words are asked.
#[derive(Debug, Default, PartialEq, Eq)]
struct Asked {
    /// Ranked by bm25: identifiers found in at least one and at most [`selective_max`] calls,
    /// plain words in at most [`PLAIN_MAX`], and the rarest plain word in at most
    /// [`RAREST_PLAIN_MAX`].
    selective: Vec<String>,
    /// The rarest word any call holds ([`raw_fallback`]).
    rarest: Option<String>,
    /// The only word asked is the rarest plain word, held by up to [`RAREST_PLAIN_MAX`] calls:
    /// a call that merely shows it is weak evidence (only one that wrote it is strong).
    plain_only: bool,
    /// The query asks where something was changed ([`asks_for_the_change`]).
    change: bool,
}

/// Words that ask where something was changed.
const CHANGE_WORDS: &[&str] = &[
    "change",
    "changed",
    "changes",
    "add",
    "added",
    "edit",
    "edited",
    "modify",
    "modified",
    "write",
    "wrote",
    "written",
    "update",
    "updated",
    "implement",
    "implemented",
    "introduce",
    "introduced",
    "fix",
    "fixed",
    "define",
    "defined",
];

/// The query asks where something was written: it names a change ("where did we change X?"), or
/// it is a lookup of one or two words. A longer description ("how did I check the build after
/// the fixes?") is about what happened, and a call that ran or showed its words is as good an
/// answer as one that wrote them.
fn asks_for_the_change(query: &str) -> bool {
    is_lookup(query)
        || query
            .split(|c: char| !c.is_alphanumeric())
            .any(|w| CHANGE_WORDS.contains(&w.to_lowercase().as_str()))
}

/// A bare lookup of one or two words (`transition`, `TodoStatus`), not a question ("how did I
/// run dialyzer again?" keeps two terms once its scaffolding is dropped, but asks what was run).
fn is_lookup(query: &str) -> bool {
    query.split_whitespace().count() <= 2
}

fn asked_words(conn: &Connection, query: &str) -> Result<Asked, RetrievalError> {
    let words = query_terms(query);
    let n_terms = words.len();
    if words.is_empty() {
        return Ok(Asked::default());
    }
    let calls: i64 = conn.query_row("SELECT coalesce(max(id), 0) FROM tool_uses", [], |r| r.get(0))?;
    let max = selective_max(calls);
    let mut st = conn.prepare_cached("SELECT doc FROM tool_uses_vocab WHERE term = ?1")?;
    let change = asks_for_the_change(query);
    let mut out = Asked {
        change,
        ..Asked::default()
    };
    let mut held: Vec<(i64, bool, String)> = Vec::new();
    for (w, identifier) in words {
        // "where did we introduce X": the verb asks for a change, it is not what was changed.
        if change && !identifier && CHANGE_WORDS.contains(&w.to_lowercase().as_str()) {
            continue;
        }
        let df: Option<i64> = st.query_row([&w], |r| r.get(0)).optional()?;
        let Some(df) = df.filter(|d| *d >= 1) else { continue };
        let cap = if identifier { max } else { PLAIN_MAX };
        if df <= cap {
            out.selective.push(w.clone());
        }
        held.push((df, identifier, w));
    }
    held.sort();
    let rarest_plain = held.iter().find(|(_, identifier, _)| !identifier);
    let short = n_terms <= 2 && change;
    if let Some((_, _, w)) = rarest_plain.filter(|(df, _, _)| *df <= RAREST_PLAIN_MAX.min(max) && short)
        && !out.selective.contains(w)
    {
        out.plain_only = out.selective.is_empty();
        out.selective.push(w.clone());
    }
    out.rarest = held.into_iter().next().map(|(_, _, w)| w);
    Ok(out)
}

/// Observations whose calls match `query`'s selective words, best first, at most `limit`: the
/// calls that wrote them first.
pub fn raw_hits(conn: &Connection, query: &str, filters: &Filters, limit: usize) -> Result<Vec<RawHit>, RetrievalError> {
    Ok(raw_search(conn, query, filters, limit)?.0)
}

/// [`raw_hits`], and the query's rarest word a call holds (what [`raw_fallback`] asks, so a search
/// that found nothing does not look the words up twice).
pub fn raw_search(
    conn: &Connection,
    query: &str,
    filters: &Filters,
    limit: usize,
) -> Result<(Vec<RawHit>, Option<String>), RetrievalError> {
    let asked = asked_words(conn, query)?;
    let rarest = asked.rarest.clone();
    let mut c = Conditions::default();
    filters.conditions(Kind::Observation, &mut c);
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    if asked.selective.is_empty() {
        return Ok((out, rarest));
    }
    let expr = asked.selective.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" OR ");
    // The calls matching a phase's expression, best bm25 first under `weights`.
    let ranked = |weights: &str| {
        format!(
            "SELECT rowid AS call, bm25(tool_uses_fts, {weights}) AS score FROM tool_uses_fts
             WHERE tool_uses_fts MATCH ? ORDER BY score LIMIT {CALLS_MAX}"
        )
    };
    let plain_only = asked.plain_only;
    if asked.change {
        let how = How { wrote: true, plain_only };
        let written = format!("written : ({expr})");
        collect(conn, &ranked(WRITTEN_WEIGHTS), written, &c, how, limit, &mut seen, &mut out)?;
    }
    let weights = if asked.change { WEIGHTS } else { PLAIN_WEIGHTS };
    let how = How { wrote: false, plain_only };
    collect(conn, &ranked(weights), expr, &c, how, limit, &mut seen, &mut out)?;
    Ok((out, rarest))
}

/// The observations of the newest calls that hold the query's rarest word, for a search that found
/// nothing else: a word a stored call holds is always found, however common (issue 54).
pub fn raw_fallback(conn: &Connection, rarest: Option<&str>, filters: &Filters, limit: usize) -> Result<Vec<RawHit>, RetrievalError> {
    let Some(w) = rarest else {
        return Ok(Vec::new());
    };
    let mut c = Conditions::default();
    filters.conditions(Kind::Observation, &mut c);
    let calls = format!(
        "SELECT rowid AS call, 0.0 AS score FROM tool_uses_fts WHERE tool_uses_fts MATCH ? ORDER BY rowid DESC LIMIT {FALLBACK_CALLS}"
    );
    let mut out = Vec::new();
    let how = How {
        wrote: false,
        plain_only: true,
    };
    collect(conn, &calls, quote(w), &c, how, limit, &mut HashSet::new(), &mut out)?;
    Ok(out)
}

/// What a phase of the raw search asks: the written column only, and whether only a common plain
/// word is asked.
#[derive(Clone, Copy)]
struct How {
    wrote: bool,
    plain_only: bool,
}

/// Appends the observations of the calls `calls` selects (`call`, `score`; best first) for the
/// match `expr`, filtered by `c`, until `out` holds `limit`.
#[allow(clippy::too_many_arguments)]
fn collect(
    conn: &Connection,
    calls: &str,
    expr: String,
    c: &Conditions,
    how: How,
    limit: usize,
    seen: &mut HashSet<i64>,
    out: &mut Vec<RawHit>,
) -> Result<(), RetrievalError> {
    if out.len() >= limit {
        return Ok(());
    }
    let sql = format!(
        "WITH hits AS ({calls})
         SELECT o.id, o.created_at_epoch, h.call, o.files_modified FROM hits h
           JOIN observation_sources s ON s.tool_use_row_id = h.call
           JOIN observations o ON o.id = s.observation_id
         WHERE 1=1{} ORDER BY h.score, h.call DESC, o.created_at_epoch DESC, o.id DESC",
        c.sql
    );
    let params = std::iter::once(SqlValue::Text(expr)).chain(c.params.iter().cloned());
    let mut st = conn.prepare_cached(&sql)?;
    let mut rows = st.query(params_from_iter(params))?;
    while let Some(r) = rows.next()? {
        let id: i64 = r.get(0)?;
        if !seen.insert(id) {
            continue;
        }
        let call: i64 = r.get(2)?;
        // The change is an observation that records the edit of the file this call wrote: not a
        // read the batch ran beside the write, nor another edit of the same batch.
        let wrote = how.wrote && records_the_edit(conn, call, r.get::<_, Option<String>>(3)?.as_deref())?;
        out.push(RawHit {
            id,
            at_ms: r.get(1)?,
            call,
            wrote,
            strong: wrote || !how.plain_only,
        });
        if out.len() >= limit {
            break;
        }
    }
    Ok(())
}

/// Whether an observation whose `files_modified` is `modified` records the edit made by `call`:
/// one of its files is named in the call's input (a path is relative or absolute; a patch names
/// its files in its text).
fn records_the_edit(conn: &Connection, call: i64, modified: Option<&str>) -> Result<bool, RetrievalError> {
    let files: Vec<String> = modified.and_then(|m| serde_json::from_str(m).ok()).unwrap_or_default();
    let mut st = conn.prepare_cached("SELECT instr(tool_input, ?2) > 0 FROM tool_uses WHERE id = ?1")?;
    for f in files.iter().filter(|f| !f.is_empty()) {
        let named: Option<bool> = st.query_row(rusqlite::params![call, f], |r| r.get(0)).optional()?;
        if named == Some(true) {
            return Ok(true);
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests;

/// The weight of the raw list beside the observations' own keyword list.
const RAW_WEIGHT: f64 = 1.0;

/// Joins the raw hits to the observations among `all` (the keyword list): each observation scores
/// 1/(60 + its keyword position) + 1/(60 + its raw position); those matched with every term (tier 0)
/// or through a strong raw hit are the strong group, ranked first — edits made by a call that wrote
/// the words before the rest, in the raw index's order (issue 54), then by that score; the rest,
/// and observations a call only showed a common word in, keep the fill tier.
/// Returns how many observations only a raw call found (they count in the total).
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
    struct Row {
        rid: RecordId,
        at_ms: i64,
        score: f64,
        strong: bool,
        wrote: bool,
        keyword_pos: usize,
        raw_pos: usize,
    }
    let mut rows: Vec<Row> = obs
        .iter()
        .enumerate()
        .map(|(i, r)| Row {
            rid: r.rid,
            at_ms: r.at_ms,
            score: rrf(i + 1),
            strong: r.tier == 0,
            wrote: false,
            keyword_pos: i + 1,
            raw_pos: usize::MAX,
        })
        .collect();
    let mut only_raw = 0;
    for (j, h) in raw.iter().enumerate() {
        let rid = RecordId {
            kind: Kind::Observation,
            id: h.id,
        };
        match rows.iter_mut().find(|row| row.rid == rid) {
            Some(row) => {
                row.score += RAW_WEIGHT * rrf(j + 1);
                row.strong |= h.strong;
                row.wrote |= h.wrote;
                row.raw_pos = row.raw_pos.min(j);
            }
            None => {
                only_raw += 1;
                rows.push(Row {
                    rid,
                    at_ms: h.at_ms,
                    score: RAW_WEIGHT * rrf(j + 1),
                    strong: h.strong,
                    wrote: h.wrote,
                    keyword_pos: usize::MAX,
                    raw_pos: j,
                });
            }
        }
    }
    rows.sort_by(|a, b| {
        b.strong
            .cmp(&a.strong)
            .then(b.wrote.cmp(&a.wrote))
            // Among the edits that wrote the words, the raw index's order (bm25 over what each
            // wrote: the edit about the word before a large one that mentions it among many).
            .then(if a.wrote && b.wrote {
                a.raw_pos.cmp(&b.raw_pos)
            } else {
                std::cmp::Ordering::Equal
            })
            .then(b.score.total_cmp(&a.score))
            .then(a.keyword_pos.cmp(&b.keyword_pos))
            .then(b.at_ms.cmp(&a.at_ms))
    });
    let mut ranks = [0usize; 2];
    for row in rows {
        let tier = if row.strong { 0 } else { 1 };
        ranks[tier as usize] += 1;
        all.push(Ranked {
            rid: row.rid,
            at_ms: row.at_ms,
            tier,
            rank: ranks[tier as usize],
        });
    }
    only_raw
}
