//! The search use-case: the keyword half runs while the query is embedded and the vector store
//! asked, then the two are fused (`docs/spec/retrieval.md`). `GET /api/search` and the corpus
//! builder both call it.

use super::Services;
use crate::retrieval::RetrievalError;
use crate::retrieval::search::{KeywordPhase, SearchRequest, SearchResult};
use crate::retrieval::vector_rows::{VectorRows, vector_scope};

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
    let fusion = svc.settings.get().vectors.fusion;
    let result = svc.storage.fuse(req.clone(), phase?, rows, fusion).await?;
    Ok(Searched {
        result,
        vectors_failure: vectors.failure().map(String::from),
    })
}
