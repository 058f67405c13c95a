//! TeamSync — pushes this machine's shared memories to the team's PostgreSQL server and pulls the
//! others' (issue 40, `docs/spec/team.md`).
//!
//! Owns the server connection and counters in memory; what was pushed, pulled and forgotten is in
//! SQLite behind the store seam (`team_*`), so a restart resumes exactly where the last committed
//! step ended. Each pass (push, tombstones, pull) runs on a spawned task and reports `PassDone`,
//! so `Status` answers at once and hooks, ingest and search never wait for the server.
//! Supervised by RootSupervisor. Failure policy: an unreachable or failing server backs off from
//! the sync interval doubling to 5 min, with the error in the status; a server whose schema is
//! newer than this memd knows is refused (nothing pushed or pulled) until memd is upgraded; a
//! panic restarts the actor.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::time::Instant;

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use serde::{Deserialize, Serialize};
use tokio::sync::Mutex;
use tokio_postgres::Client;

use crate::backend::Storage;
use crate::clock::{Clock, iso};
use crate::config::TeamSettings;
use crate::pipeline::redact::Redactor;
use crate::team::TeamError;
use crate::team::server::{self, Changed};

pub struct TeamSync;

pub struct TeamSyncArgs {
    pub storage: Arc<dyn Storage>,
    pub settings: TeamSettings,
    pub redactor: Arc<Redactor>,
    pub clock: Clock,
}

pub enum TeamSyncMsg {
    /// Periodic: start a pass unless one runs or a backoff holds.
    Tick,
    /// Run a pass now and answer when it is done (`memd team sync --now`).
    SyncNow(RpcReplyPort<Result<PassReport, TeamError>>),
    /// A pass finished (sent by its task).
    PassDone(Result<PassReport, TeamError>),
    /// The `team` part of `GET /api/status` and `GET /api/team`.
    Status(RpcReplyPort<TeamStatus>),
}

/// What one pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct PassReport {
    pub pushed: usize,
    pub pulled: usize,
    pub removed: usize,
    pub tombstones_sent: usize,
    pub tombstones_refused: usize,
    /// Local edits of pushed rows sent.
    pub edits_sent: usize,
    /// Pulled rows their origin had edited.
    pub edited: usize,
    /// Server rows this worker has not pulled yet (after the pass).
    pub lag: i64,
    pub schema_version: i64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct TeamStatus {
    pub enabled: bool,
    /// `ok`, `degraded` (the last pass failed) or `starting`.
    pub state: String,
    pub origin: String,
    pub projects: Vec<String>,
    pub last_push_at: Option<String>,
    pub last_pull_at: Option<String>,
    pub last_error: Option<String>,
    pub lag: i64,
    pub pushed: u64,
    pub pulled: u64,
    pub tombstones_refused: u64,
    pub schema_version: i64,
    /// Observations of the shared projects waiting for their push (filled in by the status).
    pub queue: i64,
}

const MAX_BACKOFF: Duration = Duration::from_secs(300);
const PUSH_PAGE: usize = 200;
const PULL_PAGE: i64 = 50;

pub struct TeamSyncState {
    args: Arc<TeamSyncArgs>,
    client: Arc<Mutex<Option<Client>>>,
    install: Arc<OnceLock<String>>,
    running: bool,
    /// Asked while a pass ran: answered by the next one.
    waiting_next: Vec<RpcReplyPort<Result<PassReport, TeamError>>>,
    waiting: Vec<RpcReplyPort<Result<PassReport, TeamError>>>,
    failures: u32,
    retry_at: Option<Instant>,
    status: TeamStatus,
}

impl TeamSyncState {
    fn new(args: TeamSyncArgs) -> Self {
        let status = TeamStatus {
            enabled: true,
            state: "starting".into(),
            origin: args.settings.origin.clone(),
            projects: args.settings.projects.clone(),
            ..Default::default()
        };
        Self {
            args: Arc::new(args),
            client: Arc::new(Mutex::new(None)),
            install: Arc::new(OnceLock::new()),
            running: false,
            waiting_next: Vec::new(),
            waiting: Vec::new(),
            failures: 0,
            retry_at: None,
            status,
        }
    }

    fn start_pass(&mut self, myself: &ActorRef<TeamSyncMsg>, forced: bool) {
        if self.running || (!forced && self.retry_at.is_some_and(|t| Instant::now() < t)) {
            return;
        }
        self.running = true;
        self.waiting.append(&mut self.waiting_next);
        let (args, client, me) = (self.args.clone(), self.client.clone(), myself.clone());
        let install = self.install.clone();
        tokio::spawn(async move {
            let mut slot = client.lock().await;
            let r = pass(&args, &mut slot, &install).await;
            if r.is_err() {
                *slot = None;
            }
            drop(slot);
            let _ = me.cast(TeamSyncMsg::PassDone(r));
        });
    }

    fn pass_done(&mut self, myself: &ActorRef<TeamSyncMsg>, r: Result<PassReport, TeamError>) {
        self.running = false;
        let now = self.args.clock.now();
        match &r {
            Ok(p) => {
                (self.failures, self.retry_at, self.status.last_error) = (0, None, None);
                self.status.state = "ok".into();
                self.status.last_push_at = Some(iso(now));
                self.status.last_pull_at = Some(iso(now));
                self.status.lag = p.lag;
                self.status.pushed += p.pushed as u64;
                self.status.pulled += p.pulled as u64;
                self.status.tombstones_refused += p.tombstones_refused as u64;
                self.status.schema_version = p.schema_version;
            }
            Err(e) => {
                let first = Duration::from_millis(self.args.settings.sync_ms);
                let backoff = super::backoff::Backoff::doubling(first, MAX_BACKOFF).delay(self.failures);
                self.failures += 1;
                self.retry_at = Some(Instant::now() + backoff);
                self.status.state = "degraded".into();
                self.status.last_error = Some(e.to_string());
                tracing::warn!(error = %e, retry_in_ms = backoff.as_millis() as u64, "team sync failed; backing off");
            }
        }
        for reply in self.waiting.drain(..) {
            let _ = reply.send(r.clone());
        }
        if !self.waiting_next.is_empty() {
            self.start_pass(myself, true);
        }
    }
}

/// One pass: connect if needed (checking the schema), push, send tombstones, pull to the head.
/// `known_install`: this data directory's install id once read (later passes need no write to
/// start, so a busy local writer never holds a push back).
async fn pass(args: &TeamSyncArgs, slot: &mut Option<Client>, known_install: &OnceLock<String>) -> Result<PassReport, TeamError> {
    let s = &args.settings;
    let mut report = PassReport::default();
    if slot.as_ref().is_none_or(Client::is_closed) {
        *slot = Some(server::connect(s.url.expose(), s.ca_file.as_deref()).await?);
    }
    let client = slot.as_mut().ok_or_else(|| TeamError::Unreachable("no connection".into()))?;
    // Every pass: a failure drops the connection (the caller), a newer schema stops the pass.
    report.schema_version = server::check_schema(client).await?;
    let store_err = |e: crate::store::StoreError| TeamError::Config(format!("local store: {e}"));
    let read_err = |e: crate::store::StoreError| TeamError::Config(format!("local store: {e}"));
    let install = match known_install.get() {
        Some(i) => i.clone(),
        None => {
            let (i, _) = args.storage.team_pull_state().await.map_err(store_err)?;
            known_install.get_or_init(|| i).clone()
        }
    };
    // The origin and install are this role's own on the server (issue 51); registered once.
    server::register(client, &s.origin, &install).await?;
    loop {
        let rows = args
            .storage
            .team_outgoing(s.projects.clone(), args.redactor.clone(), install.clone(), PUSH_PAGE)
            .await
            .map_err(read_err)?;
        if rows.is_empty() {
            break;
        }
        report.pushed += server::push(client, &s.origin, &rows).await?;
        let marks = rows.iter().map(|r| (r.gid.clone(), r.local)).collect();
        args.storage
            .team_mark_pushed(marks, s.origin.clone(), args.clock.now())
            .await
            .map_err(store_err)?;
    }
    for e in args
        .storage
        .team_edits_due(args.redactor.clone(), PUSH_PAGE)
        .await
        .map_err(read_err)?
    {
        // Refused only when the row is gone on the server (forgotten meanwhile): nothing to send.
        let sent = server::edit(client, &e.gid, &e.body, &e.content_hash).await? == Changed::Done;
        report.edits_sent += usize::from(sent);
        args.storage.team_edit_sent(e.gid, e.count).await.map_err(store_err)?;
    }
    for gid in args.storage.team_tombstones_due(PUSH_PAGE).await.map_err(store_err)? {
        let refused = server::tombstone(client, &gid).await? == Changed::Refused;
        if refused {
            tracing::info!(gid = %gid, "the team server refused to forget another member's row");
        }
        report.tombstones_refused += usize::from(refused);
        report.tombstones_sent += usize::from(!refused);
        args.storage.team_tombstone_done(gid, refused).await.map_err(store_err)?;
    }
    loop {
        let (install, cursor) = args.storage.team_pull_state().await.map_err(store_err)?;
        let rows: Vec<_> = server::pull(client, cursor, PULL_PAGE, &s.projects)
            .await?
            .into_iter()
            .map(|r| r.redacted(&args.redactor))
            .collect();
        if rows.is_empty() {
            report.lag = server::head(client).await? - cursor;
            break;
        }
        let applied = args
            .storage
            .team_apply_pulled(rows, install, s.projects.clone(), args.clock.now())
            .await
            .map_err(store_err)?;
        report.pulled += applied.added;
        report.removed += applied.removed;
        report.edited += applied.edited;
    }
    Ok(report)
}

impl Actor for TeamSync {
    type Msg = TeamSyncMsg;
    type State = TeamSyncState;
    type Arguments = TeamSyncArgs;

    async fn pre_start(&self, myself: ActorRef<TeamSyncMsg>, args: TeamSyncArgs) -> Result<TeamSyncState, ActorProcessingErr> {
        myself.send_interval(Duration::from_millis(args.settings.sync_ms), || TeamSyncMsg::Tick);
        let _ = myself.cast(TeamSyncMsg::Tick);
        Ok(TeamSyncState::new(args))
    }

    async fn handle(&self, myself: ActorRef<TeamSyncMsg>, msg: TeamSyncMsg, state: &mut TeamSyncState) -> Result<(), ActorProcessingErr> {
        match msg {
            TeamSyncMsg::Tick => state.start_pass(&myself, false),
            TeamSyncMsg::SyncNow(reply) => {
                state.waiting_next.push(reply);
                state.start_pass(&myself, true);
            }
            TeamSyncMsg::PassDone(r) => state.pass_done(&myself, r),
            TeamSyncMsg::Status(reply) => {
                let _ = reply.send(state.status.clone());
            }
        }
        Ok(())
    }
}
