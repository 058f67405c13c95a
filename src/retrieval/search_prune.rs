//! Exact pruning of a natural-mode ranking (docs/decisions.md "Ranking fewer rows, exactly"). FTS5
//! computes bm25 for every row an OR expression matches — at 100,000 rows a sentence of common words
//! matches tens of thousands, and the per-row score (a document-size lookup each) is most of a
//! search's time. A row matching only one query word `g` scores less than
//! Σ idf(p)·(k1 + 1) over `g`'s forms `p` (bm25's term part is below that for any frequency), so
//! when the `limit`-th best row among those matching two words or more already beats every such
//! bound, ranking only those rows gives the same list. Otherwise the caller ranks every match.
//! Those rows are ranked by one expression of disjoint cases that FTS5 scores exactly as the OR
//! (up to [`DISJOINT_MAX`] groups), else as the OR's rows found among the pairs'.
//!
//! The bound uses upper estimates only: the index's row count from its averages record and, per
//! form, the largest document count of a vocabulary term it matches (the form's own count is at
//! least that, so its idf at most the one used). A form whose count cannot be read (not ASCII, the
//! tokenizer may fold it) is assumed to match one row, which keeps the bound safe and large.

use rusqlite::{Connection, OptionalExtension};

use super::RetrievalError;
use super::query::Form;
use crate::store::open::vocabulary;

/// FTS5's bm25 constants (fts5_aux.c).
const K1: f64 = 1.2;
/// Pair expressions grow with the square of the words; past this many the full ranking is cheaper.
const MAX_GROUPS: usize = 6;
/// Up to this many groups with hits the rows of two words or more are ranked as disjoint cases
/// ([`disjoint`]); above it, as the OR's rows found among the pairs' ([`pairs`]). Each group is
/// written once per case, and FTS5 scans every phrase's rows for its idf, so the disjoint form
/// costs more idf scans as groups grow (docs/measurements.md).
const DISJOINT_MAX: usize = 4;

/// The rows of `expr` (the OR of every form of `groups`) scored by bm25 in score order, up to the
/// `limit`-th and every row tied with it — or None when pruning cannot prove that list equals the
/// full ranking's (the caller then ranks every match).
pub fn ranked_pruned(
    conn: &Connection,
    fts: &str,
    weights: &str,
    expr: &str,
    groups: &[Vec<Form>],
    limit: usize,
) -> Result<Option<Vec<(i64, f64)>>, RetrievalError> {
    if limit == 0 || !distinct_forms(groups) {
        return Ok(None);
    }
    let Some(rows) = index_rows(conn, fts)? else { return Ok(None) };
    if !has_vocabulary(conn, fts) {
        return Ok(None);
    }
    let mut live: Vec<(&Vec<Form>, f64)> = Vec::new();
    for g in groups {
        let mut bound = 0.0;
        let mut hits = false;
        for f in g {
            if let Some(n) = min_hits(conn, fts, f)? {
                hits = true;
                bound += idf(rows, n) * (K1 + 1.0);
            }
        }
        if hits {
            live.push((g, bound));
        }
    }
    if live.len() < 2 || live.len() > MAX_GROUPS {
        return Ok(None);
    }
    let single_best = live.iter().map(|(_, b)| *b).fold(0.0, f64::max);
    let live: Vec<&Vec<Form>> = live.iter().map(|(g, _)| *g).collect();
    let scored = if live.len() <= DISJOINT_MAX {
        super::search_sql::ranked_all(conn, fts, weights, &disjoint(&live), limit)?
    } else {
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT rowid, bm25({fts}, {weights}) FROM {fts} WHERE {fts} MATCH ?1
             AND +rowid IN (SELECT rowid FROM {fts} WHERE {fts} MATCH ?2) ORDER BY 2"
        ))?;
        super::search_sql::top_scored(stmt.query([expr, pairs(&live).as_str()])?, limit)?
    };
    // bm25 is negated by FTS5: the better row has the lower score.
    let proven = scored.len() >= limit && -scored[limit - 1].1 > single_best;
    Ok(proven.then_some(scored))
}

/// Each form appears once across the groups (so the expression's phrases are the groups' forms).
fn distinct_forms(groups: &[Vec<Form>]) -> bool {
    let all: Vec<&Form> = groups.iter().flatten().collect();
    all.iter().enumerate().all(|(i, f)| !all[..i].contains(f))
}

/// FTS5's idf of a phrase matching `n` of `rows` rows (fts5_aux.c: floored at 1e-6).
fn idf(rows: u64, n: u64) -> f64 {
    let (rows, n) = (rows as f64, n as f64);
    let v = ((rows - n + 0.5) / (n + 0.5)).ln();
    if v <= 0.0 { 1e-6 } else { v }
}

/// `(g1) AND (g2) OR …` over every pair of groups: the rows matching two words or more.
fn pairs(groups: &[&Vec<Form>]) -> String {
    let mut out = Vec::new();
    for (i, a) in groups.iter().enumerate() {
        for b in &groups[i + 1..] {
            out.push(format!("({} AND {})", any(a), any(b)));
        }
    }
    out.join(" OR ")
}

/// The rows matching two groups or more as disjoint cases, one per first group matched:
/// `(g1 AND (g2 OR … OR gn)) OR ((g2 AND (g3 OR …)) NOT g1) OR …`. A row matches exactly one
/// case, and FTS5 reports a phrase's hits only where its subtree matches, so bm25 over this
/// expression counts each form of the row once, in the groups' order: the score the OR of the
/// forms gives (a test compares them row by row), without ranking every OR match.
fn disjoint(groups: &[&Vec<Form>]) -> String {
    let or = |gs: &[&Vec<Form>]| gs.iter().map(|g| any(g)).collect::<Vec<_>>().join(" OR ");
    let mut out = Vec::new();
    for i in 0..groups.len().saturating_sub(1) {
        let case = format!("({} AND ({}))", any(groups[i]), or(&groups[i + 1..]));
        out.push(if i == 0 {
            case
        } else {
            format!("({case} NOT ({}))", or(&groups[..i]))
        });
    }
    out.join(" OR ")
}

/// One group as an FTS5 expression: the OR of its forms, parenthesised.
fn any(g: &[Form]) -> String {
    format!("({})", g.iter().map(Form::expr).collect::<Vec<_>>().join(" OR "))
}

/// The row count of the FTS5 index: the first varint of its averages record (`_data` id 1).
fn index_rows(conn: &Connection, fts: &str) -> Result<Option<u64>, RetrievalError> {
    let block: Option<Vec<u8>> = conn
        .query_row(&format!("SELECT block FROM {fts}_data WHERE id = 1"), [], |r| r.get(0))
        .optional()?;
    Ok(block.and_then(|b| varint(&b)))
}

/// SQLite's varint (1–9 bytes, big-endian 7-bit groups, the ninth byte whole), as FTS5 writes it.
fn varint(b: &[u8]) -> Option<u64> {
    let mut v: u64 = 0;
    for (i, &x) in b.iter().take(9).enumerate() {
        if i == 8 {
            return Some((v << 8) | u64::from(x));
        }
        v = (v << 7) | u64::from(x & 0x7f);
        if x & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// Whether `conn` has (or could create) the vocabulary view of `fts`.
fn has_vocabulary(conn: &Connection, fts: &str) -> bool {
    let exists = |c: &Connection| c.prepare_cached(&format!("SELECT 1 FROM {} LIMIT 0", vocabulary(fts))).is_ok();
    exists(conn) || (crate::store::open::create_vocabularies(conn).is_ok() && exists(conn))
}

/// A lower bound of the rows form `f` matches: None when it matches none, 1 when its count cannot
/// be read (the bound then stays safe), else the largest document count of a term it matches.
fn min_hits(conn: &Connection, fts: &str, f: &Form) -> Result<Option<u64>, RetrievalError> {
    let plain = f.token.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    if !plain {
        return Ok(Some(1));
    }
    let vocab = vocabulary(fts);
    let n: Option<i64> = if f.prefix {
        // Every term starting with the token sorts in [token, token + U+10FFFF).
        let end = format!("{}\u{10FFFF}", f.token);
        conn.prepare_cached(&format!("SELECT max(doc) FROM {vocab} WHERE term >= ?1 AND term < ?2"))?
            .query_row([f.token.as_str(), end.as_str()], |r| r.get(0))?
    } else {
        conn.prepare_cached(&format!("SELECT doc FROM {vocab} WHERE term = ?1"))?
            .query_row([f.token.as_str()], |r| r.get(0))
            .optional()?
    };
    Ok(n.filter(|n| *n > 0).map(|n| n as u64))
}

#[cfg(test)]
mod tests;
