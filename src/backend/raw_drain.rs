//! When the raw search index catches up (issue 35). A stored batch queues its calls
//! (`raw_index_queue`); indexing them costs CPU and writer time that ingest would feel, so it waits
//! for a quiet moment — no ingest request in flight and none for [`QUIET`] — then indexes the queue
//! in chunks, one write each, pausing whenever ingest resumes, until the queue is empty. One
//! catch-up task at a time; a worker stopped with calls queued starts one when it next starts.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

// Tokio's clock, as the sleeps are: under a paused test runtime both follow the virtual time
// (a wall-clock "quiet" there made the task spin and run the virtual clock ahead).
use tokio::time::Instant;

use crate::store::Store;
use crate::store::raw_index::drain_queue;

/// How long ingest must have been silent before indexing starts.
pub const QUIET: Duration = Duration::from_millis(300);
/// Calls indexed per write.
const CHUNK: usize = 256;

/// The last ingest and whether a catch-up task runs.
pub struct RawDrain {
    started: Instant,
    last_ingest_ms: AtomicU64,
    scheduled: AtomicBool,
}

impl RawDrain {
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            started: Instant::now(),
            last_ingest_ms: AtomicU64::new(0),
            scheduled: AtomicBool::new(false),
        })
    }

    /// An ingest request arrived.
    pub fn touched(&self) {
        self.last_ingest_ms
            .store(self.started.elapsed().as_millis() as u64, Ordering::Relaxed);
    }

    /// No ingest in flight, and none for [`QUIET`].
    pub fn quiet(&self, store: &Store) -> bool {
        let since = (self.started.elapsed().as_millis() as u64).saturating_sub(self.last_ingest_ms.load(Ordering::Relaxed));
        store.arrivals.load(Ordering::Relaxed) == 0 && since >= QUIET.as_millis() as u64
    }

    /// A batch was stored (its calls queued): starts the catch-up task unless one runs.
    pub fn after_batch(self: &Arc<Self>, store: &Store) {
        if self.scheduled.swap(true, Ordering::AcqRel) {
            return;
        }
        let (me, store) = (self.clone(), store.clone());
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(QUIET).await;
                if !me.quiet(&store) {
                    continue;
                }
                match store.write(|c| Ok(drain_queue(c, CHUNK)?)).await {
                    Ok(n) if n > 0 => continue,
                    Ok(_) => break,
                    Err(e) => {
                        tracing::warn!(error = %e, "raw index catch-up failed; the next batch retries");
                        break;
                    }
                }
            }
            me.scheduled.store(false, Ordering::Release);
        });
    }
}
