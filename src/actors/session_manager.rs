//! SessionManager — supervises one SessionActor per session with queued work.
//!
//! Owns the map from session key to actor, the restart history of each session and the set of
//! parked sessions. Supervised by RootSupervisor. Failure policy for its children
//! ([`super::backoff`]): a failed SessionActor restarts after 1 s, 2 s, 4 s (cap 8 s); more than 3
//! consecutive failures or 10 restarts in 60 s park the session as `failed` (rows kept, visible in
//! status). Other sessions are never affected. At start it rebuilds every session with pending rows.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use tokio::time::Instant;

use ractor::{Actor, ActorId, ActorProcessingErr, ActorRef, RpcReplyPort, SupervisionEvent};

use super::backoff::{RestartTracker, Verdict};
use super::registry::{SessionState as RunState, short_error};
use super::session::{SessionActor, SessionArgs, SessionContext, SessionMsg};
use crate::clock::iso;
use crate::store::sessions::SessionKey;

pub struct SessionManager;

/// How long `StopAll` waits for one session actor to stop.
const STOP_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

pub struct ManagerArgs {
    pub ctx: Arc<SessionContext>,
}

pub enum ManagerMsg {
    /// An event for this session was committed: start its actor if needed and poke it.
    Notify { key: SessionKey, session_db_id: i64 },
    /// A batch of this session was stored: its consecutive-failure count starts over.
    Healthy(SessionKey),
    /// The backoff delay of a failed session elapsed.
    Restart { key: SessionKey, session_db_id: i64 },
    /// Stop actors idle for `idle_ms` with an empty queue; answers how many stopped.
    StopIdle { idle_ms: i64, reply: RpcReplyPort<usize> },
    /// Un-park every parked session and start its actor (`memd retry`); answers how many.
    Unpark(RpcReplyPort<usize>),
    /// Stop every session actor (shutdown); answers when they are gone.
    StopAll(RpcReplyPort<()>),
}

pub struct ManagerState {
    ctx: Arc<SessionContext>,
    actors: HashMap<SessionKey, (ActorRef<SessionMsg>, i64)>,
    by_id: HashMap<ActorId, SessionKey>,
    trackers: HashMap<SessionKey, RestartTracker>,
    parked: HashSet<SessionKey>,
    epoch: Instant,
}

impl ManagerState {
    /// Decides what a child failure means (pure apart from the clock passed in).
    pub fn on_child_failed(&mut self, key: &SessionKey, now_ms: u64) -> Verdict {
        let verdict = self.trackers.entry(key.clone()).or_default().on_failure(now_ms);
        if matches!(verdict, Verdict::Park(_)) {
            self.parked.insert(key.clone());
        }
        verdict
    }

    /// A burst of sessions leaves the maps at their peak capacity after the actors are gone; give
    /// it back once they are a quarter full (amortised: a map shrinks at most every few removals).
    fn shrink_maps(&mut self) {
        fn shrink<K: std::hash::Hash + Eq, V>(m: &mut HashMap<K, V>) {
            if m.capacity() > 64 && m.len() < m.capacity() / 4 {
                m.shrink_to_fit();
            }
        }
        shrink(&mut self.actors);
        shrink(&mut self.by_id);
        shrink(&mut self.trackers);
        self.ctx.registry.shrink();
    }

    fn mono_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }
}

impl SessionManager {
    async fn ensure(
        &self,
        myself: &ActorRef<ManagerMsg>,
        key: SessionKey,
        session_db_id: i64,
        drain_at_start: bool,
        state: &mut ManagerState,
    ) -> Option<ActorRef<SessionMsg>> {
        if state.parked.contains(&key) {
            return None;
        }
        if let Some((r, _)) = state.actors.get(&key) {
            return Some(r.clone());
        }
        let args = SessionArgs {
            key: key.clone(),
            session_db_id,
            drain_at_start,
            ctx: state.ctx.clone(),
        };
        state.ctx.registry.register(&key, session_db_id);
        match Actor::spawn_linked(None, SessionActor, args, myself.get_cell()).await {
            Ok((actor, _)) => {
                let restarts = state.trackers.get(&key).map_or(0, |t| t.restarts);
                state.ctx.registry.update(&key, session_db_id, |s| s.restarts = restarts);
                state.by_id.insert(actor.get_id(), key.clone());
                state.actors.insert(key, (actor.clone(), session_db_id));
                Some(actor)
            }
            Err(e) => {
                tracing::warn!(session_id = %key, error = %e, "session actor failed to start");
                self.failed(myself, key, session_db_id, e.to_string(), state).await;
                None
            }
        }
    }

    async fn failed(&self, myself: &ActorRef<ManagerMsg>, key: SessionKey, session_db_id: i64, error: String, state: &mut ManagerState) {
        let now = state.mono_ms();
        let verdict = state.on_child_failed(&key, now);
        let tracker = state.trackers.get(&key).cloned().unwrap_or_default();
        match verdict {
            Verdict::RestartAfter(delay) => {
                tracing::warn!(session_id = %key, delay_ms = delay.as_millis() as u64, error = %error, "session actor failed; restarting");
                let retry_at = state.ctx.clock.now() + delay.as_millis() as i64;
                state.ctx.registry.update(&key, session_db_id, |s| {
                    s.state = RunState::Backoff;
                    s.consecutive_failures = tracker.consecutive;
                    s.restarts = tracker.restarts;
                    s.next_retry_at = Some(iso(retry_at));
                    s.last_error = Some(short_error(&error));
                });
                let k = key.clone();
                myself.send_after(delay, move || ManagerMsg::Restart { key: k, session_db_id });
            }
            Verdict::Park(reason) => {
                tracing::error!(session_id = %key, reason = %reason, error = %error, "session parked as failed; its rows are kept");
                // The row first: whoever sees `failed` in the registry finds it in the store too.
                let why = format!("{reason}: {}", short_error(&error));
                let _ = state.ctx.storage.mark_session_failed(session_db_id, why).await;
                state.ctx.registry.update(&key, session_db_id, |s| {
                    s.state = RunState::Failed;
                    s.consecutive_failures = tracker.consecutive;
                    s.next_retry_at = None;
                    s.last_error = Some(short_error(&error));
                });
            }
        }
    }
}

impl Actor for SessionManager {
    type Msg = ManagerMsg;
    type State = ManagerState;
    type Arguments = ManagerArgs;

    async fn pre_start(&self, myself: ActorRef<ManagerMsg>, args: ManagerArgs) -> Result<ManagerState, ActorProcessingErr> {
        let mut state = ManagerState {
            ctx: args.ctx,
            actors: HashMap::new(),
            by_id: HashMap::new(),
            trackers: HashMap::new(),
            parked: HashSet::new(),
            epoch: Instant::now(),
        };
        // Rebuild every session that has work queued (after a crash or a restart). A read-only
        // store (damaged, or from a newer memd) cannot claim rows: the work waits for a repair.
        let work = if state.ctx.storage.read_only() {
            Vec::new()
        } else {
            state
                .ctx
                .storage
                .sessions_with_pending_work()
                .await
                .map_err(|e| ActorProcessingErr::from(e.to_string()))?
        };
        if !work.is_empty() {
            tracing::info!(sessions = work.len(), "rebuilding session actors with pending rows");
        }
        for (id, key) in work {
            self.ensure(&myself, key, id, true, &mut state).await;
        }
        Ok(state)
    }

    async fn handle(&self, myself: ActorRef<ManagerMsg>, msg: ManagerMsg, state: &mut ManagerState) -> Result<(), ActorProcessingErr> {
        match msg {
            ManagerMsg::Notify { key, session_db_id } => {
                if let Some(actor) = self.ensure(&myself, key, session_db_id, false, state).await {
                    let _ = actor.cast(SessionMsg::Poke);
                }
            }
            ManagerMsg::Healthy(key) => {
                // A late Healthy from an actor that failed meanwhile changes nothing.
                if state.parked.contains(&key) || !state.actors.contains_key(&key) {
                    return Ok(());
                }
                if let Some(t) = state.trackers.get_mut(&key) {
                    t.on_success();
                    state.ctx.registry.update(&key, 0, |s| {
                        s.consecutive_failures = 0;
                        s.last_error = None;
                    });
                }
            }
            ManagerMsg::Restart { key, session_db_id } => {
                self.ensure(&myself, key, session_db_id, true, state).await;
            }
            ManagerMsg::StopIdle { idle_ms, reply } => {
                let now = state.ctx.clock.now();
                let mut stopped = 0;
                for (key, (actor, _)) in &state.actors {
                    let idle = state.ctx.registry.sessions.get(key).is_some_and(|s| {
                        s.state == RunState::Idle && s.queue_depth == 0 && s.in_flight == 0 && now - s.last_event_epoch >= idle_ms
                    });
                    if idle {
                        actor.stop(Some("idle".into()));
                        stopped += 1;
                    }
                }
                let _ = reply.send(stopped);
            }
            ManagerMsg::Unpark(reply) => {
                let parked: Vec<SessionKey> = state.parked.drain().collect();
                for key in &parked {
                    state.trackers.remove(key);
                    let id = state.ctx.registry.sessions.get(key).map_or(0, |s| s.session_db_id);
                    if id > 0 {
                        self.ensure(&myself, key.clone(), id, true, state).await;
                    }
                }
                let _ = reply.send(parked.len());
            }
            ManagerMsg::StopAll(reply) => {
                // Stop every actor and answer once they are all gone (or 5 s passed).
                let mut stopping = tokio::task::JoinSet::new();
                for (actor, _) in state.actors.values() {
                    let actor = actor.clone();
                    stopping.spawn(async move { actor.stop_and_wait(Some("shutdown".into()), Some(STOP_WAIT)).await });
                }
                while stopping.join_next().await.is_some() {}
                let _ = reply.send(());
            }
        }
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        myself: ActorRef<ManagerMsg>,
        evt: SupervisionEvent,
        state: &mut ManagerState,
    ) -> Result<(), ActorProcessingErr> {
        match evt {
            SupervisionEvent::ActorFailed(cell, error) => {
                if let Some(key) = state.by_id.remove(&cell.get_id())
                    && let Some((_, id)) = state.actors.remove(&key)
                {
                    self.failed(&myself, key, id, error.to_string(), state).await;
                }
            }
            SupervisionEvent::ActorTerminated(cell, _, reason) => {
                if let Some(key) = state.by_id.remove(&cell.get_id()) {
                    if let Some((_, id)) = state.actors.remove(&key)
                        && reason.as_deref() == Some("idle")
                    {
                        let now = state.ctx.clock.now();
                        let _ = state.ctx.storage.complete_idle_session(id, now).await;
                    }
                    state.ctx.registry.remove(&key);
                    state.shrink_maps();
                    tracing::debug!(session_id = %key, reason = reason.as_deref().unwrap_or(""), "session actor stopped");
                }
            }
            SupervisionEvent::ActorStarted(_) | SupervisionEvent::ProcessGroupChanged(_) => {}
        }
        Ok(())
    }
}
