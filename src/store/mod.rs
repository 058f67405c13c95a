//! The embedded SQLite store (docs/spec/storage.md).
//!
//! [`Store`] bundles the single writer (group commit on its own thread, owned by the StoreActor)
//! and the read pool. Table families live in their own files as plain functions over a
//! `&Connection`, so each can be unit tested on an in-memory database.

pub mod batch;
pub mod export_rows;
pub mod forget;
pub mod graph;
pub mod import_insert;
pub mod import_rows;
pub mod integrity;
pub mod memory;
pub mod migrations;
pub mod observation_record;
pub mod open;
pub mod pending;
pub mod private_file;
pub mod prompts;
pub mod quarantine;
pub mod raw_index;
pub mod reader;
pub mod record;
pub mod replace;
pub mod rescan;
pub mod retention;
pub mod retention_run;
pub mod retry;
pub mod salvage;
pub mod sessions;
pub mod stats;
pub mod summary_record;
pub mod supersession;
pub mod tool_events;
pub mod writer;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// A storage operation in flight (boxed so the area traits stay object-safe): what every storage
/// trait's method returns, from `backend` and from each feature's own storage trait.
pub type Op<'a, T, E = StoreError> = std::pin::Pin<Box<dyn std::future::Future<Output = Result<T, E>> + Send + 'a>>;

pub use integrity::Integrity;
pub use open::sqlite_memory_used;
pub use reader::ReadPool;

/// How long the check at open may take (a large file is then "unverified": `memd doctor --full`).
const QUICK_CHECK_BUDGET: Duration = Duration::from_secs(2);

/// Why the store refuses writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadOnly {
    NewerSchema,
    Damaged(String),
}
pub use writer::WriterHandle;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("database was written by a newer memd (schema {found}, this binary knows {known})")]
    NewerSchema { found: i64, known: i64 },
    #[error("database was written by a newer memd; opened read-only")]
    ReadOnly,
    #[error("the database is damaged ({0}); opened read-only")]
    Damaged(String),
    #[error("the store's write queue is full")]
    Overloaded,
    #[error("the store could not commit: {0}")]
    Unavailable(String),
    #[error("the store is closed")]
    Closed,
    #[error("{0}")]
    Internal(String),
}

/// Handle to the store: cheap to clone.
#[derive(Clone)]
pub struct Store {
    pub writer: WriterHandle,
    pub readers: Arc<ReadPool>,
    pub path: PathBuf,
    pub read_only: bool,
    /// What the check at open found (a damaged file is read-only).
    pub integrity: Integrity,
    /// Ingest requests in flight at the ingress (background work yields while it is non-zero).
    pub arrivals: Arc<std::sync::atomic::AtomicUsize>,
}

/// Options for [`Store::open`].
#[derive(Debug, Clone, Default)]
pub struct StoreOptions {
    pub synchronous_full: bool,
    pub readers: usize,
    pub queue_max: usize,
    pub group_commit: Duration,
    /// Ingest requests in flight at the ingress (see [`writer::spawn`]).
    pub arrivals: Arc<std::sync::atomic::AtomicUsize>,
}

impl Store {
    /// Opens (creating) the database, applies migrations, reverts `processing` rows to `pending`,
    /// and starts the writer thread.
    pub fn open(path: &Path, opts: &StoreOptions, now_ms: i64) -> Result<Self, StoreError> {
        let existed = path.exists();
        // Damage SQLite meets while setting the writer up (a schema page) is reported like the
        // check's: a plain connection serves the read-only store.
        let (mut conn, open_damage) = match open::open_writer(path, opts.synchronous_full) {
            Ok(c) => (c, None),
            Err(e) if is_damage(&e) => (rusqlite::Connection::open(path)?, Some(e.to_string())),
            Err(e) => return Err(e),
        };
        let mut integrity = match open_damage {
            Some(detail) => Integrity::Damaged(detail),
            None if existed => integrity::quick_check(&mut conn, QUICK_CHECK_BUDGET),
            None => Integrity::Ok,
        };
        let backups = path.parent().map(|p| p.join("backups"));
        // A check cut short by its time budget can miss damage the open then meets: that damage is
        // reported like the check's own (read-only, `memd repair`), never a worker that will not start.
        let prepared = match &integrity {
            Integrity::Damaged(detail) => Err(StoreError::Damaged(detail.clone())),
            _ => migrations::migrate_with(&mut conn, migrations::MIGRATIONS, backups.as_deref(), now_ms).and_then(|_| {
                catch_up(&mut conn);
                pending::revert_processing(&conn)
            }),
        };
        let read_only = match prepared {
            Ok(_) => None,
            Err(StoreError::NewerSchema { found, known }) => {
                tracing::error!(found, known, "database was written by a newer memd; refusing to ingest");
                Some(ReadOnly::NewerSchema)
            }
            Err(e) if is_damage(&e) => {
                let detail = match e {
                    StoreError::Damaged(d) => d,
                    other => other.to_string(),
                };
                tracing::error!(problems = %detail, "the database is damaged: opened read-only; run `memd repair`");
                integrity = Integrity::Damaged(detail.clone());
                Some(ReadOnly::Damaged(detail))
            }
            Err(e) => return Err(e),
        };
        let writer = writer::spawn(conn, opts.queue_max, opts.group_commit, read_only.clone(), opts.arrivals.clone());
        let readers = match ReadPool::open(path.to_path_buf(), opts.readers) {
            Err(e) if read_only.is_some() && is_damage(&e) => ReadPool::lazy(path.to_path_buf(), opts.readers),
            other => other?,
        };
        Ok(Self {
            writer,
            readers,
            path: path.to_path_buf(),
            read_only: read_only.is_some(),
            integrity,
            arrivals: opts.arrivals.clone(),
        })
    }

    pub async fn write<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&rusqlite::Connection) -> Result<T, StoreError> + Send + 'static,
    {
        self.writer.write(f).await
    }

    /// Hands SQLite's page caches back to the heap (writer and idle readers) after a load has
    /// gone; the caches refill from the OS page cache on the next queries.
    pub async fn release_memory(&self) {
        let _ = self.write(|c| Ok(c.execute_batch("PRAGMA shrink_memory")?)).await;
        let readers = self.readers.clone();
        let _ = tokio::task::spawn_blocking(move || readers.release_memory()).await;
    }

    pub async fn read<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&rusqlite::Connection) -> Result<T, StoreError> + Send + 'static,
    {
        self.readers.read(f).await
    }
}

/// Whether `e` says the file is damaged (the check's verdict, or SQLite meeting a corrupt page).
fn is_damage(e: &StoreError) -> bool {
    use rusqlite::ErrorCode::{DatabaseCorrupt, NotADatabase};
    match e {
        StoreError::Damaged(_) => true,
        StoreError::Sqlite(rusqlite::Error::SqliteFailure(f, _)) => matches!(f.code, DatabaseCorrupt | NotADatabase),
        _ => false,
    }
}

/// Work a migration left for the store's open (issues 35, 36): the raw index's backfill, the
/// quarantine screen of older rows (calls a stopped worker left queued are indexed by the
/// backend's catch-up task once the worker runs). Best effort: a failure (a
/// damaged page the quick check did not reach) is logged and retried at the next open — the
/// store still opens, and the integrity checks report the damage.
fn catch_up(conn: &mut rusqlite::Connection) {
    if let Err(e) = raw_index::finish_backfill(conn) {
        tracing::warn!(error = %e, "raw index backfill stopped; it resumes at the next start");
    }
    if let Err(e) = quarantine::finish_screen(conn) {
        tracing::warn!(error = %e, "quarantine screen of older rows stopped; it resumes at the next start");
    }
    match export_rows::repair_sequence(conn) {
        Ok(true) => tracing::warn!("the observation id sequence had been pushed to its end by an import; set back"),
        Ok(false) => {}
        Err(e) => tracing::warn!(error = %e, "checking the observation id sequence failed"),
    }
}

/// A random 128-bit id as a UUID-shaped string (v4 layout).
pub fn random_id() -> String {
    let mut b = [0u8; 16];
    let _ = std::fs::File::open("/dev/urandom").and_then(|mut f| std::io::Read::read_exact(&mut f, &mut b));
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = crate::data_dir::hex(&b);
    format!("{}-{}-{}-{}-{}", &h[0..8], &h[8..12], &h[12..16], &h[16..20], &h[20..32])
}

#[cfg(test)]
pub(crate) fn test_conn() -> rusqlite::Connection {
    let mut conn = rusqlite::Connection::open_in_memory().expect("memory db");
    conn.execute_batch("PRAGMA foreign_keys=ON").expect("pragma");
    migrations::migrate(&mut conn, 0).expect("migrate");
    conn
}

/// Bytes `conn`'s page cache holds now.
#[cfg(test)]
pub(crate) fn page_cache_bytes(conn: &rusqlite::Connection) -> i32 {
    let (mut now, mut high) = (0, 0);
    // SAFETY: a read of one open connection's counter into two local integers.
    unsafe { rusqlite::ffi::sqlite3_db_status(conn.handle(), rusqlite::ffi::SQLITE_DBSTATUS_CACHE_USED, &mut now, &mut high, 0) };
    now
}
