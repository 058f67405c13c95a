//! Supervision behaviour of the real actor tree, in-process, driven through the fault-injection
//! seam (`SessionContext::faults`, compiled only for tests) with paused tokio time.

use std::sync::Arc;
use std::time::Duration;

use ractor::Actor;
use tokio::time::Instant;

use super::Handles;
use super::registry::{Registry, SessionState};
use super::root::{RootArgs, RootSupervisor};
use super::session::SessionContext;
use super::session_manager::ManagerMsg;
use crate::pipeline::privacy::Privacy;
use crate::store::pending::BatchLimits;
use crate::store::sessions::SessionKey;
use crate::store::tool_events::{ToolEventOutcome, ingest_tool_event, sample_event};
use crate::store::{Store, StoreOptions};

pub(super) struct Tree {
    pub _dir: tempfile::TempDir,
    pub ctx: Arc<SessionContext>,
    pub respawn_faults: Arc<std::sync::atomic::AtomicU32>,
}

async fn tree() -> Tree {
    tree_with(Default::default(), 3, Duration::from_secs(60)).await
}

/// The real tree over a temp store, with this observer, attempt budget and batch deadline.
pub(super) async fn tree_with(observer: super::provider::ObserverSetup, max_attempts: u32, observe_deadline: Duration) -> Tree {
    build(observer, max_attempts, observe_deadline, None).await
}

/// The real tree with a transcript watcher over `root` (50 ms passes, files idle after 200 ms).
pub(super) async fn tree_watching(root: &std::path::Path) -> Tree {
    build(Default::default(), 3, Duration::from_secs(60), Some(root.to_path_buf())).await
}

async fn build(
    observer: super::provider::ObserverSetup,
    max_attempts: u32,
    observe_deadline: Duration,
    watch_root: Option<std::path::PathBuf>,
) -> Tree {
    let dir = tempfile::tempdir().unwrap();
    let opts = StoreOptions {
        synchronous_full: false,
        readers: 2,
        queue_max: 1000,
        group_commit: Duration::ZERO,
        arrivals: Default::default(),
    };
    let store = Store::open(&dir.path().join("memd.db"), &opts, 0).unwrap();
    let ctx = Arc::new(SessionContext {
        store,
        handles: Arc::new(Handles::default()),
        registry: Arc::new(Registry::default()),
        limits: BatchLimits {
            max_events: 20,
            max_chars: 40_000,
        },
        debounce_ms: 10,
        max_wait_ms: 1_000,
        max_attempts,
        observe_deadline,
        faults: Default::default(),
        slow_stops: Default::default(),
    });
    let respawn_faults: Arc<std::sync::atomic::AtomicU32> = Default::default();
    let args = RootArgs {
        ctx: ctx.clone(),
        privacy: Arc::new(Privacy::default()),
        observer,
        data_dir: dir.path().to_path_buf(),
        reaper_interval: Duration::from_secs(3600),
        idle_ms: 600_000,
        stale_pid_replaced: false,
        children_reaped: 0,
        embed: None,
        chroma: None,
        watch: watch_root.map(|root| super::transcript_watcher::WatcherArgs {
            ingest: services(&ctx).ingest,
            roots: vec![root],
            state_path: dir.path().join("watch-state-worker.json"),
            interval: Duration::from_millis(50),
            idle: Duration::from_millis(200),
            busy: Default::default(),
        }),
        respawn_faults: respawn_faults.clone(),
    };
    Actor::spawn(None, RootSupervisor, args).await.unwrap();
    Tree {
        _dir: dir,
        ctx,
        respawn_faults,
    }
}

pub(super) async fn event(ctx: &SessionContext, session: &str, n: usize) {
    let ev = sample_event(session, Some(&format!("{session}-{n}")));
    let out = ctx.store.write(move |c| ingest_tool_event(c, &ev)).await.unwrap();
    let ToolEventOutcome::Queued { session_db_id, .. } = out else {
        panic!("not queued: {out:?}")
    };
    let key = SessionKey::new("claude", session);
    ctx.handles
        .manager()
        .unwrap()
        .cast(ManagerMsg::Notify { key, session_db_id })
        .unwrap();
}

/// Events of the session that were turned into observations.
pub(super) async fn observed(ctx: &SessionContext, session: &str) -> i64 {
    let session = session.to_string();
    let sql = "SELECT count(*) FROM observation_sources o JOIN tool_uses t ON t.id = o.tool_use_row_id WHERE t.content_session_id = ?1";
    ctx.store
        .read(move |c| Ok(c.query_row(sql, [session], |r| r.get(0))?))
        .await
        .unwrap()
}

pub(super) async fn state_of(ctx: &SessionContext, session: &str) -> Option<(SessionState, u32)> {
    let key = SessionKey::new("claude", session);
    ctx.registry.sessions.get(&key).map(|s| (s.state, s.consecutive_failures))
}

/// The worker's services over this tree (for the status room and the routes).
pub(super) fn services(ctx: &Arc<SessionContext>) -> crate::worker::Services {
    let dir = std::path::PathBuf::from("/nonexistent");
    let settings = crate::config::Settings::resolve(dir.clone(), &crate::config::RawSettings::default(), None);
    let privacy = Arc::new(Privacy::default());
    let pipeline = crate::ingest::Pipeline {
        privacy,
        excluded: crate::pipeline::glob::ExcludedProjects::new("", None),
        skip_tools: vec![],
        data_dir: dir,
        home: None,
        tool_use_max_chars: 1000,
        redactions: Default::default(),
    };
    let ingest = crate::ingest::IngestService::new(Arc::new(pipeline), ctx.store.clone(), ctx.registry.clone(), ctx.handles.clone());
    crate::worker::Services {
        store: ctx.store.clone(),
        handles: ctx.handles.clone(),
        registry: ctx.registry.clone(),
        ingest: Arc::new(ingest),
        settings: Arc::new(crate::config::live::Live::new(settings)),
        vectors: None,
        mode: Arc::new(crate::modes::load_mode("code", &[]).0),
    }
}

async fn status_doc(ctx: &Arc<SessionContext>) -> serde_json::Value {
    let svc = services(ctx);
    let worker = crate::worker::WorkerState::new("t".into(), 0);
    serde_json::to_value(crate::status::document(&worker, &svc).await).unwrap()
}

/// Polls in small virtual-time steps until `f` holds, bounded by 30 s of REAL time (virtual time
/// races ahead whenever the runtime idles while the writer thread works).
pub(super) async fn until<F: AsyncFnMut() -> bool>(mut f: F) -> bool {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while std::time::Instant::now() < deadline {
        if f().await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    false
}

#[tokio::test(start_paused = true)]
async fn failures_back_off_1_2_4_then_park_while_other_sessions_work() {
    let t = tree().await;
    let ctx = &t.ctx;
    ctx.faults.insert(SessionKey::new("claude", "bad"), 4);
    for n in 0..4 {
        event(ctx, "good", n).await;
    }
    let start = Instant::now();
    event(ctx, "bad", 0).await;

    // Virtual time can run ahead while the writer thread works, so individual backoff windows may
    // be skipped by the poller; what must hold is that all three delays (1 + 2 + 4 s) elapsed
    // before the session was parked, after exactly three restarts.
    assert!(
        until(async || matches!(state_of(ctx, "bad").await, Some((SessionState::Failed, 4)))).await,
        "parked after the 4th failure"
    );
    let parked_after = Instant::now() - start;
    assert!(
        parked_after >= Duration::from_secs(7),
        "parked after {parked_after:?}: the 1 s, 2 s and 4 s backoffs did not all elapse"
    );
    let restarts = ctx.registry.sessions.get(&SessionKey::new("claude", "bad")).map(|s| s.restarts);
    assert_eq!(restarts, Some(3));

    // The parked session keeps its rows; the other session kept working throughout.
    let pending: i64 = ctx
        .store
        .read(|c| {
            Ok(c.query_row(
                "SELECT count(*) FROM pending_messages p JOIN sdk_sessions s ON s.id = p.session_db_id WHERE s.content_session_id = 'bad'",
                [],
                |r| r.get(0),
            )?)
        })
        .await
        .unwrap();
    assert_eq!(pending, 1);
    let status: String = ctx
        .store
        .read(|c| Ok(c.query_row("SELECT status FROM sdk_sessions WHERE content_session_id = 'bad'", [], |r| r.get(0))?))
        .await
        .unwrap();
    assert_eq!(status, "failed");
    let ok = until(async || observed(ctx, "good").await == 4).await;
    let rows: Vec<(i64, String, i64)> = ctx
        .store
        .read(|c| {
            let mut st = c.prepare("SELECT p.id, p.status, p.next_attempt_epoch FROM pending_messages p JOIN sdk_sessions s ON s.id = p.session_db_id WHERE s.content_session_id = 'good'")?;
            Ok(st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?.collect::<Result<Vec<_>, _>>()?)
        })
        .await
        .unwrap();
    let reg = ctx
        .registry
        .sessions
        .get(&SessionKey::new("claude", "good"))
        .map(|s| format!("{:?}", *s));
    assert!(
        ok,
        "the healthy session was processed: observed {} rows {rows:?} registry {reg:?}",
        observed(ctx, "good").await
    );
    assert_eq!(observed(ctx, "bad").await, 0);
    // `memd status --json` prints this document: the parked session shows as failed.
    let doc = status_doc(ctx).await;
    let bad = doc["sessions"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["content_session_id"] == "bad")
        .cloned()
        .unwrap();
    assert_eq!(bad["state"], "failed");
    assert_eq!(bad["restarts"], 3);
    assert!(bad["last_error"].as_str().unwrap().contains("injected"));
    assert_eq!(doc["sessions"]["failed"], 1);
    // A new event for the parked session is kept, not processed, until `memd retry`.
    event(ctx, "bad", 1).await;
    tokio::time::sleep(Duration::from_secs(30)).await;
    assert_eq!(observed(ctx, "bad").await, 0);
}

#[tokio::test(start_paused = true)]
async fn a_session_recovers_after_fewer_failures_than_the_limit() {
    let t = tree().await;
    let ctx = &t.ctx;
    ctx.faults.insert(SessionKey::new("claude", "flaky"), 2);
    event(ctx, "flaky", 0).await;
    assert!(until(async || observed(ctx, "flaky").await == 1).await);
    assert!(until(async || matches!(state_of(ctx, "flaky").await, Some((SessionState::Idle, 0)))).await);
}
