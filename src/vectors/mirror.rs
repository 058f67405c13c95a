//! One step of the Chroma mirror (docs/spec/retrieval.md §8.3): `delete_pending` rows first, then
//! `pending`/`failed` rows, then rows above the Chroma watermarks in id order. The vectors come from
//! the embedded store (`vectors`), so nothing is embedded twice; the mirror never passes the
//! embedded store's watermark. Upserts are idempotent by document id, and the watermark advances only
//! after Chroma accepted the batch, so a crash or an outage repeats work but never loses or
//! duplicates a document.

use std::collections::HashMap;

use rusqlite::{Connection, params_from_iter};

use super::VectorError;
use super::chroma::ChromaClient;
use super::documents::{DocKind, Document, documents};
use super::index::from_blob;
use super::sync_state::{SQLITE_TARGET, clear_exception, exceptions, mark_pending, reset_target, set_meta, set_watermark, watermark};
use crate::clock::now_ms;
use crate::store::{Store, StoreError};

/// Rows per step (spec: 64).
pub const ROWS_PER_STEP: usize = 64;

/// What a step did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MirrorOutcome {
    Idle,
    Worked(usize),
}

/// At start: names the Chroma target in `meta.vector_target` (the delete triggers queue for it),
/// and resets the target when the collection was (re)built for this model.
pub async fn prepare(store: &Store, client: &ChromaClient) -> Result<(), VectorError> {
    let (_, rebuilt) = client.ensure_collection().await?;
    let target = client.target();
    store
        .write(move |c| {
            set_meta(c, "vector_target", &target)?;
            if rebuilt {
                reset_target(c, &target)?;
            }
            Ok(())
        })
        .await?;
    Ok(())
}

/// The documents of `ids` with the vectors the embedded store holds for them.
fn embedded_documents(conn: &Connection, kind: DocKind, ids: &[i64]) -> Result<Vec<(Document, Vec<f32>)>, StoreError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "SELECT doc_id, embedding FROM vectors WHERE doc_kind = ? AND row_id IN ({})",
        vec!["?"; ids.len()].join(",")
    );
    let mut st = conn.prepare(&sql)?;
    let kind_param = rusqlite::types::Value::from(kind.as_str().to_string());
    let args = std::iter::once(kind_param).chain(ids.iter().map(|i| rusqlite::types::Value::from(*i)));
    let mut vectors: HashMap<String, Vec<f32>> = HashMap::new();
    let mut rows = st.query(params_from_iter(args))?;
    while let Some(r) = rows.next()? {
        let blob = r.get_ref(1)?.as_blob().map_err(|e| StoreError::Internal(e.to_string()))?;
        vectors.insert(r.get(0)?, from_blob(blob));
    }
    Ok(documents(conn, kind, ids)?
        .into_iter()
        .filter_map(|d| vectors.remove(&d.doc_id).map(|v| (d, v)))
        .collect())
}

/// Row ids of `kind` not (yet) in the embedded store: above its watermark or in its exceptions.
fn not_embedded(conn: &Connection, kind: DocKind, ids: &[i64]) -> Result<Vec<i64>, StoreError> {
    let wm = watermark(conn, SQLITE_TARGET, kind)?;
    let open: Vec<i64> = exceptions(conn, SQLITE_TARGET, &["pending", "failed"], i64::MAX, 100_000)?
        .into_iter()
        .filter(|e| e.kind == kind)
        .map(|e| e.row_id)
        .collect();
    Ok(ids.iter().copied().filter(|id| *id > wm || open.contains(id)).collect())
}

/// Runs one step against `client`.
pub async fn step(store: &Store, client: &ChromaClient) -> Result<MirrorOutcome, VectorError> {
    let target = client.target();
    let t = target.clone();
    let deletes = store.read(move |c| exceptions(c, &t, &["delete_pending"], now_ms(), 1000)).await?;
    if let Some(first) = deletes.first() {
        let kind = first.kind;
        let ids: Vec<i64> = deletes.iter().filter(|e| e.kind == kind).map(|e| e.row_id).collect();
        client.delete_rows(kind, &ids).await?;
        let n = ids.len();
        let t = target.clone();
        store
            .write(move |c| ids.iter().try_for_each(|id| clear_exception(c, &t, kind, *id)))
            .await?;
        return Ok(MirrorOutcome::Worked(n));
    }
    let t = target.clone();
    let retry = store
        .read(move |c| {
            let found = exceptions(c, &t, &["pending", "failed"], now_ms(), ROWS_PER_STEP)?;
            let mut ready = Vec::new();
            for e in found {
                if not_embedded(c, e.kind, &[e.row_id])?.is_empty() {
                    ready.push(e);
                }
            }
            Ok(ready)
        })
        .await?;
    if let Some(first) = retry.first() {
        let kind = first.kind;
        let ids: Vec<i64> = retry.iter().filter(|e| e.kind == kind).map(|e| e.row_id).collect();
        return push_rows(store, client, kind, ids, None).await;
    }
    for kind in DocKind::ALL {
        let t = target.clone();
        let ids = store
            .read(move |c| {
                let mine = watermark(c, &t, kind)?;
                let limit = watermark(c, SQLITE_TARGET, kind)?;
                let ids = super::documents::row_ids_after(c, kind, mine, ROWS_PER_STEP)?;
                Ok(ids.into_iter().filter(|id| *id <= limit).collect::<Vec<i64>>())
            })
            .await?;
        if let Some(&last) = ids.last() {
            return push_rows(store, client, kind, ids, Some(last)).await;
        }
    }
    Ok(MirrorOutcome::Idle)
}

/// Upserts the rows' documents, then advances the watermark (or clears the exceptions). Rows the
/// embedded store has not embedded (failed there) are queued `pending` for a later pass.
async fn push_rows(
    store: &Store,
    client: &ChromaClient,
    kind: DocKind,
    ids: Vec<i64>,
    advance_to: Option<i64>,
) -> Result<MirrorOutcome, VectorError> {
    let read_ids = ids.clone();
    let (docs, missing) = store
        .read(move |c| Ok((embedded_documents(c, kind, &read_ids)?, not_embedded(c, kind, &read_ids)?)))
        .await?;
    client.delete_rows(kind, &ids).await?;
    client.upsert(&docs).await?;
    let target = client.target();
    let n = ids.len();
    store
        .write(move |c| {
            let now = now_ms();
            for id in &ids {
                if missing.contains(id) {
                    mark_pending(c, &target, kind, *id, now)?;
                } else if advance_to.is_none() {
                    clear_exception(c, &target, kind, *id)?;
                }
            }
            match advance_to {
                Some(last) => set_watermark(c, &target, kind, last, now),
                None => Ok(()),
            }
        })
        .await?;
    Ok(MirrorOutcome::Worked(n))
}
