//! [`VectorRuntime`]: what the routes need for semantic queries — the shared embedder, whether
//! sqlite-vec loaded, the in-memory code index, and the query path with its time limit.

use std::sync::Arc;
use std::time::Duration;

use super::VectorError;
use super::codes::CodeIndex;
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
    /// The sign codes of the embedded store, built on the first query (which sqlite-vec answers).
    pub codes: Arc<CodeIndex>,
}

impl VectorRuntime {
    /// The embedder and query path, or None with `MEMD_EMBEDDINGS=none`. A missing model is not
    /// an error: status says `no_model` and search stays keyword-only until the files appear.
    pub async fn from_settings(v: &crate::config::VectorSettings, store: &Store, extension: bool) -> Option<Arc<VectorRuntime>> {
        use super::sync_state::{SQLITE_TARGET, meta, set_meta};
        if v.mode != crate::config::EmbeddingsMode::Local {
            return None;
        }
        let embed = EmbedService::new(v.model_dir.clone(), v.encoder, v.kernel);
        if !embed.model_present() {
            tracing::warn!(dir = %v.model_dir.display(), "no embedding model: keyword search only (memd models install)");
        }
        let chroma = match &v.chroma {
            Some(c) => {
                let db_id = store.read(|conn| meta(conn, "db_id")).await.ok().flatten().unwrap_or_default();
                Some(Arc::new(super::chroma::ChromaClient::new(c, &db_id, embed.model_name())))
            }
            None => None,
        };
        if chroma.is_none() && embed.model_present() {
            // Deletes queue for Chroma only while it is the target (docs/spec/storage.md §3.10 triggers).
            let _ = store.write(|c| set_meta(c, "vector_target", SQLITE_TARGET)).await;
        }
        Some(Arc::new(VectorRuntime {
            embed,
            extension,
            chroma,
            query_budget: Duration::from_millis(v.query_budget_ms),
            codes: Default::default(),
        }))
    }

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
            self.build_codes(store);
            let codes = self.codes.clone();
            let (found, path) = store.read(move |c| nearest(c, Some(&codes), &query, &scope, NEAREST)).await?;
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

    /// Starts the build the code index is due (the first, or a large rebuild) on a read connection
    /// of its own; one at a time.
    fn build_codes(&self, store: &Store) {
        if !self.codes.claim_build() {
            return;
        }
        let (codes, store) = (self.codes.clone(), store.clone());
        tokio::spawn(async move {
            let started = std::time::Instant::now();
            match store.read(move |c| codes.catch_up(c)).await {
                Ok(documents) => tracing::info!(documents, build_ms = started.elapsed().as_millis() as u64, "sign-code index built"),
                Err(e) => tracing::warn!(error = %e, "sign-code index build failed; sqlite-vec answers"),
            }
        });
    }
}
