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

    /// Empties the page caches of the idle pooled connections (`PRAGMA shrink_memory`; they refill
    /// from the OS page cache). Keeping the connections keeps their schema and statements where
    /// they are: reopening them scattered new allocations over the heap a trim is about to return
    /// (docs/measurements.md, issue 34). Blocking: call from a blocking thread.
    pub fn release_memory(&self) {
        let Ok(conns) = self.conns.lock() else { return };
        for c in conns.iter() {
            if let Err(e) = c.execute_batch("PRAGMA shrink_memory") {
                tracing::debug!(error = %e, "a reader kept its page cache");
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::page_cache_bytes;

    #[test]
    fn releasing_memory_empties_the_idle_readers_caches_and_keeps_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("memd.db");
        let mut w = super::super::open::open_writer(&path, false).unwrap();
        crate::store::migrations::migrate(&mut w, 0).unwrap();
        w.execute_batch("CREATE TABLE filler(x); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<500) INSERT INTO filler SELECT randomblob(2000) FROM n;").unwrap();
        let pool = ReadPool::open(path, 2).unwrap();
        let filled = |pool: &ReadPool| -> Vec<i32> {
            let conns = pool.conns.lock().unwrap();
            for c in conns.iter() {
                let _: i64 = c.query_row("SELECT sum(length(x)) FROM filler", [], |r| r.get(0)).unwrap();
            }
            conns.iter().map(page_cache_bytes).collect()
        };
        assert!(filled(&pool).iter().all(|&b| b > 500_000), "each reader cached the table");
        pool.release_memory();
        let conns = pool.conns.lock().unwrap();
        assert_eq!(conns.len(), 2, "the connections stay");
        assert!(
            conns.iter().all(|c| page_cache_bytes(c) < 50_000),
            "{:?}",
            conns.iter().map(page_cache_bytes).collect::<Vec<_>>()
        );
    }
}
