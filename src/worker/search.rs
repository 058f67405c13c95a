//! The search use-case: the keyword half runs while the query is embedded and the vector store
//! asked, then the two are fused (`docs/spec/retrieval.md`). `GET /api/search` and the corpus
//! builder both call it.

use super::Services;
use crate::retrieval::search::{KeywordPhase, SearchRequest, SearchResult};
use crate::retrieval::vector_rows::{VectorRows, vector_scope};
use crate::retrieval::{Kind, Record, RecordId, RetrievalError};

/// Which halves run (`mode=keyword|vector|hybrid`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Halves {
    pub keyword: bool,
    pub vectors: bool,
}

impl Halves {
    pub const HYBRID: Halves = Halves {
        keyword: true,
        vectors: true,
    };

    pub fn parse(mode: &str) -> Option<Halves> {
        let (keyword, vectors) = match mode {
            "hybrid" | "" => (true, true),
            "keyword" => (true, false),
            "vector" => (false, true),
            _ => return None,
        };
        Some(Halves { keyword, vectors })
    }
}

/// A fused result, and why the vector half did not help when it failed.
pub struct Searched {
    pub result: SearchResult,
    pub vectors_failure: Option<String>,
}

pub async fn search(svc: &Services, req: &SearchRequest, halves: Halves) -> Result<Searched, RetrievalError> {
    let f = &req.filters;
    let scope = vector_scope(&req.effective_kinds(), &f.scope, f.date_start, f.date_end);
    let (vectors, phase) = tokio::join!(
        async {
            match halves.vectors {
                true => svc.storage.vector_candidates(req.query.clone(), scope).await,
                false => VectorRows::Off,
            }
        },
        async {
            match halves.keyword {
                true => svc.storage.keyword_search(req.clone()).await,
                false => Ok(KeywordPhase::default()),
            }
        }
    );
    let rows = vectors.rows().map(<[_]>::to_vec);
    let settings = svc.settings.get();
    let mut result = svc.storage.fuse(req.clone(), phase?, rows, settings.vectors.fusion).await?;
    if settings.graph && settings.graph_search && expandable(req) {
        let ids = svc.storage.graph_expansion(req.query.clone(), req.filters.scope.clone()).await?;
        put_first(svc, req, &mut result, ids).await?;
    }
    Ok(Searched {
        result,
        vectors_failure: vectors.failure().map(String::from),
    })
}

/// A first page ranked by relevance for a query over observations, with no filter the graph
/// cannot honour (types, concepts, files, dates, provenance, origin).
fn expandable(req: &SearchRequest) -> bool {
    let f = &req.filters;
    req.offset == 0
        && req.order.is_none()
        && !req.query.trim().is_empty()
        && req.effective_kinds().contains(&Kind::Observation)
        && f.obs_types.is_empty()
        && f.concepts.is_empty()
        && f.files.is_empty()
        && f.date_start.is_none()
        && f.date_end.is_none()
        && f.provenance.is_empty()
        && f.origin.is_none()
}

/// The graph's observations first (in its order), then the rest of the page as it was.
async fn put_first(svc: &Services, req: &SearchRequest, result: &mut SearchResult, ids: Vec<i64>) -> Result<(), RetrievalError> {
    if ids.is_empty() {
        return Ok(());
    }
    let wanted: Vec<RecordId> = ids
        .iter()
        .map(|&id| RecordId {
            kind: Kind::Observation,
            id,
        })
        .collect();
    let mut fetched = svc.storage.records(wanted.clone(), req.filters.scope.clone()).await?;
    let rows = std::mem::take(&mut result.records);
    let (sims, calls) = (std::mem::take(&mut result.similarity), std::mem::take(&mut result.matched_calls));
    let mut rest: Vec<(Record, Option<f32>, Option<i64>)> = rows.into_iter().zip(sims).zip(calls).map(|((r, s), c)| (r, s, c)).collect();
    let mut first = Vec::new();
    for rid in wanted {
        match rest.iter().position(|(r, _, _)| r.kind() == rid.kind && r.id() == rid.id) {
            Some(i) => first.push(rest.remove(i)),
            None => {
                if let Some(r) = fetched.remove(&rid) {
                    first.push((r, None, None));
                }
            }
        }
    }
    let added = first.len();
    first.extend(rest);
    first.truncate(req.limit.max(added));
    for (r, s, c) in first {
        result.records.push(r);
        result.similarity.push(s);
        result.matched_calls.push(c);
    }
    Ok(())
}
