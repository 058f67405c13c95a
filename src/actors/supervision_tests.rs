//! Supervision behaviour of the real actor tree, in-process: the worker is built by the same
//! builder `memd serve` uses, with faults injected through it ([`Faults`]), a clock that follows
//! paused tokio time, and no HTTP listener.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::faults::Faults;
use super::registry::SessionState;
use super::session::SessionContext;
use super::session_manager::ManagerMsg;
use crate::clock::Clock;
use crate::config::{EmbeddingsMode, RawSettings, Settings};
use crate::data_dir::DataDir;
use crate::store::sessions::SessionKey;
use crate::store::tool_events::{ToolEventOutcome, sample_event};
use crate::worker::WorkerState;
use crate::worker::builder::WorkerBuilder;
use crate::worker::running::Running;

pub(super) struct Tree {
    pub _dir: tempfile::TempDir,
    pub ctx: Arc<SessionContext>,
    /// The embedded file under the tree, for the tests' own SQL.
    pub store: crate::store::Store,
    pub faults: Arc<Faults>,
    /// The worker the tree belongs to (its services are installed: status and readiness read it).
    pub worker: Arc<WorkerState>,
    pub _running: Running,
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

/// Settings of a test tree: small batches, a short debounce, no vectors, no group-commit wait.
fn settings(dir: &std::path::Path, max_attempts: u32, watch_root: Option<std::path::PathBuf>) -> Settings {
    let mut s = Settings::resolve(dir.to_path_buf(), &RawSettings::default(), None);
    (s.batch_max_events, s.batch_max_chars, s.batch_debounce_ms, s.batch_max_wait_ms) = (20, 40_000, 10, 1_000);
    (s.db_readers, s.store_queue_max, s.group_commit_ms) = (2, 1000, 0);
    (s.reaper_interval_ms, s.session_idle_ms) = (3_600_000, 600_000);
    s.observer.max_attempts = max_attempts;
    // Paused time races ahead while the runtime idles: a scheduled consolidation pass would merge
    // the sessions' look-alike observations (and their sources) in the middle of a test.
    s.retention.consolidate_interval_hours = 0;
    s.vectors.mode = EmbeddingsMode::Off;
    s.vectors.chroma = None;
    s.watch.enabled = watch_root.is_some();
    s.watch.roots = watch_root.into_iter().collect();
    (s.watch.interval_ms, s.watch.idle_ms) = (50, 200);
    s
}

async fn build(
    observer: super::provider::ObserverSetup,
    max_attempts: u32,
    observe_deadline: Duration,
    watch_root: Option<std::path::PathBuf>,
) -> Tree {
    let dir = tempfile::tempdir().unwrap();
    let faults = Arc::new(Faults::default());
    let worker = Arc::new(WorkerState::new("t".into(), 0));
    let built = WorkerBuilder::new(
        settings(dir.path(), max_attempts, watch_root),
        DataDir::new(dir.path().to_path_buf()),
    )
    .clock(Clock::following_tokio())
    .faults(faults.clone())
    .observer(observer)
    .observe_deadline(observe_deadline)
    .build(&worker)
    .await
    .unwrap();
    let (ctx, store) = (built.ctx.clone(), built.store.clone());
    let running = built.start(worker.clone()).await.unwrap();
    Tree {
        _dir: dir,
        ctx,
        store,
        faults,
        worker,
        _running: running,
    }
}

pub(super) async fn event(ctx: &SessionContext, session: &str, n: usize) {
    let mut ev = sample_event(session, Some(&format!("{session}-{n}")));
    // Each event its own command: identical calls split over batches would make identical
    // observations, stored once, and a session's later calls would look unprocessed.
    ev.tool_input = format!(r#"{{"command":"cargo test case_{n}"}}"#);
    ev.input_chars = ev.tool_input.len() as i64;
    // Stamped now, not in 1970: paused time can race days ahead, and a scheduled retention pass
    // would then delete the session's processed raw rows (30-day rule) in the middle of a test.
    (ev.occurred_at, ev.now) = (ctx.clock.now(), ctx.clock.now());
    let out = ctx.storage.ingest_tool_event(ev).await.unwrap();
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
pub(super) async fn observed(t: &Tree, session: &str) -> i64 {
    let session = session.to_string();
    let sql = "SELECT count(*) FROM observation_sources o JOIN tool_uses t ON t.id = o.tool_use_row_id WHERE t.content_session_id = ?1";
    t.store.read(move |c| Ok(c.query_row(sql, [session], |r| r.get(0))?)).await.unwrap()
}

pub(super) async fn state_of(ctx: &SessionContext, session: &str) -> Option<(SessionState, u32)> {
    let key = SessionKey::new("claude", session);
    ctx.registry.sessions.get(&key).map(|s| (s.state, s.consecutive_failures))
}

async fn status_doc(t: &Tree) -> serde_json::Value {
    let svc = t.worker.services().unwrap();
    serde_json::to_value(crate::status::document(&t.worker, svc).await).unwrap()
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
    t.faults.session_failures.insert(SessionKey::new("claude", "bad"), 4);
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
    let pending: i64 = t
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
    let status: String = t
        .store
        .read(|c| Ok(c.query_row("SELECT status FROM sdk_sessions WHERE content_session_id = 'bad'", [], |r| r.get(0))?))
        .await
        .unwrap();
    assert_eq!(status, "failed");
    let ok = until(async || observed(&t, "good").await == 4).await;
    let rows: Vec<(i64, String, i64)> = t
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
        observed(&t, "good").await
    );
    assert_eq!(observed(&t, "bad").await, 0);
    // `memd status --json` prints this document: the parked session shows as failed.
    let doc = status_doc(&t).await;
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
    assert_eq!(observed(&t, "bad").await, 0);
}

#[tokio::test(start_paused = true)]
async fn a_session_recovers_after_fewer_failures_than_the_limit() {
    let t = tree().await;
    let ctx = &t.ctx;
    t.faults.session_failures.insert(SessionKey::new("claude", "flaky"), 2);
    event(ctx, "flaky", 0).await;
    assert!(until(async || observed(&t, "flaky").await == 1).await);
    assert!(until(async || matches!(state_of(ctx, "flaky").await, Some((SessionState::Idle, 0)))).await);
}
