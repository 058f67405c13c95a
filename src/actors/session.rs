//! SessionActor — one per (platform_source, contentSessionId) with queued work.
//!
//! Owns the session's generator state: which pending rows are in flight, the debounce timer, and
//! the batching decision (docs/spec/pipeline.md §7). It claims a batch through the store, hands it to
//! the ProviderActor, and stores the result (observations + deletion of the pending rows in one
//! transaction). Supervised by SessionManager. Failure policy: any error fails the actor; its
//! claimed rows stay `processing` in SQLite and the restarted actor reverts them to `pending` in
//! `pre_start`, so nothing acknowledged is lost; the manager applies backoff and parking.

use std::sync::Arc;
use std::time::Duration;

use ractor::{Actor, ActorProcessingErr, ActorRef};

use super::Handles;
use super::faults::Faults;
use super::provider::ProviderMsg;
use super::registry::{Registry, SessionState as RunState, short_error};
use super::session_manager::ManagerMsg;
use crate::backend::Storage;
use crate::clock::{Clock, iso};
use crate::providers::CallError;
use crate::store::batch::BatchOutput;
use crate::store::pending::{BatchLimits, Claim, ClaimedBatch, Release};
use crate::store::sessions::SessionKey;

pub use super::session_state::{Backstop, Next, SessionState, retry_delay_ms};
use super::session_state::{DEADLINE_GRACE, jitter_unit};

/// Shared by every session actor.
pub struct SessionContext {
    /// Storage (the seam): claims, releases and stored batches.
    pub storage: Arc<dyn Storage>,
    pub handles: Arc<Handles>,
    pub registry: Arc<Registry>,
    pub limits: BatchLimits,
    pub debounce_ms: u64,
    pub max_wait_ms: u64,
    /// `MEMD_OBSERVER_MAX_ATTEMPTS`: failed provider attempts before the extractive observer.
    pub max_attempts: u32,
    /// How long a batch may be with the observer before the session takes it back (the call, its
    /// re-ask and an overflow split at `MEMD_OBSERVER_TIMEOUT_MS` each, plus a margin).
    pub observe_deadline: Duration,
    /// Where every session actor (and the manager) reads "now".
    pub clock: Clock,
    /// Faults a test injects through the worker's builder; empty otherwise.
    pub faults: Arc<Faults>,
}

pub struct SessionActor;

pub struct SessionArgs {
    pub key: SessionKey,
    pub session_db_id: i64,
    /// Rebuilt at start or after a failure: its rows already waited, so drain at once. A session
    /// spawned by a new event waits for the debounce like any other.
    pub drain_at_start: bool,
    pub ctx: Arc<SessionContext>,
}

pub enum SessionMsg {
    /// An event for this session was committed.
    Poke,
    /// Claim at once, without waiting for the debounce (start-up drain, after a stored batch).
    Drain,
    /// The debounce or backoff timer fired.
    Tick,
    /// The provider finished a batch.
    Observed {
        batch: Box<ClaimedBatch>,
        result: Result<Box<BatchOutput>, CallError>,
    },
    /// The provider could not run the in-flight batch `batch_id` at all.
    ObserveFailed { batch_id: i64, error: String },
    /// The in-flight deadline of batch `batch_id` passed without an answer: take it back.
    ObserveTimeout { batch_id: i64 },
    /// A quota/failure breaker is open: the rows go back to `pending` until `retry_at`
    /// (attempts unchanged).
    Deferred {
        batch: Box<ClaimedBatch>,
        retry_at: i64,
        reason: String,
    },
}

fn err(e: impl std::fmt::Display) -> ActorProcessingErr {
    ActorProcessingErr::from(e.to_string())
}

impl SessionActor {
    async fn act(
        &self,
        myself: &ActorRef<SessionMsg>,
        next: Next,
        state: &mut SessionState,
        ctx: &SessionContext,
    ) -> Result<(), ActorProcessingErr> {
        match next {
            Next::ClaimNow => self.claim(myself, state, ctx).await,
            Next::ArmTimer(ms) => {
                myself.send_after(Duration::from_millis(ms), || SessionMsg::Tick);
                Ok(())
            }
            Next::Nothing => Ok(()),
        }
    }

    async fn claim(&self, myself: &ActorRef<SessionMsg>, state: &mut SessionState, ctx: &SessionContext) -> Result<(), ActorProcessingErr> {
        if state.in_flight.is_some() {
            return Ok(());
        }
        let (id, limits, now) = (state.session_db_id, ctx.limits, ctx.clock.now());
        let (claim, depth) = ctx.storage.claim_batch(id, now, limits).await.map_err(err)?;
        ctx.registry.update(&state.key, id, |s| {
            s.queue_depth = depth.0;
            s.in_flight = depth.1;
        });
        match claim {
            Claim::Batch(batch) => {
                state.on_claimed(batch.meta.pending_ids.clone(), depth.0, now);
                ctx.registry.update(&state.key, id, |s| {
                    s.state = RunState::Processing;
                    s.project = batch.meta.project.clone();
                });
                let provider = ctx.handles.provider().ok_or_else(|| err("provider is not running"))?;
                let batch_id = batch.id();
                let deadline = tokio::time::Instant::now() + ctx.observe_deadline;
                provider
                    .cast(ProviderMsg::Observe {
                        batch,
                        reply_to: myself.clone(),
                        deadline,
                    })
                    .map_err(err)?;
                // The backstop for a reply that never comes (the provider's own deadline ends its
                // calls first; this catches a lost message).
                state.backstop.set(
                    myself
                        .send_after(ctx.observe_deadline + DEADLINE_GRACE, move || SessionMsg::ObserveTimeout {
                            batch_id,
                        })
                        .abort_handle(),
                );
            }
            Claim::WaitUntil(t) => {
                state.timer_armed = true;
                myself.send_after(Duration::from_millis((t - now).max(1) as u64), || SessionMsg::Tick);
            }
            Claim::InFlight => {}
            Claim::Empty => {
                state.unclaimed = 0;
                state.first_unclaimed_ms = None;
                ctx.registry.update(&state.key, id, |s| s.state = RunState::Idle);
            }
        }
        Ok(())
    }

    async fn stored(
        &self,
        myself: &ActorRef<SessionMsg>,
        batch: Box<ClaimedBatch>,
        out: Box<BatchOutput>,
        state: &mut SessionState,
        ctx: &SessionContext,
    ) -> Result<(), ActorProcessingErr> {
        if ctx.faults.fail_session_store(&state.key) {
            return Err(err("injected session failure"));
        }
        let now = ctx.clock.now();
        let meta = batch.meta.clone();
        let stored = ctx.storage.store_batch(meta, *out, now).await.map_err(err)?;
        if let Some(manager) = ctx.handles.manager() {
            let _ = manager.cast(ManagerMsg::Healthy(state.key.clone()));
        }
        tracing::debug!(session_id = %state.key, observations = stored.observation_ids.len(), "batch stored");
        if stored.session_completed {
            myself.stop(Some("completed".into()));
            return Ok(());
        }
        let next = state.after_batch(ctx.clock.now());
        let (queued, idle) = (state.unclaimed.max(0), next == Next::Nothing && state.unclaimed <= 0);
        ctx.registry.update(&state.key, state.session_db_id, |s| {
            s.queue_depth = queued;
            s.in_flight = 0;
            if idle {
                s.state = RunState::Idle;
            }
        });
        self.act(myself, next, state, ctx).await
    }

    /// A transient provider failure: retry with backoff, or hand the batch to the extractive
    /// observer once it has used up its attempts (never dropped).
    async fn failed_attempt(
        &self,
        myself: &ActorRef<SessionMsg>,
        batch: Box<ClaimedBatch>,
        error: CallError,
        state: &mut SessionState,
        ctx: &SessionContext,
    ) -> Result<(), ActorProcessingErr> {
        let error = error.reason().to_string();
        let attempts = batch.meta.attempts + 1;
        if attempts >= i64::from(ctx.max_attempts) {
            tracing::info!(session_id = %state.key, attempts, error = %error, "observer attempts used up; extractive observer");
            ctx.registry
                .update(&state.key, state.session_db_id, |s| s.last_error = Some(short_error(&error)));
            let provider = ctx.handles.provider().ok_or_else(|| err("provider is not running"))?;
            return provider
                .cast(ProviderMsg::Fallback {
                    batch,
                    reply_to: myself.clone(),
                })
                .map_err(err);
        }
        let retry_at = ctx.clock.now() + retry_delay_ms(attempts, jitter_unit(ctx.clock.now()));
        self.release(myself, error, retry_at, true, state, ctx).await
    }

    async fn release(
        &self,
        myself: &ActorRef<SessionMsg>,
        error: String,
        retry_at: i64,
        count_attempt: bool,
        state: &mut SessionState,
        ctx: &SessionContext,
    ) -> Result<(), ActorProcessingErr> {
        let Some(ids) = state.in_flight.take() else { return Ok(()) };
        state.backstop.clear();
        let now = ctx.clock.now();
        let e = error.clone();
        ctx.storage
            .release_batch(ids, Release::Retry { retry_at, count_attempt }, e, now)
            .await
            .map_err(err)?;
        ctx.registry.update(&state.key, state.session_db_id, |s| {
            s.last_error = Some(short_error(&error));
            s.next_retry_at = Some(iso(retry_at));
        });
        state.timer_armed = true;
        myself.send_after(Duration::from_millis((retry_at - now).max(1) as u64), || SessionMsg::Tick);
        Ok(())
    }
}

impl Actor for SessionActor {
    type Msg = SessionMsg;
    type State = (SessionState, Arc<SessionContext>);
    type Arguments = SessionArgs;

    async fn pre_start(&self, myself: ActorRef<SessionMsg>, args: SessionArgs) -> Result<Self::State, ActorProcessingErr> {
        let ctx = args.ctx;
        let id = args.session_db_id;
        // Rows a dead predecessor had claimed become claimable again (rebuild from SQLite).
        let depth = ctx.storage.revert_session(id).await.map_err(err)?;
        let queued = if args.drain_at_start { depth.0 } else { 0 };
        let now = ctx.clock.now();
        ctx.registry.update(&args.key, id, |s| {
            // Spawning counts as activity: the reaper must not stop an actor before its first Poke.
            s.last_event_epoch = s.last_event_epoch.max(now);
            s.last_event_at = Some(iso(s.last_event_epoch));
            s.queue_depth = queued;
            s.state = RunState::Idle;
            s.next_retry_at = None;
        });
        let state = SessionState {
            key: args.key,
            session_db_id: id,
            in_flight: None,
            timer_armed: false,
            last_event_ms: ctx.clock.now(),
            first_unclaimed_ms: None,
            unclaimed: queued,
            debounce_ms: ctx.debounce_ms as i64,
            max_wait_ms: ctx.max_wait_ms as i64,
            max_events: ctx.limits.max_events as i64,
            backstop: Backstop::default(),
        };
        if args.drain_at_start && depth.0 > 0 {
            myself.cast(SessionMsg::Drain).map_err(err)?;
        }
        Ok((state, ctx))
    }

    async fn post_stop(&self, _myself: ActorRef<SessionMsg>, st: &mut Self::State) -> Result<(), ActorProcessingErr> {
        if st.1.faults.slow_stops.contains(&st.0.key) {
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        Ok(())
    }

    async fn handle(&self, myself: ActorRef<SessionMsg>, msg: SessionMsg, st: &mut Self::State) -> Result<(), ActorProcessingErr> {
        let (state, ctx) = st;
        let ctx = ctx.clone();
        match msg {
            SessionMsg::Poke => {
                let now = ctx.clock.now();
                ctx.registry.update(&state.key, state.session_db_id, |s| {
                    s.last_event_epoch = now;
                    s.last_event_at = Some(iso(now));
                    s.queue_depth += 1;
                });
                let next = state.on_poke(now);
                self.act(&myself, next, state, &ctx).await
            }
            SessionMsg::Drain => self.claim(&myself, state, &ctx).await,
            SessionMsg::Tick => {
                let next = state.on_tick(ctx.clock.now());
                self.act(&myself, next, state, &ctx).await
            }
            SessionMsg::Observed { batch, .. } | SessionMsg::Deferred { batch, .. } if !state.is_current(batch.id()) => {
                tracing::debug!(session_id = %state.key, batch = batch.id(), "late answer for a batch taken back; ignored");
                Ok(())
            }
            SessionMsg::ObserveFailed { batch_id, .. } | SessionMsg::ObserveTimeout { batch_id } if !state.is_current(batch_id) => Ok(()),
            SessionMsg::Observed { batch, result: Ok(out) } => self.stored(&myself, batch, out, state, &ctx).await,
            SessionMsg::Observed { batch, result: Err(e) } => self.failed_attempt(&myself, batch, e, state, &ctx).await,
            SessionMsg::ObserveFailed { error, .. } => {
                let retry_at = ctx.clock.now() + retry_delay_ms(1, jitter_unit(ctx.clock.now()));
                self.release(&myself, error, retry_at, true, state, &ctx).await
            }
            SessionMsg::ObserveTimeout { batch_id } => {
                tracing::warn!(session_id = %state.key, batch = batch_id, "no answer from the observer by the deadline; batch taken back");
                let retry_at = ctx.clock.now() + retry_delay_ms(1, jitter_unit(ctx.clock.now()));
                self.release(&myself, "observer deadline passed".into(), retry_at, false, state, &ctx)
                    .await
            }
            SessionMsg::Deferred { retry_at, reason, .. } => self.release(&myself, reason, retry_at, false, state, &ctx).await,
        }
    }
}
