//! VectorSync — keeps the embedded vector store (`vectors` + sqlite-vec) in step with the stored
//! observations, summaries and prompts, after they committed: ingest never waits for it.
//!
//! Owns nothing durable in memory: progress lives in SQLite (watermarks and `vector_sync`), so a
//! restart (or a crash) resumes where the last committed step ended. Each step (one batch of rows:
//! embed on a blocking thread, then one write) runs in a spawned task that reports back with
//! `StepDone`, so `Status` is answered at once even while the model works.
//! Supervised by RootSupervisor. Failure policy: a failed step is recorded in the status and
//! retried after a backoff (1 s doubling to 60 s); a missing model parks the sync (`no_model`) and
//! is re-checked every tick; a panic restarts the actor, which resumes from the watermarks.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use serde::{Deserialize, Serialize};

use crate::store::Store;
use crate::vectors::VectorError;
use crate::vectors::service::EmbedService;
use crate::vectors::sync::{StepOutcome, check_model, reindex, step};
use crate::vectors::sync_state::{Progress, SQLITE_TARGET, progress};

pub struct VectorSync;

pub struct VectorSyncArgs {
    pub store: Store,
    pub embed: Arc<EmbedService>,
    /// How often to look for new rows when idle.
    pub tick: Duration,
}

pub enum VectorSyncMsg {
    /// Periodic check: start a step unless one runs or a backoff holds.
    Tick,
    /// A step finished (sent by the step's task).
    StepDone(Result<StepOutcome, VectorError>),
    /// Drop every vector and re-embed from the start (`memd reindex`); answers when cleared.
    Reindex(RpcReplyPort<Result<(), VectorError>>),
    /// The `vectors` part of `GET /api/status`.
    Status(RpcReplyPort<VectorSyncStatus>),
}

/// `ok`, `backfilling`, `no_model`, `degraded` (docs/spec/api.md §6.3).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct VectorSyncStatus {
    pub state: String,
    pub model: String,
    pub model_loaded: bool,
    /// The model is being loaded (a static table's first distillation takes a minute or more;
    /// searches meanwhile answer keyword-only).
    pub model_loading: bool,
    /// `sqlite` or `chroma` (where semantic queries go); None when vectors are off.
    pub store: Option<String>,
    /// `sign-codes` (the in-memory index, once built), `sqlite-vec` or `brute-force`; set by the status room.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<String>,
    pub backfill: Progress,
    pub rows_embedded: u64,
    pub last_error: Option<String>,
}

pub struct VectorSyncState {
    args: VectorSyncArgs,
    running: bool,
    no_model: bool,
    failures: u32,
    retry_at: Option<Instant>,
    progress: Progress,
    progress_at: Option<Instant>,
    rows_embedded: u64,
    last_error: Option<String>,
    /// A reindex asked for while a step ran: done when the step reports back.
    reindex_waiting: Option<RpcReplyPort<Result<(), VectorError>>>,
    /// A step has been waiting for ingest to go quiet since then.
    yielding_since: Option<Instant>,
}

const PROGRESS_EVERY: Duration = Duration::from_secs(1);
/// While ingest requests are in flight a step waits for a later tick, so embedding does not take
/// the CPU from acknowledgements; after [`YIELD_MAX`] it runs anyway, so a sustained load still
/// makes progress (one step of 16 rows per ~2 s).
const YIELD_MAX: Duration = Duration::from_secs(2);

/// Whether a step should wait: ingest is busy and the step has not waited [`YIELD_MAX`] yet
/// (`since`: when it started waiting; cleared when it runs).
fn yield_to_ingest(busy: bool, since: &mut Option<Instant>, now: Instant) -> bool {
    if !busy {
        return false;
    }
    let started = *since.get_or_insert(now);
    now.duration_since(started) < YIELD_MAX
}

impl VectorSyncState {
    fn start_step(&mut self, myself: &ActorRef<VectorSyncMsg>) {
        if self.running || self.reindex_waiting.is_some() || self.retry_at.is_some_and(|t| Instant::now() < t) {
            return;
        }
        if !self.args.embed.model_present() {
            self.no_model = true;
            return;
        }
        if self.should_yield(Instant::now()) {
            // The next periodic tick looks again.
            return;
        }
        self.yielding_since = None;
        self.running = true;
        let (store, embed, me) = (self.args.store.clone(), self.args.embed.clone(), myself.clone());
        tokio::spawn(async move {
            let _ = me.cast(VectorSyncMsg::StepDone(step(&store, &embed).await));
        });
    }

    fn should_yield(&mut self, now: Instant) -> bool {
        let busy = self.args.store.arrivals.load(std::sync::atomic::Ordering::Relaxed) > 0;
        yield_to_ingest(busy, &mut self.yielding_since, now)
    }

    fn step_done(&mut self, myself: &ActorRef<VectorSyncMsg>, result: Result<StepOutcome, VectorError>) {
        self.running = false;
        match result {
            Ok(StepOutcome::Worked(n)) => {
                self.rows_embedded += n as u64;
                self.failures = 0;
                self.retry_at = None;
                self.no_model = false;
                self.last_error = None;
                // More may wait: go on at once (ticks only wake an idle sync).
                let _ = myself.cast(VectorSyncMsg::Tick);
            }
            Ok(StepOutcome::Idle) => {
                self.failures = 0;
                self.retry_at = None;
                self.no_model = false;
            }
            Err(e) => {
                self.failures += 1;
                let backoff = super::backoff::Backoff::LOOP.delay(self.failures);
                self.retry_at = Some(Instant::now() + backoff);
                let model_problem = matches!(e, VectorError::NoModel(_) | VectorError::Model(_));
                self.no_model = model_problem && !self.args.embed.model_present();
                tracing::warn!(error = %e, retry_in_s = backoff.as_secs(), "vector sync step failed");
                self.last_error = Some(e.to_string());
            }
        }
    }

    async fn reindex(&mut self, myself: &ActorRef<VectorSyncMsg>, reply: RpcReplyPort<Result<(), VectorError>>) {
        let r = reindex(&self.args.store).await;
        tracing::info!(ok = r.is_ok(), "vector reindex: embedded store cleared");
        self.retry_at = None;
        self.refresh_progress(true).await;
        let _ = reply.send(r);
        let _ = myself.cast(VectorSyncMsg::Tick);
    }

    async fn refresh_progress(&mut self, force: bool) {
        if !force && self.progress_at.is_some_and(|t| t.elapsed() < PROGRESS_EVERY) {
            return;
        }
        if let Ok(p) = self.args.store.read(|c| progress(c, SQLITE_TARGET)).await {
            self.progress = p;
            self.progress_at = Some(Instant::now());
        }
    }

    fn status(&self) -> VectorSyncStatus {
        let state = if self.no_model {
            "no_model"
        } else if self.last_error.is_some() && self.failures > 0 {
            "degraded"
        } else if self.progress.done < self.progress.total {
            "backfilling"
        } else {
            "ok"
        };
        VectorSyncStatus {
            state: state.into(),
            model: self.args.embed.model_name().into(),
            model_loaded: self.args.embed.loaded(),
            model_loading: self.args.embed.loading(),
            store: Some("sqlite".into()),
            index: None,
            backfill: self.progress,
            rows_embedded: self.rows_embedded,
            last_error: self.last_error.clone(),
        }
    }
}

impl Actor for VectorSync {
    type Msg = VectorSyncMsg;
    type State = VectorSyncState;
    type Arguments = VectorSyncArgs;

    async fn pre_start(&self, myself: ActorRef<VectorSyncMsg>, args: VectorSyncArgs) -> Result<VectorSyncState, ActorProcessingErr> {
        match check_model(&args.store, args.embed.model_name()).await {
            Ok(true) => tracing::info!("embedding model changed; the embedded vector store is rebuilt"),
            Ok(false) => {}
            Err(e) => tracing::warn!(error = %e, "cannot check the embedding model of the vector store"),
        }
        myself.send_interval(args.tick, || VectorSyncMsg::Tick);
        let mut state = VectorSyncState {
            no_model: !args.embed.model_present(),
            args,
            running: false,
            failures: 0,
            retry_at: None,
            progress: Progress::default(),
            progress_at: None,
            rows_embedded: 0,
            last_error: None,
            reindex_waiting: None,
            yielding_since: None,
        };
        state.refresh_progress(true).await;
        let _ = myself.cast(VectorSyncMsg::Tick);
        Ok(state)
    }

    async fn handle(
        &self,
        myself: ActorRef<VectorSyncMsg>,
        msg: VectorSyncMsg,
        state: &mut VectorSyncState,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            VectorSyncMsg::Tick => {
                state.start_step(&myself);
                state.refresh_progress(false).await;
            }
            VectorSyncMsg::StepDone(result) => {
                state.step_done(&myself, result);
                if let Some(reply) = state.reindex_waiting.take() {
                    state.reindex(&myself, reply).await;
                }
            }
            // A running step must not commit over a cleared store: wait for it.
            VectorSyncMsg::Reindex(reply) if state.running => state.reindex_waiting = Some(reply),
            VectorSyncMsg::Reindex(reply) => state.reindex(&myself, reply).await,
            VectorSyncMsg::Status(reply) => {
                let _ = reply.send(state.status());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_yields_to_busy_ingest_for_at_most_two_seconds() {
        let t0 = Instant::now();
        let mut since = None;
        assert!(!yield_to_ingest(false, &mut since, t0), "quiet ingest: run");
        assert!(yield_to_ingest(true, &mut since, t0));
        assert!(yield_to_ingest(true, &mut since, t0 + Duration::from_millis(1_900)));
        assert!(
            !yield_to_ingest(true, &mut since, t0 + YIELD_MAX),
            "sustained load still progresses"
        );
    }
}
