//! The read pool: `MEMD_DB_READERS` read-only connections used from blocking threads.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rusqlite::Connection;
use tokio::sync::Semaphore;

use super::StoreError;
use super::open::{arm_read_deadline, open_reader};

pub struct ReadPool {
    conns: Mutex<Vec<Connection>>,
    permits: Semaphore,
    size: usize,
    busy: AtomicUsize,
    path: PathBuf,
}

impl ReadPool {
    pub fn open(path: PathBuf, size: usize) -> Result<Arc<Self>, StoreError> {
        let conns = (0..size).map(|_| open_reader(&path)).collect::<Result<Vec<_>, _>>()?;
        let pool = Self::lazy(path, size);
        *pool.conns.lock().map_err(|_| StoreError::Closed)? = conns;
        Ok(pool)
    }

    /// A pool that opens its connections when a read needs one (a damaged store whose readers
    /// cannot all open at start: each read then says what it met).
    pub fn lazy(path: PathBuf, size: usize) -> Arc<Self> {
        Arc::new(Self {
            conns: Mutex::new(Vec::new()),
            permits: Semaphore::new(size),
            size,
            busy: AtomicUsize::new(0),
            path,
        })
    }

    /// Runs `f` on a pooled read-only connection on the blocking thread pool.
    pub async fn read<T, F>(self: &Arc<Self>, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    {
        let _permit = self.permits.acquire().await.map_err(|_| StoreError::Closed)?;
        let conn = self.conns.lock().map_err(|_| StoreError::Closed)?.pop();
        let conn = match conn {
            Some(c) => c,
            None => open_reader(&self.path)?,
        };
        self.busy.fetch_add(1, Ordering::Relaxed);
        let joined = tokio::task::spawn_blocking(move || {
            let mut conn = conn;
            arm_read_deadline(&mut conn);
            let out = f(&conn);
            (conn, out)
        })
        .await;
        self.busy.fetch_sub(1, Ordering::Relaxed);
        let (conn, out) = joined.map_err(|e| StoreError::Internal(format!("read task: {e}")))?;
        if let Ok(mut pool) = self.conns.lock() {
            pool.push(conn);
        }
        out
    }

    /// Replaces the idle pooled connections with fresh ones: their page caches and the pages
    /// their memory maps touched (counted in the resident set) go with them. Blocking: call from
    /// a blocking thread. A connection that cannot be reopened is kept.
    pub fn release_memory(&self) {
        let Ok(mut conns) = self.conns.lock() else { return };
        for c in conns.iter_mut() {
            if let Ok(fresh) = open_reader(&self.path) {
                *c = fresh;
            }
        }
    }

    pub fn size(&self) -> usize {
        self.size
    }
    pub fn busy(&self) -> usize {
        self.busy.load(Ordering::Relaxed)
    }
}
