//! One step of the embedded-store sync (docs/spec/retrieval.md §8.3, storage §3.10), as plain async
//! functions over the store and the embedder: sqlite-vec garbage, then `pending`/`failed` rows,
//! then rows above the watermarks in id order. Each step commits its vectors together with the
//! watermark (or the cleared exception), so a crash repeats at most one step's embedding work and
//! `INSERT OR REPLACE` by document id never stores a document twice.

use std::sync::Arc;

use super::VectorError;
use super::documents::{DocKind, Document, documents, row_ids_after};
use super::index::{clear, collect_garbage, ensure_vec_table, replace_rows};
use super::service::{EmbedService, Usage};
use super::sync_state::{SQLITE_TARGET, clear_exception, exceptions, mark_failed, meta, reset_target, set_meta, watermark};
use crate::clock::now_ms;
use crate::store::Store;
use crate::store::batch::{UsageDelta, record_usage};

/// Rows taken per step.
pub const ROWS_PER_STEP: usize = 64;
/// Texts per embedding call of the sync. Chosen small when a search query waited for the sync's
/// call; a query no longer takes the batches' turn, and 64 texts a call measured the same backfill
/// (docs/measurements.md), so 16 stays.
const SYNC_CHUNK: usize = 16;

/// What a step did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepOutcome {
    /// Nothing left to embed.
    Idle,
    /// Rows embedded (or found without documents) in this step.
    Worked(usize),
}

/// At start: a change of embedding model clears the embedded store so everything is re-embedded;
/// the binary index is built when missing.
pub async fn check_model(store: &Store, model: &'static str) -> Result<bool, VectorError> {
    let reset = store
        .write(move |c| {
            let current = meta(c, "embedding_model")?;
            let changed = current.as_deref().is_some_and(|m| m != model);
            if changed {
                clear(c)?;
                reset_target(c, SQLITE_TARGET)?;
            }
            if current.as_deref() != Some(model) {
                set_meta(c, "embedding_model", model)?;
            }
            // A data dir from before the binary index gets it now, not at its next write.
            ensure_vec_table(c)?;
            Ok(changed)
        })
        .await?;
    Ok(reset)
}

/// `memd reindex`: drops every vector of the embedded store; the sync rebuilds it from the start.
pub async fn reindex(store: &Store) -> Result<(), VectorError> {
    store
        .write(|c| {
            clear(c)?;
            reset_target(c, SQLITE_TARGET)
        })
        .await?;
    Ok(())
}

/// Embeds a step's documents in length order (a call's texts run side by side on the pool, so
/// similar lengths keep its threads equally busy).
async fn embed_docs(embed: &Arc<EmbedService>, mut docs: Vec<Document>) -> Result<Vec<(Document, Vec<f32>)>, VectorError> {
    docs.sort_by_key(|d| d.text.len());
    let mut out = Vec::with_capacity(docs.len());
    let mut docs = docs.into_iter().peekable();
    while docs.peek().is_some() {
        let chunk: Vec<Document> = docs.by_ref().take(SYNC_CHUNK).collect();
        let vectors = embed.embed(chunk.iter().map(|d| d.text.clone()).collect()).await?;
        out.extend(chunk.into_iter().zip(vectors));
    }
    Ok(out)
}

/// Adds embedding work to today's `token_usage` as provider `embeddings` (docs/spec/storage.md §3.9).
fn record_embeddings(c: &rusqlite::Connection, model: &str, u: Usage, now: i64) -> Result<(), crate::store::StoreError> {
    if u.calls == 0 {
        return Ok(());
    }
    let delta = UsageDelta {
        provider: "embeddings".into(),
        model: model.into(),
        calls: u.calls as i64,
        input_tokens: u.tokens as i64,
        ..UsageDelta::default()
    };
    record_usage(c, &delta, now)
}

/// Records embedding work done outside a sync write (search queries) when the sync is idle.
async fn flush_usage(store: &Store, embed: &Arc<EmbedService>) -> Result<(), VectorError> {
    let u = embed.take_usage();
    if u.calls == 0 {
        return Ok(());
    }
    let model = embed.model_name();
    if let Err(e) = store.write(move |c| record_embeddings(c, model, u, now_ms())).await {
        embed.restore_usage(u);
        return Err(e.into());
    }
    Ok(())
}

/// A model problem stops the sync (nothing advances); any other embedding error fails the rows.
fn is_model_problem(e: &VectorError) -> bool {
    matches!(e, VectorError::NoModel(_) | VectorError::Model(_))
}

/// Runs one step.
pub async fn step(store: &Store, embed: &Arc<EmbedService>) -> Result<StepOutcome, VectorError> {
    let garbage = store
        .read(|c| Ok(c.query_row("SELECT EXISTS(SELECT 1 FROM vectors_vec_gc)", [], |r| r.get::<_, bool>(0))?))
        .await?;
    if garbage {
        store.write(|c| collect_garbage(c).map(|_| ())).await?;
    }
    let retry = store
        .read(|c| exceptions(c, SQLITE_TARGET, &["pending", "failed"], now_ms(), ROWS_PER_STEP))
        .await?;
    if let Some(first) = retry.first() {
        let kind = first.kind;
        let ids: Vec<i64> = retry.iter().filter(|e| e.kind == kind).map(|e| e.row_id).collect();
        return embed_rows(store, embed, kind, ids, None).await;
    }
    for kind in DocKind::ALL {
        let ids = store
            .read(move |c| {
                let wm = watermark(c, SQLITE_TARGET, kind)?;
                row_ids_after(c, kind, wm, ROWS_PER_STEP)
            })
            .await?;
        if let Some(&last) = ids.last() {
            return embed_rows(store, embed, kind, ids, Some(last)).await;
        }
    }
    flush_usage(store, embed).await?;
    Ok(StepOutcome::Idle)
}

/// Embeds the rows' documents and commits them with the new watermark (`advance_to`) or, for
/// exception rows, by clearing their `vector_sync` entries.
async fn embed_rows(
    store: &Store,
    embed: &Arc<EmbedService>,
    kind: DocKind,
    ids: Vec<i64>,
    advance_to: Option<i64>,
) -> Result<StepOutcome, VectorError> {
    let read_ids = ids.clone();
    let docs = store.read(move |c| documents(c, kind, &read_ids)).await?;
    let n = ids.len();
    match embed_docs(embed, docs).await {
        Ok(embedded) => {
            let usage = embed.take_usage();
            let model = embed.model_name();
            let written = store
                .write(move |c| {
                    record_embeddings(c, model, usage, now_ms())?;
                    replace_rows(c, kind, &ids, &embedded, model)?;
                    // The store holds vectors now (a Chroma target, when named, is kept).
                    c.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('vector_target', 'sqlite')", [])?;
                    match advance_to {
                        Some(last) => super::sync_state::set_watermark(c, SQLITE_TARGET, kind, last, now_ms()),
                        None => ids.iter().try_for_each(|id| clear_exception(c, SQLITE_TARGET, kind, *id)),
                    }
                })
                .await;
            if let Err(e) = written {
                embed.restore_usage(usage);
                return Err(e.into());
            }
            Ok(StepOutcome::Worked(n))
        }
        Err(e) if is_model_problem(&e) => Err(e),
        Err(e) => {
            let msg = e.to_string();
            tracing::warn!(error = %msg, kind = kind.as_str(), rows = n, "embedding failed; rows marked for retry");
            store
                .write(move |c| {
                    let now = now_ms();
                    for id in &ids {
                        mark_failed(c, SQLITE_TARGET, kind, *id, &msg, now)?;
                    }
                    match advance_to {
                        Some(last) => super::sync_state::set_watermark(c, SQLITE_TARGET, kind, last, now),
                        None => Ok(()),
                    }
                })
                .await?;
            Ok(StepOutcome::Worked(n))
        }
    }
}
