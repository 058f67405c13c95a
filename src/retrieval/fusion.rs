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

/// A row's fused score, its keyword rank within its kind (None = vector-only) and its group:
/// 0 = a strong keyword match (every term, or a raw call's identifier), 1 = any other row. Groups
/// never interleave, so fusion cannot demote a strong keyword hit below a vector-only candidate
/// (issue 35).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fused {
    pub score: f64,
    pub keyword_rank: Option<usize>,
    pub group: u8,
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
                    group: if r.tier == 0 { 0 } else { 1 },
                },
            );
        }
    }
    let kinds = req.effective_kinds();
    let mut vector_only: HashMap<Kind, Vec<(i64, f64)>> = HashMap::new();
    let admitted_vectors = vector.iter().filter(|n| n.similarity >= p.vector_floor);
    for (i, n) in admitted_vectors.enumerate() {
        let add = weighted(p.vector_weight, i + 1);
        match scores.get_mut(&n.rid) {
            Some(f) => f.score += add,
            None if kinds.contains(&n.rid.kind) => vector_only.entry(n.rid.kind).or_default().push((n.rid.id, add)),
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
                    group: 1,
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

/// Orders rows by group, then fused score (spec §4.5 ties); then the keyword list's first row
/// (`keyword_first`) takes first place back unless the nearest vector candidate is confident
/// (similarity ≥ `vector_confident`): on data fusion was not tuned on, a vector list that only
/// half agrees cost recall@1 by lifting a lower keyword hit over the keyword's first (issue 35).
pub(super) fn sort(all: &mut [Ranked], scores: &HashMap<RecordId, Fused>, keyword_first: Option<RecordId>, vector: &[Near], p: &Fusion) {
    sort_fused(all, scores);
    let confident = vector.first().is_some_and(|n| n.similarity >= p.vector_confident);
    if let (Some(first), false) = (keyword_first, confident)
        && let Some(at) = all.iter().position(|r| r.rid == first)
    {
        all[..=at].rotate_right(1);
    }
}

fn sort_fused(all: &mut [Ranked], scores: &HashMap<RecordId, Fused>) {
    let get = |r: &Ranked| {
        scores.get(&r.rid).copied().unwrap_or(Fused {
            score: 0.0,
            keyword_rank: None,
            group: 1,
        })
    };
    all.sort_by(|a, b| {
        let (fa, fb) = (get(a), get(b));
        fa.group
            .cmp(&fb.group)
            .then(fb.score.total_cmp(&fa.score))
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

    fn ranked(id: i64, tier: u8, rank: usize) -> Ranked {
        Ranked {
            rid: obs(id),
            at_ms: 0,
            tier,
            rank,
        }
    }

    #[test]
    fn the_keyword_first_row_keeps_first_place_unless_the_vector_list_is_confident() {
        let p = Fusion::default();
        assert!((p.vector_confident - 0.7).abs() < 1e-6);
        // Row 2 is second for keyword but first for vector: fused, it leads.
        let mut scores = HashMap::new();
        scores.insert(
            obs(1),
            Fused {
                score: 0.16,
                keyword_rank: Some(1),
                group: 1,
            },
        );
        scores.insert(
            obs(2),
            Fused {
                score: 0.25,
                keyword_rank: Some(2),
                group: 1,
            },
        );
        scores.insert(
            obs(3),
            Fused {
                score: 0.10,
                keyword_rank: None,
                group: 1,
            },
        );
        let near = |s: f32| {
            [Near {
                rid: obs(2),
                similarity: s,
            }]
        };
        let order = |scores: &HashMap<RecordId, Fused>, v: &[Near]| {
            let mut all = vec![ranked(1, 1, 1), ranked(2, 1, 2), ranked(3, u8::MAX, usize::MAX)];
            sort(&mut all, scores, Some(obs(1)), v, &p);
            all.iter().map(|r| r.rid.id).collect::<Vec<_>>()
        };
        assert_eq!(
            order(&scores, &near(0.55)),
            [1, 2, 3],
            "a half-agreeing vector list does not move it"
        );
        assert_eq!(order(&scores, &near(0.82)), [2, 1, 3], "a confident one does");
        // A strong keyword match (group 0) stays above any vector-only row whatever its score.
        scores.insert(
            obs(1),
            Fused {
                score: 0.01,
                keyword_rank: Some(1),
                group: 0,
            },
        );
        scores.insert(
            obs(3),
            Fused {
                score: 0.90,
                keyword_rank: None,
                group: 1,
            },
        );
        assert_eq!(order(&scores, &near(0.95))[0], 1);
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
