//! [`VectorRuntime`]: what the routes need for semantic queries — the shared embedder, whether
//! sqlite-vec loaded, and the query path with its time limit.

use std::sync::Arc;
use std::time::Duration;

use super::VectorError;
use super::nearest::{Neighbour, QueryPath, VectorScope, nearest};
use super::service::EmbedService;
use crate::store::Store;

/// Documents asked of the store per query.
pub const NEAREST: usize = 100;

#[derive(Debug)]
pub struct VectorRuntime {
    pub embed: Arc<EmbedService>,
    /// sqlite-vec registered before the store opened.
    pub extension: bool,
    pub chroma: Option<Arc<super::chroma::ChromaClient>>,
    /// The vector part of a search is abandoned after this (docs/spec/retrieval.md §4.5;
    /// `MEMD_VECTOR_QUERY_BUDGET_MS`).
    pub query_budget: Duration,
}

impl VectorRuntime {
    /// Vectors are meant to answer: the model files are present (a model that fails to load makes
    /// queries fail, and searches say so).
    pub fn usable(&self) -> bool {
        self.embed.model_present()
    }

    /// The nearest documents of `text` within `scope`, within the query budget. Chroma answers when
    /// configured and reachable; the embedded index otherwise.
    pub async fn nearest(&self, store: &Store, text: &str, scope: VectorScope) -> Result<Vec<Neighbour>, VectorError> {
        let work = async {
            let (embedded, scope) = tokio::join!(self.embed.embed_query(text), store.read(move |c| scope.with_merged_projects(c)));
            let (query, scope) = (embedded?, scope?);
            if let Some(chroma) = &self.chroma {
                match chroma.nearest(&query, &scope, NEAREST).await {
                    Ok(n) => return Ok(n),
                    Err(e) => tracing::debug!(error = %e, "chroma query failed; asking the embedded index"),
                }
            }
            let (found, path) = store.read(move |c| nearest(c, &query, &scope, NEAREST)).await?;
            if path == QueryPath::BruteForce {
                tracing::debug!("vector query by brute force (sqlite-vec not loaded)");
            }
            Ok(found)
        };
        match tokio::time::timeout(self.query_budget, work).await {
            Ok(r) => r,
            Err(_) => Err(VectorError::Embed(format!(
                "vector query exceeded {} ms",
                self.query_budget.as_millis()
            ))),
        }
    }
}
