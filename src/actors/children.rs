//! The root's children — the one list. Each line names a child, the slot in [`Handles`] that
//! reaches it, and the function that says how to start it from the root's arguments (None: not
//! started in this configuration). From this list come [`Child`], the [`Handles`] slots with
//! their getters and setters, the start order, and [`start_child`]; adding a supervised child is
//! one line here and its spawn function below.

use std::sync::RwLock;

use ractor::{Actor, ActorCell, ActorId, ActorProcessingErr, ActorRef};

use super::TreeHealth;
use super::chroma_sync::{ChromaSync, ChromaSyncArgs, ChromaSyncMsg};
use super::orphan_reaper::{OrphanReaper, ReaperArgs, ReaperMsg};
use super::provider::{ProviderActor, ProviderArgs, ProviderMsg};
use super::root::RootArgs;
use super::session_manager::{ManagerArgs, ManagerMsg, SessionManager};
use super::store::{StoreActor, StoreArgs, StoreMsg};
use super::team_sync::{TeamSync, TeamSyncArgs, TeamSyncMsg};
use super::transcript_watcher::{TranscriptWatcher, WatcherArgs, WatcherMsg};
use super::vector_sync::{VectorSync, VectorSyncArgs, VectorSyncMsg};

macro_rules! children {
    ($($child:ident => $name:literal, $slot:ident / $set:ident : $msg:ty = $spawn:ident;)*) => {
        /// A child of the root.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Child {
            $($child,)*
        }

        impl Child {
            /// Every child, in start order.
            pub const ALL: &[Child] = &[$(Child::$child,)*];

            pub fn name(self) -> &'static str {
                match self {
                    $(Child::$child => $name,)*
                }
            }
        }

        /// Current references to the long-lived actors (replaced when the root restarts one).
        #[derive(Default)]
        pub struct Handles {
            pub tree: RwLock<TreeHealth>,
            /// Children of the root restarted since start.
            pub child_restarts: std::sync::atomic::AtomicU64,
            $(pub $slot: RwLock<Option<ActorRef<$msg>>>,)*
        }

        impl Handles {
            $(
                pub fn $slot(&self) -> Option<ActorRef<$msg>> {
                    self.$slot.read().ok().and_then(|g| g.clone())
                }
                pub fn $set(&self, r: Option<ActorRef<$msg>>) {
                    if let Ok(mut g) = self.$slot.write() {
                        *g = r;
                    }
                }
            )*

            /// Forgets every child (the root stopped).
            pub fn clear_children(&self) {
                $(self.$set(None);)*
            }
        }

        /// Starts `which` linked to the root and publishes it in the handles; None when this
        /// configuration runs without it.
        pub async fn start_child(which: Child, a: &RootArgs, root: ActorCell) -> Result<Option<ActorId>, ActorProcessingErr> {
            match which {
                $(Child::$child => {
                    let Some((actor, args)) = $spawn(a) else {
                        return Ok(None);
                    };
                    let (r, _) = Actor::spawn_linked(None, actor, args, root).await?;
                    a.ctx.handles.$set(Some(r.clone()));
                    Ok(Some(r.get_id()))
                })*
            }
        }
    };
}

// Provider before manager: rebuilt sessions start claiming right away.
children! {
    Store => "StoreActor", store / set_store: StoreMsg = store;
    Provider => "ProviderActor", provider / set_provider: ProviderMsg = provider;
    Manager => "SessionManager", manager / set_manager: ManagerMsg = manager;
    Reaper => "OrphanReaper", reaper / set_reaper: ReaperMsg = reaper;
    VectorSync => "VectorSync", vector_sync / set_vector_sync: VectorSyncMsg = vector_sync;
    ChromaSync => "ChromaSync", chroma_sync / set_chroma_sync: ChromaSyncMsg = chroma_sync;
    Watcher => "TranscriptWatcher", watcher / set_watcher: WatcherMsg = watcher;
    Team => "TeamSync", team_sync / set_team_sync: TeamSyncMsg = team_sync;
}

fn store(a: &RootArgs) -> Option<(StoreActor, StoreArgs)> {
    let args = StoreArgs {
        store: a.store.clone(),
        storage: a.ctx.storage.clone(),
        clock: a.ctx.clock.clone(),
    };
    Some((StoreActor, args))
}

fn provider(a: &RootArgs) -> Option<(ProviderActor, ProviderArgs)> {
    let args = ProviderArgs {
        setup: a.observer.clone(),
        privacy: a.privacy.clone(),
        storage: a.ctx.storage.clone(),
        handles: a.ctx.handles.clone(),
        clock: a.ctx.clock.clone(),
    };
    Some((ProviderActor, args))
}

fn manager(a: &RootArgs) -> Option<(SessionManager, ManagerArgs)> {
    Some((SessionManager, ManagerArgs { ctx: a.ctx.clone() }))
}

fn reaper(a: &RootArgs) -> Option<(OrphanReaper, ReaperArgs)> {
    let args = ReaperArgs {
        handles: a.ctx.handles.clone(),
        store: a.store.clone(),
        data_dir: a.data_dir.clone(),
        interval: a.reaper_interval,
        idle_ms: a.idle_ms,
        stale_pid_replaced: a.stale_pid_replaced,
        children_reaped: a.children_reaped,
        clock: a.ctx.clock.clone(),
    };
    Some((OrphanReaper, args))
}

/// A read-only database (written by a newer memd) gets no vector writes.
fn vector_sync(a: &RootArgs) -> Option<(VectorSync, VectorSyncArgs)> {
    let embed = a.embed.clone().filter(|_| !a.store.read_only)?;
    let args = VectorSyncArgs {
        store: a.store.clone(),
        embed,
        tick: std::time::Duration::from_millis(500),
    };
    Some((VectorSync, args))
}

fn chroma_sync(a: &RootArgs) -> Option<(ChromaSync, ChromaSyncArgs)> {
    let (client, retry) = a.chroma.clone().filter(|_| !a.store.read_only)?;
    let args = ChromaSyncArgs {
        store: a.store.clone(),
        client,
        tick: std::time::Duration::from_millis(1000),
        retry,
        clock: a.ctx.clock.clone(),
    };
    Some((ChromaSync, args))
}

fn watcher(a: &RootArgs) -> Option<(TranscriptWatcher, WatcherArgs)> {
    let args = a.watch.clone().filter(|_| !a.ctx.storage.read_only())?;
    Some((TranscriptWatcher, args))
}

/// A read-only database pushes and pulls nothing.
fn team_sync(a: &RootArgs) -> Option<(TeamSync, TeamSyncArgs)> {
    let settings = a.team.clone().filter(|_| !a.ctx.storage.read_only())?;
    let args = TeamSyncArgs {
        storage: a.ctx.storage.clone(),
        settings,
        redactor: a.privacy.redactor(),
        clock: a.ctx.clock.clone(),
    };
    Some((TeamSync, args))
}
