//! ChromaSyncActor — mirrors the embedded vector store's documents into one collection of a Chroma
//! server (`MEMD_CHROMA_URL`), with the vectors memd computed; never blocks or slows ingest.
//!
//! Owns only counters in memory: progress is the `chroma:<collection>` watermarks and `vector_sync`
//! rows in SQLite, so a restart resumes (backfill on start). Each step runs in a spawned task and
//! reports back with `StepDone`, so `Status` answers at once. Supervised by RootSupervisor.
//! Failure policy: an unreachable or failing Chroma backs off from `MEMD_CHROMA_RETRY_MS`
//! (default 5 s) doubling to 5 min, with the error in the status; a panic restarts the actor.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use serde::{Deserialize, Serialize};

use crate::clock::{Clock, iso};
use crate::store::Store;
use crate::vectors::VectorError;
use crate::vectors::chroma::ChromaClient;
use crate::vectors::mirror::{MirrorOutcome, prepare, step};
use crate::vectors::sync_state::progress;

pub struct ChromaSync;

pub struct ChromaSyncArgs {
    pub store: Store,
    pub client: Arc<ChromaClient>,
    pub tick: Duration,
    /// First backoff after a failure; doubles up to [`MAX_BACKOFF`].
    pub retry: Duration,
    pub clock: Clock,
}

pub enum ChromaSyncMsg {
    /// Periodic check: start a step unless one runs or a backoff holds.
    Tick,
    /// A step finished (sent by the step's task).
    StepDone(Result<MirrorOutcome, VectorError>),
    /// The `chroma` part of `GET /api/status`.
    Status(RpcReplyPort<ChromaSyncStatus>),
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ChromaSyncStatus {
    pub enabled: bool,
    /// `ok` or `degraded`.
    pub state: String,
    pub collection: String,
    /// Rows (observations, summaries, prompts) not yet in Chroma.
    pub lag: i64,
    pub last_synced_at: Option<String>,
    pub last_error: Option<String>,
    pub rows_synced: u64,
}

const MAX_BACKOFF: Duration = Duration::from_secs(300);

pub struct ChromaSyncState {
    args: ChromaSyncArgs,
    prepared: bool,
    running: bool,
    failures: u32,
    retry_at: Option<Instant>,
    lag: i64,
    rows_synced: u64,
    last_synced_at: Option<i64>,
    last_error: Option<String>,
}

impl ChromaSyncState {
    fn start_step(&mut self, myself: &ActorRef<ChromaSyncMsg>) {
        if self.running || self.retry_at.is_some_and(|t| Instant::now() < t) {
            return;
        }
        self.running = true;
        let (store, client, me, prepared) = (self.args.store.clone(), self.args.client.clone(), myself.clone(), self.prepared);
        tokio::spawn(async move {
            let r = async {
                if !prepared {
                    prepare(&store, &client).await?;
                }
                step(&store, &client).await
            }
            .await;
            if r.is_err() {
                client.forget_collection();
            }
            let _ = me.cast(ChromaSyncMsg::StepDone(r));
        });
    }

    fn step_done(&mut self, myself: &ActorRef<ChromaSyncMsg>, r: Result<MirrorOutcome, VectorError>) {
        self.running = false;
        match r {
            Ok(outcome) => {
                self.prepared = true;
                self.failures = 0;
                self.retry_at = None;
                self.last_error = None;
                if let MirrorOutcome::Worked(n) = outcome {
                    self.rows_synced += n as u64;
                    self.last_synced_at = Some(self.args.clock.now());
                    let _ = myself.cast(ChromaSyncMsg::Tick);
                }
            }
            Err(e) => {
                let backoff = super::backoff::Backoff::doubling(self.args.retry, MAX_BACKOFF).delay(self.failures);
                self.failures += 1;
                self.prepared = false;
                self.retry_at = Some(Instant::now() + backoff);
                tracing::warn!(error = %e, retry_in_ms = backoff.as_millis() as u64, "chroma sync failed; backing off");
                self.last_error = Some(e.to_string());
            }
        }
    }

    async fn refresh_lag(&mut self) {
        let target = self.args.client.target();
        if let Ok(p) = self.args.store.read(move |c| progress(c, &target)).await {
            self.lag = p.lag();
        }
    }

    fn status(&self) -> ChromaSyncStatus {
        ChromaSyncStatus {
            enabled: true,
            state: if self.failures > 0 { "degraded" } else { "ok" }.into(),
            collection: self.args.client.collection_name.clone(),
            lag: self.lag,
            last_synced_at: self.last_synced_at.map(iso),
            last_error: self.last_error.clone(),
            rows_synced: self.rows_synced,
        }
    }
}

impl Actor for ChromaSync {
    type Msg = ChromaSyncMsg;
    type State = ChromaSyncState;
    type Arguments = ChromaSyncArgs;

    async fn pre_start(&self, myself: ActorRef<ChromaSyncMsg>, args: ChromaSyncArgs) -> Result<ChromaSyncState, ActorProcessingErr> {
        myself.send_interval(args.tick, || ChromaSyncMsg::Tick);
        let _ = myself.cast(ChromaSyncMsg::Tick);
        Ok(ChromaSyncState {
            args,
            prepared: false,
            running: false,
            failures: 0,
            retry_at: None,
            lag: 0,
            rows_synced: 0,
            last_synced_at: None,
            last_error: None,
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<ChromaSyncMsg>,
        msg: ChromaSyncMsg,
        state: &mut ChromaSyncState,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            ChromaSyncMsg::Tick => {
                state.start_step(&myself);
                state.refresh_lag().await;
            }
            ChromaSyncMsg::StepDone(r) => state.step_done(&myself, r),
            ChromaSyncMsg::Status(reply) => {
                let _ = reply.send(state.status());
            }
        }
        Ok(())
    }
}
