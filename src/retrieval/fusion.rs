//! Hybrid ranking (docs/spec/retrieval.md §4.5): keyword and vector candidates fused by weighted
//! reciprocal-rank fusion, Σ weight/(k + rank) over the lists a row appears in ([`Fusion`] from the
//! settings; the defaults and their benchmark figures: docs/decisions.md "Hybrid fusion"). Vector
//! candidates below the similarity floor count for nothing; vector-only rows are admitted when they
//! pass the SQL filters; ties go to the better keyword rank, then the kind order (observation,
//! summary, prompt), then the newer row.

use std::collections::HashMap;

use rusqlite::{Connection, params_from_iter};

use super::RetrievalError;
use super::ids::RecordId;
use super::record_kind::Kind;
use super::scope::{Conditions, placeholders};
use super::search_sql::spec;
use super::search_types::{Ranked, SearchRequest};

pub use crate::config::Fusion;

/// The RRF constant of the plain fusions ([`merge_lists`]).
pub const RRF_K: f64 = 60.0;

/// A vector candidate: the row and its cosine similarity to the query (1 = same direction).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Near {
    pub rid: RecordId,
    pub similarity: f32,
}

/// A row's fused score and its keyword rank within its kind (None = vector-only).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fused {
    pub score: f64,
    pub keyword_rank: Option<usize>,
}

fn rrf(rank: usize) -> f64 {
    1.0 / (RRF_K + rank as f64)
}

/// Rows of kind `k` among `ids` that pass the request's filters, with their times.
fn admitted(conn: &Connection, k: Kind, ids: &[i64], req: &SearchRequest) -> Result<Vec<(i64, i64)>, RetrievalError> {
    let s = spec(k);
    let a = s.alias;
    let mut c = Conditions::default();
    req.filters.conditions(k, &mut c);
    let sql = format!(
        "SELECT {a}.id, {a}.created_at_epoch FROM {} {a} WHERE {a}.id IN ({}){}",
        s.table,
        placeholders(ids.len()),
        c.sql
    );
    let params = ids.iter().map(|i| rusqlite::types::Value::Integer(*i)).chain(c.params);
    let mut st = conn.prepare(&sql)?;
    let rows = st.query_map(params_from_iter(params), |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Scores every keyword row, adds the vector list (`vector`: rows in rank order, one entry per
/// row), admits vector-only rows that pass the filters (counted in `totals`), and returns the scores.
pub(super) fn fuse(
    conn: &Connection,
    req: &SearchRequest,
    all: &mut Vec<Ranked>,
    totals: &mut [usize; 3],
    vector: &[Near],
    p: &Fusion,
) -> Result<HashMap<RecordId, Fused>, RetrievalError> {
    let weighted = |w: f64, rank: usize| w / (p.rrf_k + rank as f64);
    let mut scores: HashMap<RecordId, Fused> = HashMap::new();
    for kind in [Kind::Observation, Kind::Summary, Kind::Prompt] {
        let mut mine: Vec<&Ranked> = all.iter().filter(|r| r.rid.kind == kind).collect();
        mine.sort_by_key(|r| (r.tier.min(1), r.rank, r.tier));
        for (i, r) in mine.into_iter().enumerate() {
            scores.insert(
                r.rid,
                Fused {
                    score: weighted(p.keyword_weight, i + 1),
                    keyword_rank: Some(i + 1),
                },
            );
        }
    }
    let kinds = req.effective_kinds();
    let mut vector_only: HashMap<Kind, Vec<(i64, f64)>> = HashMap::new();
    let admitted_vectors = vector.iter().filter(|n| n.similarity >= p.vector_floor);
    for (i, rid) in admitted_vectors.map(|n| &n.rid).enumerate() {
        let add = weighted(p.vector_weight, i + 1);
        match scores.get_mut(rid) {
            Some(f) => f.score += add,
            None if kinds.contains(&rid.kind) => vector_only.entry(rid.kind).or_default().push((rid.id, add)),
            None => {}
        }
    }
    for (kind, rows) in vector_only {
        let ids: Vec<i64> = rows.iter().map(|(id, _)| *id).collect();
        let pass: HashMap<i64, i64> = admitted(conn, kind, &ids, req)?.into_iter().collect();
        for (id, add) in rows {
            let Some(&at_ms) = pass.get(&id) else { continue };
            let rid = RecordId { kind, id };
            all.push(Ranked {
                rid,
                at_ms,
                tier: u8::MAX,
                rank: usize::MAX,
            });
            scores.insert(
                rid,
                Fused {
                    score: add,
                    keyword_rank: None,
                },
            );
            totals[match kind {
                Kind::Observation => 0,
                Kind::Summary => 1,
                Kind::Prompt => 2,
            }] += 1;
        }
    }
    Ok(scores)
}

/// Orders rows by fused score (spec §4.5 ties).
pub(super) fn sort(all: &mut [Ranked], scores: &HashMap<RecordId, Fused>) {
    let get = |r: &Ranked| {
        scores.get(&r.rid).copied().unwrap_or(Fused {
            score: 0.0,
            keyword_rank: None,
        })
    };
    all.sort_by(|a, b| {
        let (fa, fb) = (get(a), get(b));
        fb.score
            .total_cmp(&fa.score)
            .then(fa.keyword_rank.unwrap_or(usize::MAX).cmp(&fb.keyword_rank.unwrap_or(usize::MAX)))
            .then(a.rid.kind.cmp(&b.rid.kind))
            .then(b.at_ms.cmp(&a.at_ms))
    });
}

/// Fuses ranked lists of rows (each best first) by RRF; ties keep the first list's order.
pub fn merge_lists(lists: &[&[RecordId]]) -> Vec<RecordId> {
    let mut scores: HashMap<RecordId, (f64, usize)> = HashMap::new();
    let mut order = 0;
    for list in lists {
        for (i, rid) in list.iter().enumerate() {
            let e = scores.entry(*rid).or_insert_with(|| {
                order += 1;
                (0.0, order)
            });
            e.0 += rrf(i + 1);
        }
    }
    let mut rows: Vec<(RecordId, (f64, usize))> = scores.into_iter().collect();
    rows.sort_by(|a, b| b.1.0.total_cmp(&a.1.0).then(a.1.1.cmp(&b.1.1)));
    rows.into_iter().map(|(rid, _)| rid).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs(id: i64) -> RecordId {
        RecordId {
            kind: Kind::Observation,
            id,
        }
    }

    #[test]
    fn rows_in_both_lists_rise_and_vector_only_rows_are_admitted() {
        let keyword = [obs(1), obs(2), obs(3)];
        let vector = [obs(3), obs(9)];
        let merged = merge_lists(&[&keyword, &vector]);
        // 2 and 9 tie at 1/62: the keyword list came first.
        assert_eq!(merged, vec![obs(3), obs(1), obs(2), obs(9)]);
        assert!((rrf(1) - 1.0 / 61.0).abs() < 1e-12);
    }
}
