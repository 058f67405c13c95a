//! The embedded vector store: `vectors` (the durable copy, spec/storage.md §3.10) and the sqlite-vec
//! virtual table `vectors_vec` for nearest-neighbour search, written in the same transaction.
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

fn vec_table_exists(conn: &Connection) -> Result<bool, StoreError> {
    Ok(conn
        .query_row("SELECT 1 FROM sqlite_master WHERE name = 'vectors_vec'", [], |_| Ok(()))
        .optional()?
        .is_some())
}

/// Little-endian f32 bytes of a vector.
pub fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub fn from_blob(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

/// Creates `vectors_vec` when the extension is loaded and the table is missing. Returns whether the
/// index is usable.
pub fn ensure_vec_table(conn: &Connection) -> Result<bool, StoreError> {
    if !extension_loaded(conn) {
        return Ok(false);
    }
    if !vec_table_exists(conn)? {
        conn.execute_batch(&format!(
            "CREATE VIRTUAL TABLE vectors_vec USING vec0(doc_id TEXT PRIMARY KEY, embedding float[{DIM}] distance_metric=cosine);
             INSERT INTO vectors_vec(doc_id, embedding) SELECT doc_id, embedding FROM vectors;
             DELETE FROM vectors_vec_gc;"
        ))?;
    }
    Ok(true)
}

/// Replaces the documents of the given rows: removes what `vectors` holds for them, inserts the new
/// documents with their vectors (and their `vectors_vec` entries).
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
        let blob = to_blob(v);
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
            blob
        ])?;
        if vec_ok {
            conn.prepare_cached("DELETE FROM vectors_vec WHERE doc_id = ?1")?
                .execute([&d.doc_id])?;
            conn.prepare_cached("INSERT INTO vectors_vec(doc_id, embedding) VALUES (?1, ?2)")?
                .execute(params![d.doc_id, blob])?;
        }
        conn.prepare_cached("DELETE FROM vectors_vec_gc WHERE doc_id = ?1")?
            .execute([&d.doc_id])?;
    }
    Ok(())
}

/// Removes `vectors_vec` entries of documents deleted from `vectors` (the `vectors_ad` trigger lists
/// them). Returns how many were removed.
pub fn collect_garbage(conn: &Connection) -> Result<usize, StoreError> {
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
            conn.prepare_cached("DELETE FROM vectors_vec WHERE doc_id = ?1")?.execute([id])?;
        }
        conn.prepare_cached("DELETE FROM vectors_vec_gc WHERE doc_id = ?1")?.execute([id])?;
    }
    Ok(ids.len())
}

/// Drops every vector of the embedded store (reindex, model change).
pub fn clear(conn: &Connection) -> Result<(), StoreError> {
    conn.execute_batch("DELETE FROM vectors; DELETE FROM vectors_vec_gc;")?;
    if vec_table_exists(conn)? {
        if extension_loaded(conn) {
            conn.execute_batch("DROP TABLE vectors_vec")?;
        } else {
            return Err(StoreError::Internal("vectors_vec exists but sqlite-vec is not loaded".into()));
        }
    }
    Ok(())
}

/// A nearest document: its row and cosine distance (0 = same direction).
#[derive(Debug, Clone, PartialEq)]
pub struct Neighbour {
    pub doc_id: String,
    pub kind: DocKind,
    pub row_id: i64,
    pub distance: f32,
}

/// Scope of a vector query, applied to the joined `vectors` rows.
#[derive(Debug, Clone, Default)]
pub struct VectorScope {
    pub kinds: Vec<DocKind>,
    /// Empty = every project.
    pub projects: Vec<String>,
    pub platform_source: Option<String>,
    pub date_start: Option<i64>,
    pub date_end: Option<i64>,
}

impl VectorScope {
    pub fn admits(&self, kind: DocKind, project: &str, platform: &str, created: i64) -> bool {
        (self.kinds.is_empty() || self.kinds.contains(&kind))
            && (self.projects.is_empty() || self.projects.iter().any(|p| p == project))
            && self.platform_source.as_deref().is_none_or(|p| p == platform)
            && self.date_start.is_none_or(|s| created >= s)
            && self.date_end.is_none_or(|e| created <= e)
    }

    fn is_unscoped(&self) -> bool {
        self.projects.is_empty() && self.platform_source.is_none() && self.date_start.is_none() && self.date_end.is_none()
    }
}

/// Which path answered a query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryPath {
    SqliteVec,
    BruteForce,
}

/// The `limit` nearest documents of `query` within `scope`.
pub fn nearest(conn: &Connection, query: &[f32], scope: &VectorScope, limit: usize) -> Result<(Vec<Neighbour>, QueryPath), StoreError> {
    if extension_loaded(conn) && vec_table_exists(conn)? {
        // Scope filters apply after the k-NN: fetch more candidates when a scope narrows the set.
        let k = if scope.is_unscoped() && scope.kinds.len() != 1 {
            limit
        } else {
            (limit * 10).min(4096)
        };
        let mut st = conn.prepare_cached(
            "SELECT n.doc_id, v.doc_kind, v.row_id, v.project, v.platform_source, v.created_at_epoch, n.distance
             FROM (SELECT doc_id, distance FROM vectors_vec WHERE embedding MATCH ?1 AND k = ?2) n
             JOIN vectors v ON v.doc_id = n.doc_id ORDER BY n.distance",
        )?;
        let mut rows = st.query(params![to_blob(query), k as i64])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            let kind = DocKind::parse(&r.get::<_, String>(1)?);
            let (project, platform, created): (String, String, i64) = (r.get(3)?, r.get(4)?, r.get(5)?);
            if let Some(kind) = kind.filter(|k| scope.admits(*k, &project, &platform, created)) {
                out.push(Neighbour {
                    doc_id: r.get(0)?,
                    kind,
                    row_id: r.get(2)?,
                    distance: r.get::<_, f64>(6)? as f32,
                });
                if out.len() >= limit {
                    break;
                }
            }
        }
        return Ok((out, QueryPath::SqliteVec));
    }
    Ok((brute_force(conn, query, scope, limit)?, QueryPath::BruteForce))
}

/// Dot products over every in-scope row of `vectors`.
pub fn brute_force(conn: &Connection, query: &[f32], scope: &VectorScope, limit: usize) -> Result<Vec<Neighbour>, StoreError> {
    let mut st =
        conn.prepare_cached("SELECT doc_id, doc_kind, row_id, project, platform_source, created_at_epoch, embedding FROM vectors")?;
    let mut rows = st.query([])?;
    let mut all = Vec::new();
    while let Some(r) = rows.next()? {
        let Some(kind) = DocKind::parse(&r.get::<_, String>(1)?) else {
            continue;
        };
        let (project, platform, created): (String, String, i64) = (r.get(3)?, r.get(4)?, r.get(5)?);
        if !scope.admits(kind, &project, &platform, created) {
            continue;
        }
        let blob = r.get_ref(6)?.as_blob().map_err(|e| StoreError::Internal(e.to_string()))?;
        let sim = super::embedder::dot(query, &from_blob(blob));
        all.push(Neighbour {
            doc_id: r.get(0)?,
            kind,
            row_id: r.get(2)?,
            distance: 1.0 - sim,
        });
    }
    all.sort_by(|a, b| a.distance.total_cmp(&b.distance));
    all.truncate(limit);
    Ok(all)
}
