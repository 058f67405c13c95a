//! The vector half of hybrid search: embeds the query, asks the vector store (Chroma when
//! configured, else sqlite-vec) for the nearest documents in scope, and collapses them to rows in
//! rank order — the list [`crate::retrieval::fusion`] fuses with the keyword lists.

use std::collections::HashSet;
use std::sync::Arc;

use super::fusion::Near;
use super::{Kind, RecordId, Scope};
use crate::store::Store;
use crate::vectors::documents::DocKind;
use crate::vectors::nearest::VectorScope;
use crate::vectors::runtime::VectorRuntime;

/// What the vector half produced.
#[derive(Debug, Clone, PartialEq)]
pub enum VectorRows {
    /// Vectors are off or have no model yet: keyword only, nothing to say.
    Off,
    /// Rows nearest first, one entry per row (its best document's similarity).
    Rows(Vec<Near>),
    /// The embedder or the store failed or timed out (the search says so and goes on).
    Failed(String),
}

impl VectorRows {
    pub fn rows(&self) -> Option<&[Near]> {
        match self {
            VectorRows::Rows(r) => Some(r),
            _ => None,
        }
    }
    pub fn failure(&self) -> Option<&str> {
        match self {
            VectorRows::Failed(e) => Some(e),
            _ => None,
        }
    }
}

fn doc_kind(k: Kind) -> DocKind {
    match k {
        Kind::Observation => DocKind::Observation,
        Kind::Summary => DocKind::Summary,
        Kind::Prompt => DocKind::Prompt,
    }
}

fn record_kind(k: DocKind) -> Kind {
    match k {
        DocKind::Observation => Kind::Observation,
        DocKind::Summary => Kind::Summary,
        DocKind::Prompt => Kind::Prompt,
    }
}

/// The vector scope of a search: kinds, projects, platform, dates as metadata filters.
pub fn vector_scope(kinds: &[Kind], scope: &Scope, date_start: Option<i64>, date_end: Option<i64>) -> VectorScope {
    VectorScope {
        kinds: kinds.iter().copied().map(doc_kind).collect(),
        projects: scope.projects.clone().unwrap_or_default(),
        platform_source: scope.platform.clone(),
        date_start,
        date_end,
    }
}

/// The nearest rows of `query` (empty query → [`VectorRows::Off`]).
pub async fn nearest_rows(vectors: Option<&Arc<VectorRuntime>>, store: &Store, query: &str, scope: VectorScope) -> VectorRows {
    let Some(rt) = vectors else { return VectorRows::Off };
    if query.trim().is_empty() || !rt.usable() {
        return VectorRows::Off;
    }
    match rt.nearest(store, query, scope).await {
        Ok(found) => {
            let mut seen = HashSet::new();
            VectorRows::Rows(
                found
                    .into_iter()
                    .map(|n| Near {
                        rid: RecordId {
                            kind: record_kind(n.kind),
                            id: n.row_id,
                        },
                        similarity: 1.0 - n.distance,
                    })
                    .filter(|n| seen.insert(n.rid))
                    .collect(),
            )
        }
        Err(e) => {
            tracing::warn!(error = %e, "vector search failed; keyword results only");
            VectorRows::Failed(e.to_string())
        }
    }
}
