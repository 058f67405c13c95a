//! The single writer thread: group commit (docs/spec/storage.md §1.2).
//!
//! Jobs arrive on a bounded channel. The thread takes the first, waits up to the group-commit window
//! for more (≤ 256), runs them in one `BEGIN IMMEDIATE … COMMIT`, each inside its own `SAVEPOINT`
//! so one failing job rolls back alone, and answers every job only after COMMIT returned.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rusqlite::Connection;
use tokio::sync::oneshot;

use super::{ReadOnly, StoreError};

const MAX_GROUP: usize = 256;
const IDLE_CHECKPOINT: Duration = Duration::from_secs(600);

type Finish = Box<dyn FnOnce(Result<(), StoreError>) + Send>;
/// Runs against the connection, or (None) is told the group could not begin and must not run.
type Job = Box<dyn FnOnce(Option<&Connection>) -> (bool, Finish) + Send>;

/// Runs alone, outside any transaction (VACUUM), after the group before it committed.
type Exclusive = Box<dyn FnOnce(&Connection) + Send>;

enum Msg {
    Job(Job),
    Exclusive(Exclusive),
    Shutdown(oneshot::Sender<()>),
}

/// Group-commit statistics since start (for `memd status`).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct WriterStats {
    pub groups: u64,
    pub commands: u64,
    pub last_batch: usize,
    pub max_batch: usize,
    pub failed_commits: u64,
    #[serde(skip)]
    pub commit_ms: Vec<u64>,
}

impl WriterStats {
    fn record(&mut self, size: usize, ms: u64, ok: bool) {
        self.groups += 1;
        self.commands += size as u64;
        self.last_batch = size;
        self.max_batch = self.max_batch.max(size);
        if !ok {
            self.failed_commits += 1;
        }
        if self.commit_ms.len() >= 256 {
            self.commit_ms.remove(0);
        }
        self.commit_ms.push(ms);
    }
    pub fn avg_batch(&self) -> f64 {
        if self.groups == 0 {
            0.0
        } else {
            self.commands as f64 / self.groups as f64
        }
    }
    pub fn commit_ms_p50(&self) -> u64 {
        let mut v = self.commit_ms.clone();
        v.sort_unstable();
        v.get(v.len() / 2).copied().unwrap_or(0)
    }
}

/// Cloneable handle that submits jobs to the writer thread.
#[derive(Clone)]
pub struct WriterHandle {
    tx: SyncSender<Msg>,
    depth: Arc<AtomicUsize>,
    stats: Arc<Mutex<WriterStats>>,
    read_only: Option<ReadOnly>,
}

impl WriterHandle {
    /// Runs `f` inside the next group transaction; resolves after COMMIT.
    pub async fn write<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    {
        if let Some(r) = &self.read_only {
            return Err(refused(r));
        }
        let (tx, rx) = oneshot::channel();
        let job: Job = Box::new(move |conn| {
            let out = match conn {
                Some(c) => f(c),
                None => Err(StoreError::Unavailable("the write transaction could not begin".into())),
            };
            let ok = out.is_ok();
            let finish: Finish = Box::new(move |commit| {
                let _ = tx.send(commit.and(out));
            });
            (ok, finish)
        });
        self.depth.fetch_add(1, Ordering::Relaxed);
        match self.tx.try_send(Msg::Job(job)) {
            Ok(()) => {}
            Err(e) => {
                self.depth.fetch_sub(1, Ordering::Relaxed);
                return Err(match e {
                    TrySendError::Full(_) => StoreError::Overloaded,
                    TrySendError::Disconnected(_) => StoreError::Closed,
                });
            }
        }
        rx.await.map_err(|_| StoreError::Closed)?
    }

    /// Runs `f` on the writer connection outside any transaction (for `VACUUM`); later writes
    /// queue behind it. Waits for room in the queue instead of answering `Overloaded`.
    pub async fn exclusive<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    {
        if let Some(r) = &self.read_only {
            return Err(refused(r));
        }
        let (tx, rx) = oneshot::channel();
        let job: Exclusive = Box::new(move |conn| {
            let _ = tx.send(f(conn));
        });
        let sender = self.tx.clone();
        tokio::task::spawn_blocking(move || sender.send(Msg::Exclusive(job)))
            .await
            .map_err(|_| StoreError::Closed)?
            .map_err(|_| StoreError::Closed)?;
        rx.await.map_err(|_| StoreError::Closed)?
    }

    pub fn queue_depth(&self) -> usize {
        self.depth.load(Ordering::Relaxed)
    }

    pub fn stats(&self) -> WriterStats {
        self.stats.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Commits everything queued, checkpoints the WAL and stops the thread.
    pub async fn shutdown(&self) {
        let (tx, rx) = oneshot::channel();
        // A blocking send is fine here: shutdown waits behind queued jobs by design.
        let sender = self.tx.clone();
        let _ = tokio::task::spawn_blocking(move || sender.send(Msg::Shutdown(tx))).await;
        let _ = rx.await;
    }
}

/// Starts the writer thread on an open, migrated connection.
/// `arrivals` counts ingest requests in flight at the ingress: the writer waits for more jobs only
/// while more are on their way.
fn refused(r: &ReadOnly) -> StoreError {
    match r {
        ReadOnly::NewerSchema => StoreError::ReadOnly,
        ReadOnly::Damaged(d) => StoreError::Damaged(d.clone()),
    }
}

pub fn spawn(
    conn: Connection,
    queue_max: usize,
    window: Duration,
    read_only: Option<ReadOnly>,
    arrivals: Arc<AtomicUsize>,
) -> WriterHandle {
    let (tx, rx) = std::sync::mpsc::sync_channel(queue_max);
    let depth = Arc::new(AtomicUsize::new(0));
    let stats = Arc::new(Mutex::new(WriterStats::default()));
    let (d, s) = (depth.clone(), stats.clone());
    std::thread::Builder::new()
        .name("memd-store-writer".into())
        .spawn(move || run(conn, rx, window, d, s, arrivals))
        .expect("spawning the writer thread");
    WriterHandle {
        tx,
        depth,
        stats,
        read_only,
    }
}

fn run(
    conn: Connection,
    rx: Receiver<Msg>,
    window: Duration,
    depth: Arc<AtomicUsize>,
    stats: Arc<Mutex<WriterStats>>,
    arrivals: Arc<AtomicUsize>,
) {
    let mut dirty = false;
    loop {
        let first = match rx.recv_timeout(IDLE_CHECKPOINT) {
            Ok(m) => m,
            Err(RecvTimeoutError::Timeout) => {
                if dirty {
                    checkpoint(&conn);
                    dirty = false;
                }
                continue;
            }
            Err(RecvTimeoutError::Disconnected) => break,
        };
        let mut jobs = Vec::new();
        let mut shutdown = None;
        let mut exclusive = None;
        match first {
            Msg::Job(j) => jobs.push(j),
            Msg::Exclusive(x) => exclusive = Some(x),
            Msg::Shutdown(reply) => shutdown = Some(reply),
        }
        if shutdown.is_none() && exclusive.is_none() {
            let deadline = Instant::now() + window;
            while jobs.len() < MAX_GROUP {
                let left = deadline.saturating_duration_since(Instant::now());
                // Waiting only pays when other requests are on their way: a lone client commits at once.
                let others_coming = arrivals.load(Ordering::Relaxed) > jobs.len();
                let next = if left.is_zero() || !others_coming {
                    rx.try_recv().map_err(|_| ())
                } else {
                    rx.recv_timeout(left).map_err(|_| ())
                };
                match next {
                    Ok(Msg::Job(j)) => jobs.push(j),
                    Ok(Msg::Exclusive(x)) => {
                        exclusive = Some(x);
                        break;
                    }
                    Ok(Msg::Shutdown(reply)) => {
                        shutdown = Some(reply);
                        break;
                    }
                    Err(()) => break,
                }
            }
        }
        if !jobs.is_empty() {
            let n = jobs.len();
            commit_group(&conn, jobs, &stats);
            depth.fetch_sub(n, Ordering::Relaxed);
            dirty = true;
        }
        if let Some(x) = exclusive {
            x(&conn);
            dirty = true;
        }
        if let Some(reply) = shutdown {
            // Drain anything still queued so no accepted job is left unanswered.
            let rest: Vec<Job> = rx
                .try_iter()
                .filter_map(|m| if let Msg::Job(j) = m { Some(j) } else { None })
                .collect();
            if !rest.is_empty() {
                let n = rest.len();
                commit_group(&conn, rest, &stats);
                depth.fetch_sub(n, Ordering::Relaxed);
            }
            checkpoint(&conn);
            let _ = conn.execute_batch("PRAGMA optimize;");
            drop(conn);
            let _ = reply.send(());
            return;
        }
    }
    checkpoint(&conn);
}

fn commit_group(conn: &Connection, jobs: Vec<Job>, stats: &Mutex<WriterStats>) {
    let started = Instant::now();
    let size = jobs.len();
    let mut finishers = Vec::with_capacity(size);
    let begun = conn.execute_batch("BEGIN IMMEDIATE");
    if let Err(e) = begun {
        let err = StoreError::from(e);
        for job in jobs {
            let (_, finish) = job(None);
            finish(Err(StoreError::Unavailable(err.to_string())));
        }
        return;
    }
    for job in jobs {
        let _ = conn.execute_batch("SAVEPOINT job");
        let (ok, finish) = job(Some(conn));
        let _ = if ok {
            conn.execute_batch("RELEASE job")
        } else {
            conn.execute_batch("ROLLBACK TO job; RELEASE job")
        };
        finishers.push(finish);
    }
    let commit = conn.execute_batch("COMMIT");
    let ok = commit.is_ok();
    if !ok {
        let _ = conn.execute_batch("ROLLBACK");
    }
    if let Ok(mut s) = stats.lock() {
        s.record(size, started.elapsed().as_millis() as u64, ok);
    }
    let msg = commit.err().map(|e| e.to_string());
    for finish in finishers {
        finish(match &msg {
            None => Ok(()),
            Some(m) => Err(StoreError::Unavailable(m.clone())),
        });
    }
}

fn checkpoint(conn: &Connection) {
    if let Err(e) = conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);") {
        tracing::warn!(error = %e, "wal checkpoint failed");
    }
}
