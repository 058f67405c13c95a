//! RootSupervisor — the top of the tree: StoreActor, ProviderActor, SessionManager, OrphanReaper,
//! VectorSync when vectors are on, ChromaSync when a Chroma server is configured.
//!
//! Owns the spawn arguments of each child so it can restart any of them. Failure policy: a failed
//! child is restarted at once (its durable state lives in SQLite: the manager rebuilds sessions
//! with pending rows); [`super::Handles`] is refreshed so ingress reaches the new instance. The root
//! itself never stops because a child died (ractor's default would), only on shutdown.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use ractor::{Actor, ActorProcessingErr, ActorRef, SupervisionEvent};

use super::Handles;
use super::chroma_sync::{ChromaSync, ChromaSyncArgs};
use super::orphan_reaper::{OrphanReaper, ReaperArgs};
use super::provider::{ObserverSetup, ProviderActor, ProviderArgs};
use super::session::SessionContext;
use super::session_manager::{ManagerArgs, SessionManager};
use super::store::{StoreActor, StoreArgs};
use super::vector_sync::{VectorSync, VectorSyncArgs};
use crate::pipeline::privacy::Privacy;

pub struct RootSupervisor;

pub struct RootArgs {
    pub ctx: Arc<SessionContext>,
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
}

pub enum RootMsg {}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Child {
    Store,
    Provider,
    Manager,
    Reaper,
    VectorSync,
    ChromaSync,
}

pub struct RootState {
    args: RootArgs,
    children: Vec<(ractor::ActorId, Child)>,
    pub child_restarts: u64,
}

impl RootSupervisor {
    async fn spawn_child(&self, myself: &ActorRef<RootMsg>, which: Child, state: &mut RootState) -> Result<(), ActorProcessingErr> {
        let a = &state.args;
        let handles: &Arc<Handles> = &a.ctx.handles;
        let cell = myself.get_cell();
        let id = match which {
            Child::Store => {
                let (r, _) = Actor::spawn_linked(
                    None,
                    StoreActor,
                    StoreArgs {
                        store: a.ctx.store.clone(),
                    },
                    cell,
                )
                .await?;
                handles.set_store(Some(r.clone()));
                r.get_id()
            }
            Child::Provider => {
                let args = ProviderArgs {
                    setup: a.observer.clone(),
                    privacy: a.privacy.clone(),
                    store: a.ctx.store.clone(),
                    handles: handles.clone(),
                };
                let (r, _) = Actor::spawn_linked(None, ProviderActor, args, cell).await?;
                handles.set_provider(Some(r.clone()));
                r.get_id()
            }
            Child::Manager => {
                let (r, _) = Actor::spawn_linked(None, SessionManager, ManagerArgs { ctx: a.ctx.clone() }, cell).await?;
                handles.set_manager(Some(r.clone()));
                r.get_id()
            }
            Child::Reaper => {
                let args = ReaperArgs {
                    handles: handles.clone(),
                    data_dir: a.data_dir.clone(),
                    interval: a.reaper_interval,
                    idle_ms: a.idle_ms,
                    stale_pid_replaced: a.stale_pid_replaced,
                    children_reaped: a.children_reaped,
                };
                let (r, _) = Actor::spawn_linked(None, OrphanReaper, args, cell).await?;
                handles.set_reaper(Some(r.clone()));
                r.get_id()
            }
            Child::VectorSync => {
                // A read-only database (written by a newer memd) gets no vector writes.
                let Some(embed) = a.embed.clone().filter(|_| !a.ctx.store.read_only) else {
                    return Ok(());
                };
                let args = VectorSyncArgs {
                    store: a.ctx.store.clone(),
                    embed,
                    tick: Duration::from_millis(500),
                };
                let (r, _) = Actor::spawn_linked(None, VectorSync, args, cell).await?;
                handles.set_vector_sync(Some(r.clone()));
                r.get_id()
            }
            Child::ChromaSync => {
                let Some((client, retry)) = a.chroma.clone().filter(|_| !a.ctx.store.read_only) else {
                    return Ok(());
                };
                let args = ChromaSyncArgs {
                    store: a.ctx.store.clone(),
                    client,
                    tick: Duration::from_millis(1000),
                    retry,
                };
                let (r, _) = Actor::spawn_linked(None, ChromaSync, args, cell).await?;
                handles.set_chroma_sync(Some(r.clone()));
                r.get_id()
            }
        };
        state.children.retain(|(_, c)| *c != which);
        state.children.push((id, which));
        Ok(())
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
        };
        // Provider before manager: rebuilt sessions start claiming right away.
        for which in [
            Child::Store,
            Child::Provider,
            Child::Manager,
            Child::Reaper,
            Child::VectorSync,
            Child::ChromaSync,
        ] {
            self.spawn_child(&myself, which, &mut state).await?;
        }
        Ok(state)
    }

    async fn handle(&self, _myself: ActorRef<RootMsg>, msg: RootMsg, _state: &mut RootState) -> Result<(), ActorProcessingErr> {
        match msg {}
    }

    async fn handle_supervisor_evt(
        &self,
        myself: ActorRef<RootMsg>,
        evt: SupervisionEvent,
        state: &mut RootState,
    ) -> Result<(), ActorProcessingErr> {
        if let SupervisionEvent::ActorFailed(cell, error) = &evt {
            let which = state.children.iter().find(|(id, _)| *id == cell.get_id()).map(|(_, c)| *c);
            if let Some(which) = which {
                state.child_restarts += 1;
                state
                    .args
                    .ctx
                    .handles
                    .child_restarts
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                tracing::error!(child = ?which, error = %error, "actor failed; restarting it");
                self.spawn_child(&myself, which, state).await?;
            }
        }
        Ok(())
    }

    async fn post_stop(&self, _myself: ActorRef<RootMsg>, state: &mut RootState) -> Result<(), ActorProcessingErr> {
        let h = &state.args.ctx.handles;
        h.set_manager(None);
        h.set_provider(None);
        h.set_reaper(None);
        h.set_vector_sync(None);
        h.set_chroma_sync(None);
        h.set_store(None);
        Ok(())
    }
}
