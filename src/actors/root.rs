//! RootSupervisor — the top of the tree: the children of [`super::children`] (StoreActor,
//! ProviderActor, SessionManager, OrphanReaper, VectorSync when vectors are on, ChromaSync when a
//! Chroma server is configured, TranscriptWatcher when `MEMD_WATCH` is on).
//!
//! Owns the spawn arguments of each child so it can restart any of them. Failure policy: a child
//! that fails (or stops on its own) is restarted with the session backoff ([`super::backoff`]:
//! 1 s, 2 s, 4 s, capped at 8 s; durable state lives in SQLite, so the manager rebuilds sessions
//! with pending rows); [`super::Handles`] is refreshed so ingress reaches the new instance, and
//! says which children are down meanwhile. A respawn that fails counts as a failure. Past the
//! budget (more than 3 consecutive failures, or 10 restarts in 60 s) the root stops restarting
//! that child and marks the tree dead: readiness answers 503 with the reason. The root never
//! fails because of a child, only stops on shutdown.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use ractor::{Actor, ActorProcessingErr, ActorRef, SupervisionEvent};

use super::backoff::{RestartTracker, Verdict};
use super::children::{Child, start_child};
use super::provider::{ObserverSetup, ProviderMsg};
use super::session::SessionContext;
use super::transcript_watcher::WatcherArgs;
use crate::pipeline::privacy::Privacy;

pub struct RootSupervisor;

pub struct RootArgs {
    pub ctx: Arc<SessionContext>,
    /// The embedded SQLite file itself: its writer (the store actor) and its vector index (the
    /// vector and Chroma syncs). Everything else reaches storage through `ctx.storage`.
    pub store: crate::store::Store,
    pub privacy: Arc<Privacy>,
    /// Backend, mode, budget and limits of the observer.
    pub observer: ObserverSetup,
    pub data_dir: PathBuf,
    pub reaper_interval: Duration,
    pub idle_ms: i64,
    pub stale_pid_replaced: bool,
    /// Observer process groups of a previous run killed at start (`<data>/children.json`).
    pub children_reaped: u64,
    /// The shared embedder; None when vectors are off (`MEMD_EMBEDDINGS=none`).
    pub embed: Option<Arc<crate::vectors::service::EmbedService>>,
    /// The Chroma mirror's client and first retry delay; None without `MEMD_CHROMA_URL`.
    pub chroma: Option<(Arc<crate::vectors::chroma::ChromaClient>, Duration)>,
    /// The transcript watcher's arguments (cloned for each start); None unless `MEMD_WATCH` is on.
    pub watch: Option<WatcherArgs>,
    /// Team memory's server and shared projects; None without `MEMD_TEAM_DATABASE_URL`.
    pub team: Option<crate::config::TeamSettings>,
}

pub enum RootMsg {
    /// The backoff of this child elapsed: start it again.
    Respawn(Child),
    /// Settings reloaded: the provider runs with this setup now, and so does any provider the
    /// root starts later.
    Reconfigure(Box<ObserverSetup>),
}

pub struct RootState {
    args: RootArgs,
    children: Vec<(ractor::ActorId, Child)>,
    pub child_restarts: u64,
    trackers: std::collections::HashMap<Child, RestartTracker>,
    epoch: tokio::time::Instant,
    /// Shutting down: children stopping are expected.
    stopping: bool,
}

impl RootState {
    /// What a failure of `which` means now: when to restart it, or that the tree is dead.
    pub fn on_child_failed(&mut self, which: Child) -> Verdict {
        let now = self.epoch.elapsed().as_millis() as u64;
        self.trackers.entry(which).or_default().on_failure(now)
    }

    /// A respawn succeeded: the consecutive count starts over (the 60 s window does not).
    pub fn on_child_started(&mut self, which: Child) {
        if let Some(t) = self.trackers.get_mut(&which) {
            t.on_success();
        }
    }
}

impl RootSupervisor {
    async fn spawn_child(&self, myself: &ActorRef<RootMsg>, which: Child, state: &mut RootState) -> Result<(), ActorProcessingErr> {
        if !state.children.is_empty() && state.args.ctx.faults.fail_respawn() {
            return Err(ActorProcessingErr::from("injected respawn failure"));
        }
        if let Some(id) = start_child(which, &state.args, myself.get_cell()).await? {
            state.children.retain(|(_, c)| *c != which);
            state.children.push((id, which));
        }
        Ok(())
    }
}

impl RootSupervisor {
    /// A child is gone: schedule its restart under the backoff, or give the tree up.
    fn child_down(&self, myself: &ActorRef<RootMsg>, which: Child, error: &str, state: &mut RootState) {
        let handles = state.args.ctx.handles.clone();
        handles.mark_down(which.name(), error);
        match state.on_child_failed(which) {
            Verdict::RestartAfter(delay) => {
                tracing::error!(child = which.name(), error = %error, delay_ms = delay.as_millis() as u64, "actor failed; restarting it");
                myself.send_after(delay, move || RootMsg::Respawn(which));
            }
            Verdict::Park(why) => {
                let reason = format!("{} is down ({why}): {error}", which.name());
                tracing::error!(child = which.name(), reason = %reason, "giving up on the actor tree; readiness answers 503");
                handles.mark_dead(&reason);
            }
        }
    }

    async fn respawn(&self, myself: &ActorRef<RootMsg>, which: Child, state: &mut RootState) {
        if state.stopping || state.children.iter().any(|(_, c)| *c == which) {
            return;
        }
        match self.spawn_child(myself, which, state).await {
            Ok(()) => {
                state.child_restarts += 1;
                let handles = &state.args.ctx.handles;
                handles.child_restarts.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                handles.mark_up(which.name());
                state.on_child_started(which);
                tracing::info!(child = which.name(), "actor restarted");
            }
            Err(e) => self.child_down(myself, which, &format!("restart failed: {e}"), state),
        }
    }
}

impl Actor for RootSupervisor {
    type Msg = RootMsg;
    type State = RootState;
    type Arguments = RootArgs;

    async fn pre_start(&self, myself: ActorRef<RootMsg>, args: RootArgs) -> Result<RootState, ActorProcessingErr> {
        let mut state = RootState {
            args,
            children: Vec::new(),
            child_restarts: 0,
            trackers: Default::default(),
            epoch: tokio::time::Instant::now(),
            stopping: false,
        };
        for &which in Child::ALL {
            self.spawn_child(&myself, which, &mut state).await?;
        }
        Ok(state)
    }

    async fn handle(&self, myself: ActorRef<RootMsg>, msg: RootMsg, state: &mut RootState) -> Result<(), ActorProcessingErr> {
        match msg {
            RootMsg::Respawn(which) => self.respawn(&myself, which, state).await,
            RootMsg::Reconfigure(setup) => {
                state.args.observer = (*setup).clone().keeping_calls_of(&state.args.observer);
                if let Some(p) = state.args.ctx.handles.provider() {
                    let _ = p.cast(ProviderMsg::Reconfigure(setup));
                }
            }
        }
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        myself: ActorRef<RootMsg>,
        evt: SupervisionEvent,
        state: &mut RootState,
    ) -> Result<(), ActorProcessingErr> {
        let (cell, error) = match &evt {
            SupervisionEvent::ActorFailed(cell, error) => (cell, error.to_string()),
            SupervisionEvent::ActorTerminated(cell, _, reason) if !state.stopping => {
                (cell, format!("stopped: {}", reason.as_deref().unwrap_or("no reason")))
            }
            _ => return Ok(()),
        };
        let which = state.children.iter().find(|(id, _)| *id == cell.get_id()).map(|(_, c)| *c);
        if let Some(which) = which {
            state.children.retain(|(_, c)| *c != which);
            self.child_down(&myself, which, &error, state);
        }
        Ok(())
    }

    async fn post_stop(&self, _myself: ActorRef<RootMsg>, state: &mut RootState) -> Result<(), ActorProcessingErr> {
        state.stopping = true;
        state.args.ctx.handles.clear_children();
        Ok(())
    }
}
