//! StoreActor — owns the store: the single writer thread (group commit) and the read pool.
//!
//! Supervised by RootSupervisor. Ingest and the session actors write through the store seam
//! (`backend::Storage`), whose SQLite backend feeds the writer thread's bounded queue directly (one
//! hop per event); this actor answers status queries and performs the final flush at shutdown.
//! Failure policy: the writer thread outlives a failed actor (it holds the only connection), so a
//! restarted StoreActor re-attaches to the same handle; a failed COMMIT fails only its group (503).

use std::sync::Arc;

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use serde::{Deserialize, Serialize};

use crate::backend::Storage;
use crate::store::Store;
use crate::store::stats::{StoreFigures, file_size};

pub struct StoreActor;

pub struct StoreArgs {
    pub store: Store,
    /// The row counts of the status come through the store seam.
    pub storage: Arc<dyn Storage>,
    pub clock: crate::clock::Clock,
}

pub enum StoreMsg {
    /// The store part of `GET /api/status`.
    Status(RpcReplyPort<StoreStatus>),
    /// Commit everything queued, checkpoint the WAL, close the writer. Answers when done.
    Flush(RpcReplyPort<()>),
}

pub struct StoreState {
    store: Store,
    storage: Arc<dyn Storage>,
    clock: crate::clock::Clock,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct BatchSize {
    pub last: usize,
    pub avg: f64,
    pub max: usize,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ReadPoolStatus {
    pub size: usize,
    pub busy: usize,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct StoreStatus {
    pub write_queue_depth: usize,
    pub batch_size: BatchSize,
    pub groups: u64,
    pub commit_ms_p50: u64,
    pub db_bytes: u64,
    pub wal_bytes: u64,
    pub read_only: bool,
    pub read_pool: ReadPoolStatus,
    #[serde(flatten)]
    pub figures: StoreFigures,
}

impl StoreState {
    /// Builds the status document (reads run on the pool, never on this actor's thread).
    pub async fn status(&self) -> StoreStatus {
        let stats = self.store.writer.stats();
        let now = self.clock.now();
        let figures = self.storage.store_figures(now).await.unwrap_or_default();
        let wal = {
            let mut p = self.store.path.clone().into_os_string();
            p.push("-wal");
            file_size(std::path::Path::new(&p))
        };
        StoreStatus {
            write_queue_depth: self.store.writer.queue_depth(),
            batch_size: BatchSize {
                last: stats.last_batch,
                avg: (stats.avg_batch() * 100.0).round() / 100.0,
                max: stats.max_batch,
            },
            groups: stats.groups,
            commit_ms_p50: stats.commit_ms_p50(),
            db_bytes: file_size(&self.store.path),
            wal_bytes: wal,
            read_only: self.store.read_only,
            read_pool: ReadPoolStatus {
                size: self.store.readers.size(),
                busy: self.store.readers.busy(),
            },
            figures,
        }
    }
}

impl Actor for StoreActor {
    type Msg = StoreMsg;
    type State = StoreState;
    type Arguments = StoreArgs;

    async fn pre_start(&self, _myself: ActorRef<StoreMsg>, args: StoreArgs) -> Result<StoreState, ActorProcessingErr> {
        Ok(StoreState {
            store: args.store,
            storage: args.storage,
            clock: args.clock,
        })
    }

    async fn handle(&self, _myself: ActorRef<StoreMsg>, msg: StoreMsg, state: &mut StoreState) -> Result<(), ActorProcessingErr> {
        match msg {
            StoreMsg::Status(reply) => {
                let _ = reply.send(state.status().await);
            }
            StoreMsg::Flush(reply) => {
                state.store.writer.shutdown().await;
                let _ = reply.send(());
            }
        }
        Ok(())
    }
}
