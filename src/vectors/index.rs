//! The embedded vector store: `vectors` (the durable f32 copy, docs/spec/storage.md §3.10) and the
//! sqlite-vec virtual table `vectors_bin` — the sign bit of each of the 384 dimensions (48 bytes a
//! document) with the scope columns as vec0 metadata — written in the same transaction. Queries
//! ([`super::nearest`]) take the Hamming-nearest candidates from `vectors_bin` and re-rank them by
//! exact cosine over the f32 copies (docs/decisions.md, "binary index with re-ranking").
//!
//! The extension is compiled in and registered with `sqlite3_auto_extension` before the store opens
//! its connections ([`register_extension`]). Where it is unavailable, queries scan `vectors` by
//! brute force (said once in `memd status`).

use std::sync::OnceLock;

use rusqlite::{Connection, OptionalExtension, params};

use super::documents::{DocKind, Document};
use super::embedder::DIM;
use crate::store::StoreError;

static REGISTERED: OnceLock<bool> = OnceLock::new();

/// Registers sqlite-vec for every connection opened afterwards. Idempotent; true on success.
pub fn register_extension() -> bool {
    *REGISTERED.get_or_init(|| {
        // SAFETY: sqlite3_vec_init has the signature of an SQLite extension entry point; the
        // transmute only gives it the function-pointer type that sqlite3_auto_extension expects.
        let rc = unsafe {
            type EntryPoint = unsafe extern "C" fn(
                *mut rusqlite::ffi::sqlite3,
                *mut *mut std::os::raw::c_char,
                *const rusqlite::ffi::sqlite3_api_routines,
            ) -> std::os::raw::c_int;
            rusqlite::ffi::sqlite3_auto_extension(Some(std::mem::transmute::<*const (), EntryPoint>(
                sqlite_vec::sqlite3_vec_init as *const (),
            )))
        };
        rc == rusqlite::ffi::SQLITE_OK
    })
}

/// True when this connection can use `vec0`.
pub fn extension_loaded(conn: &Connection) -> bool {
    conn.query_row("SELECT vec_version()", [], |r| r.get::<_, String>(0)).is_ok()
}

fn table_exists(conn: &Connection, name: &str) -> Result<bool, StoreError> {
    Ok(conn
        .query_row("SELECT 1 FROM sqlite_master WHERE name = ?1", [name], |_| Ok(()))
        .optional()?
        .is_some())
}

/// True when the binary index exists (the caller checked the extension).
pub(super) fn vec_table_exists(conn: &Connection) -> Result<bool, StoreError> {
    table_exists(conn, "vectors_bin")
}

/// Little-endian f32 bytes of a vector (what sqlite-vec reads).
pub fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Little-endian f16 bytes of a vector: the durable copy in `vectors`. Half the bytes of f32, so a
/// row stays on its B-tree page (an f32 row spilled to an overflow page: ~5 KB on disk per
/// document); cosine error ~1e-4, far below what changes a ranking (docs/decisions.md).
pub fn to_stored_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| half::f16::from_f32(*x).to_le_bytes()).collect()
}

/// The vector of a `vectors.embedding` blob: f16 ([`to_stored_blob`], `DIM × 2` bytes) or the f32
/// of data dirs written before (`DIM × 4` bytes).
pub fn from_blob(b: &[u8]) -> Vec<f32> {
    if b.len() == DIM * 2 {
        return b.chunks_exact(2).map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f32()).collect();
    }
    b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

fn insert_bin(
    conn: &Connection,
    doc_id: &str,
    v: &[f32],
    kind: &str,
    project: &str,
    platform: &str,
    created: i64,
) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT INTO vectors_bin(doc_id, embedding, doc_kind, project, platform_source, created_at_epoch)
         VALUES (?1, vec_quantize_binary(?2), ?3, ?4, ?5, ?6)",
    )?
    .execute(params![doc_id, to_blob(v), kind, project, platform, created])?;
    Ok(())
}

/// Creates `vectors_bin` when the extension is loaded and the table is missing, filled from
/// `vectors` (this also upgrades a data dir that has the earlier f32 index `vectors_vec`, which is
/// dropped). Returns whether the index is usable.
pub fn ensure_vec_table(conn: &Connection) -> Result<bool, StoreError> {
    if !extension_loaded(conn) {
        return Ok(false);
    }
    if !vec_table_exists(conn)? {
        if table_exists(conn, "vectors_vec")? {
            conn.execute_batch("DROP TABLE vectors_vec")?;
        }
        conn.execute_batch(&format!(
            "CREATE VIRTUAL TABLE vectors_bin USING vec0(doc_id TEXT PRIMARY KEY, embedding bit[{DIM}],
               doc_kind TEXT, project TEXT, platform_source TEXT, created_at_epoch INTEGER);
             DELETE FROM vectors_vec_gc;"
        ))?;
        let mut st = conn.prepare("SELECT doc_id, embedding, doc_kind, project, platform_source, created_at_epoch FROM vectors")?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            let blob = r.get_ref("embedding")?.as_blob().map_err(|e| StoreError::Internal(e.to_string()))?;
            let v = from_blob(blob);
            let (id, kind, project, platform): (String, String, String, String) =
                (r.get("doc_id")?, r.get("doc_kind")?, r.get("project")?, r.get("platform_source")?);
            insert_bin(conn, &id, &v, &kind, &project, &platform, r.get("created_at_epoch")?)?;
        }
    }
    Ok(true)
}

/// Replaces the documents of the given rows: removes what `vectors` holds for them, inserts the new
/// documents with their vectors (and their `vectors_bin` entries).
pub fn replace_rows(
    conn: &Connection,
    kind: DocKind,
    row_ids: &[i64],
    docs: &[(Document, Vec<f32>)],
    model: &str,
) -> Result<(), StoreError> {
    let vec_ok = ensure_vec_table(conn)?;
    {
        let mut del = conn.prepare_cached("DELETE FROM vectors WHERE doc_kind = ?1 AND row_id = ?2")?;
        for id in row_ids {
            del.execute(params![kind.as_str(), id])?;
        }
    }
    let mut ins = conn.prepare_cached(
        "INSERT OR REPLACE INTO vectors(doc_id, doc_kind, row_id, field, project, platform_source, created_at_epoch, model, dim, embedding)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?;
    for (d, v) in docs {
        ins.execute(params![
            d.doc_id,
            kind.as_str(),
            d.row_id,
            d.field,
            d.project,
            d.platform_source,
            d.created_at_epoch,
            model,
            v.len() as i64,
            to_stored_blob(v)
        ])?;
        if vec_ok {
            conn.prepare_cached("DELETE FROM vectors_bin WHERE doc_id = ?1")?
                .execute([&d.doc_id])?;
            insert_bin(
                conn,
                &d.doc_id,
                v,
                kind.as_str(),
                &d.project,
                &d.platform_source,
                d.created_at_epoch,
            )?;
        }
        conn.prepare_cached("DELETE FROM vectors_vec_gc WHERE doc_id = ?1")?
            .execute([&d.doc_id])?;
    }
    Ok(())
}

/// Removes `vectors_bin` entries of documents deleted from `vectors` (the `vectors_ad` trigger lists
/// them in `vectors_vec_gc`), and trims `vectors_log`. Returns how many entries were removed.
pub fn collect_garbage(conn: &Connection) -> Result<usize, StoreError> {
    super::codes::trim_log(conn, super::codes::LOG_KEPT)?;
    let ids: Vec<String> = conn
        .prepare("SELECT doc_id FROM vectors_vec_gc LIMIT 1000")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    if ids.is_empty() {
        return Ok(0);
    }
    let vec_ok = extension_loaded(conn) && vec_table_exists(conn)?;
    for id in &ids {
        if vec_ok {
            conn.prepare_cached("DELETE FROM vectors_bin WHERE doc_id = ?1")?.execute([id])?;
        }
        conn.prepare_cached("DELETE FROM vectors_vec_gc WHERE doc_id = ?1")?.execute([id])?;
    }
    Ok(ids.len())
}

/// Drops every vector of the embedded store (reindex, model change).
pub fn clear(conn: &Connection) -> Result<(), StoreError> {
    conn.execute_batch("DELETE FROM vectors; DELETE FROM vectors_vec_gc;")?;
    for table in ["vectors_bin", "vectors_vec"] {
        if table_exists(conn, table)? {
            if !extension_loaded(conn) {
                return Err(StoreError::Internal(format!("{table} exists but sqlite-vec is not loaded")));
            }
            conn.execute_batch(&format!("DROP TABLE {table}"))?;
        }
    }
    Ok(())
}

/// Where each column of a scan over `vectors` sits in its statement, found by name once per
/// statement: the scans read every vector row, so the name lookup stays out of the per-row loop.
#[derive(Debug, Clone, Copy)]
pub(crate) struct VectorCols {
    pub doc_id: usize,
    pub doc_kind: usize,
    pub row_id: usize,
    pub project: usize,
    pub platform_source: usize,
    pub created_at_epoch: usize,
    pub embedding: usize,
}

impl VectorCols {
    /// The columns of `st`, which selects all seven by these names.
    pub(crate) fn of(st: &rusqlite::Statement<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            doc_id: st.column_index("doc_id")?,
            doc_kind: st.column_index("doc_kind")?,
            row_id: st.column_index("row_id")?,
            project: st.column_index("project")?,
            platform_source: st.column_index("platform_source")?,
            created_at_epoch: st.column_index("created_at_epoch")?,
            embedding: st.column_index("embedding")?,
        })
    }
}
