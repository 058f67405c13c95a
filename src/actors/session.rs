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
use super::provider::ProviderMsg;
use super::registry::{Registry, SessionState as RunState, short_error};
use super::session_manager::ManagerMsg;
use crate::clock::{iso, now_ms};
use crate::store::Store;
use crate::store::batch::{BatchOutput, store_batch};
use crate::store::pending::{self, BatchLimits, Claim, ClaimedBatch, Release};
use crate::store::sessions::SessionKey;

/// Shared by every session actor.
pub struct SessionContext {
    pub store: Store,
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
    #[cfg(test)]
    pub faults: Arc<dashmap::DashMap<SessionKey, u32>>,
    /// Sessions whose actor takes a second to stop (fault injection).
    #[cfg(test)]
    pub slow_stops: Arc<dashmap::DashSet<SessionKey>>,
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
        result: Result<Box<BatchOutput>, String>,
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

/// Backoff before retrying a batch after its `attempts`-th failed provider call:
/// 5 s, 30 s, then 120 s, each ± 20 % jitter (docs/spec/pipeline.md §13).
pub fn retry_delay_ms(attempts: i64, jitter_unit: f64) -> i64 {
    let base: f64 = match attempts {
        ..=1 => 5_000.0,
        2 => 30_000.0,
        _ => 120_000.0,
    };
    (base * (0.8 + 0.4 * jitter_unit.clamp(0.0, 1.0))) as i64
}

/// A number in [0, 1) from the process's random hasher keys and the clock.
fn jitter_unit() -> f64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_i64(now_ms());
    (h.finish() % 1_000_000) as f64 / 1_000_000.0
}

/// What the batching policy wants done next.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    ClaimNow,
    ArmTimer(u64),
    Nothing,
}

/// Generator state; the methods are pure so the policy is unit tested without a runtime.
#[derive(Debug, Clone)]
pub struct SessionState {
    pub key: SessionKey,
    pub session_db_id: i64,
    pub in_flight: Option<Vec<i64>>,
    pub timer_armed: bool,
    pub last_event_ms: i64,
    pub first_unclaimed_ms: Option<i64>,
    pub unclaimed: i64,
    pub debounce_ms: i64,
    pub max_wait_ms: i64,
    pub max_events: i64,
}

impl SessionState {
    pub fn on_poke(&mut self, now: i64) -> Next {
        self.unclaimed += 1;
        self.last_event_ms = now;
        self.first_unclaimed_ms.get_or_insert(now);
        if self.in_flight.is_some() {
            return Next::Nothing;
        }
        if self.unclaimed >= self.max_events {
            return Next::ClaimNow;
        }
        if self.timer_armed {
            Next::Nothing
        } else {
            self.timer_armed = true;
            Next::ArmTimer(self.debounce_ms as u64)
        }
    }

    pub fn on_tick(&mut self, now: i64) -> Next {
        self.timer_armed = false;
        if self.in_flight.is_some() {
            return Next::Nothing;
        }
        let quiet = now - self.last_event_ms;
        let age = self.first_unclaimed_ms.map_or(0, |t| now - t);
        if quiet >= self.debounce_ms || age >= self.max_wait_ms {
            Next::ClaimNow
        } else {
            self.timer_armed = true;
            Next::ArmTimer((self.debounce_ms - quiet).min(self.max_wait_ms - age).max(1) as u64)
        }
    }

    /// After a stored batch: rows that arrived meanwhile are batched by the same rules.
    pub fn after_batch(&mut self, now: i64) -> Next {
        self.in_flight = None;
        if self.unclaimed <= 0 || self.timer_armed {
            return Next::Nothing;
        }
        if self.unclaimed >= self.max_events {
            return Next::ClaimNow;
        }
        self.on_tick(now)
    }

    pub fn on_claimed(&mut self, ids: Vec<i64>, remaining: i64, now: i64) {
        self.in_flight = Some(ids);
        self.unclaimed = remaining;
        self.first_unclaimed_ms = (remaining > 0).then_some(now);
    }
}

/// How long after its deadline an unanswered batch is taken back.
const DEADLINE_GRACE: Duration = Duration::from_secs(5);

impl SessionState {
    /// Whether a reply about batch `batch_id` concerns the batch in flight (a reply to a batch
    /// already taken back is late and ignored).
    pub fn is_current(&self, batch_id: i64) -> bool {
        self.in_flight
            .as_ref()
            .and_then(|ids| ids.first())
            .is_some_and(|first| *first == batch_id)
    }
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
        let (id, limits, now) = (state.session_db_id, ctx.limits, now_ms());
        let (claim, depth) = ctx
            .store
            .write(move |c| {
                let claim = pending::claim_batch(c, id, now, limits)?;
                Ok((claim, pending::depth(c, id)?))
            })
            .await
            .map_err(err)?;
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
                let deadline = std::time::Instant::now() + ctx.observe_deadline;
                provider
                    .cast(ProviderMsg::Observe {
                        batch,
                        reply_to: myself.clone(),
                        deadline,
                    })
                    .map_err(err)?;
                // The backstop for a reply that never comes (the provider's own deadline ends its
                // calls first; this catches a lost message).
                myself.send_after(ctx.observe_deadline + DEADLINE_GRACE, move || SessionMsg::ObserveTimeout {
                    batch_id,
                });
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
        #[cfg(test)]
        if let Some(mut n) = ctx.faults.get_mut(&state.key)
            && *n > 0
        {
            *n -= 1;
            return Err(err("injected session failure"));
        }
        let now = now_ms();
        let meta = batch.meta.clone();
        let stored = ctx.store.write(move |c| store_batch(c, &meta, &out, now)).await.map_err(err)?;
        if let Some(manager) = ctx.handles.manager() {
            let _ = manager.cast(ManagerMsg::Healthy(state.key.clone()));
        }
        tracing::debug!(session_id = %state.key, observations = stored.observation_ids.len(), "batch stored");
        if stored.session_completed {
            myself.stop(Some("completed".into()));
            return Ok(());
        }
        let next = state.after_batch(now_ms());
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
        error: String,
        state: &mut SessionState,
        ctx: &SessionContext,
    ) -> Result<(), ActorProcessingErr> {
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
        let retry_at = now_ms() + retry_delay_ms(attempts, jitter_unit());
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
        let now = now_ms();
        let e = error.clone();
        ctx.store
            .write(move |c| pending::release_batch(c, &ids, &Release::Retry { retry_at, count_attempt }, &e, now))
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
        let depth = ctx
            .store
            .write(move |c| {
                pending::revert_session(c, id)?;
                pending::depth(c, id)
            })
            .await
            .map_err(err)?;
        let queued = if args.drain_at_start { depth.0 } else { 0 };
        let now = now_ms();
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
            last_event_ms: now_ms(),
            first_unclaimed_ms: None,
            unclaimed: queued,
            debounce_ms: ctx.debounce_ms as i64,
            max_wait_ms: ctx.max_wait_ms as i64,
            max_events: ctx.limits.max_events as i64,
        };
        if args.drain_at_start && depth.0 > 0 {
            myself.cast(SessionMsg::Drain).map_err(err)?;
        }
        Ok((state, ctx))
    }

    #[cfg(test)]
    async fn post_stop(&self, _myself: ActorRef<SessionMsg>, st: &mut Self::State) -> Result<(), ActorProcessingErr> {
        if st.1.slow_stops.contains(&st.0.key) {
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        Ok(())
    }

    async fn handle(&self, myself: ActorRef<SessionMsg>, msg: SessionMsg, st: &mut Self::State) -> Result<(), ActorProcessingErr> {
        let (state, ctx) = st;
        let ctx = ctx.clone();
        match msg {
            SessionMsg::Poke => {
                let now = now_ms();
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
                let next = state.on_tick(now_ms());
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
                let retry_at = now_ms() + retry_delay_ms(1, jitter_unit());
                self.release(&myself, error, retry_at, true, state, &ctx).await
            }
            SessionMsg::ObserveTimeout { batch_id } => {
                tracing::warn!(session_id = %state.key, batch = batch_id, "no answer from the observer by the deadline; batch taken back");
                let retry_at = now_ms() + retry_delay_ms(1, jitter_unit());
                self.release(&myself, "observer deadline passed".into(), retry_at, false, state, &ctx)
                    .await
            }
            SessionMsg::Deferred { retry_at, reason, .. } => self.release(&myself, reason, retry_at, false, state, &ctx).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> SessionState {
        SessionState {
            key: SessionKey::new("claude", "s"),
            session_db_id: 1,
            in_flight: None,
            timer_armed: false,
            last_event_ms: 0,
            first_unclaimed_ms: None,
            unclaimed: 0,
            debounce_ms: 2_000,
            max_wait_ms: 30_000,
            max_events: 3,
        }
    }

    #[test]
    fn debounces_then_claims_when_quiet() {
        let mut s = state();
        assert_eq!(s.on_poke(0), Next::ArmTimer(2_000));
        assert_eq!(s.on_poke(500), Next::Nothing);
        assert_eq!(s.on_tick(2_000), Next::ArmTimer(500));
        assert_eq!(s.on_tick(2_500), Next::ClaimNow);
    }

    #[test]
    fn a_full_batch_claims_at_once_and_in_flight_waits() {
        let mut s = state();
        s.on_poke(0);
        s.on_poke(1);
        assert_eq!(s.on_poke(2), Next::ClaimNow);
        s.on_claimed(vec![1, 2, 3], 0, 3);
        assert_eq!(s.on_poke(4), Next::Nothing);
        assert_eq!(s.on_tick(5_000), Next::Nothing);
    }

    #[test]
    fn retry_delays_are_5_30_120_seconds_within_20_percent() {
        assert_eq!(retry_delay_ms(1, 0.5), 5_000);
        assert_eq!(retry_delay_ms(2, 0.0), 24_000);
        assert_eq!(retry_delay_ms(3, 1.0), 144_000);
        assert_eq!(retry_delay_ms(9, 0.5), 120_000);
    }

    #[test]
    fn max_wait_closes_a_batch_under_constant_trickle() {
        let mut s = state();
        s.max_events = 1_000;
        s.on_poke(0);
        let mut t = 0;
        while t < 30_000 {
            t += 1_000;
            s.on_poke(t);
        }
        assert_eq!(s.on_tick(30_000), Next::ClaimNow);
    }
}
