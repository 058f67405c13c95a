//! Faults of the tree itself (issue 14), on the real actors with paused tokio time: a provider
//! that restarts while a call is open, a respawn that keeps failing, `StopAll`, a late `Healthy`, a
//! transcript watcher that fails and is restarted.

use std::sync::atomic::Ordering;
use std::time::Duration;

use super::provider::ObserverSetup;
use super::registry::SessionState;
use super::session_manager::ManagerMsg;
use super::supervision_tests::{event, observed, state_of, tree_watching, tree_with, until};
use crate::config::Secret;
use crate::providers::Backend;
use crate::providers::anthropic::Anthropic;

/// An Anthropic backend whose server accepts connections and never answers.
fn hung_backend() -> (Backend, std::net::TcpListener) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let key = Secret::new("sk-ant-test").unwrap();
    (
        Backend::Anthropic(Anthropic::new(&url, key, "claude-haiku-4-5".into(), Duration::from_secs(600))),
        listener,
    )
}

#[tokio::test(start_paused = true)]
async fn a_provider_restart_during_a_call_still_processes_the_batch() {
    let (backend, _hung) = hung_backend();
    let observer = ObserverSetup {
        backend,
        ..Default::default()
    };
    // One attempt, then the extractive observer; a 2 s deadline ends the hung call.
    let t = tree_with(observer, 1, Duration::from_secs(2)).await;
    let ctx = &t.ctx;
    event(ctx, "s", 0).await;
    assert!(
        until(async || ctx.registry.sessions.iter().any(|s| s.in_flight > 0)).await,
        "the batch went to the provider"
    );
    ctx.handles.provider().expect("provider").stop(Some("injected".into()));
    assert!(
        until(async || observed(&t, "s").await == 1).await,
        "the batch was processed after the restart"
    );
    assert!(
        ctx.handles.child_restarts.load(Ordering::Relaxed) >= 1,
        "the provider was restarted"
    );
    let pending: i64 = t
        .store
        .read(|c| Ok(c.query_row("SELECT count(*) FROM pending_messages", [], |r| r.get(0))?))
        .await
        .unwrap();
    assert_eq!(pending, 0);
}

#[tokio::test(start_paused = true)]
async fn respawns_that_keep_failing_mark_the_tree_dead() {
    let t = tree_with(ObserverSetup::default(), 3, Duration::from_secs(60)).await;
    let h = t.ctx.handles.clone();
    t.faults.respawn_failures.store(100, Ordering::Relaxed);
    h.reaper().expect("reaper").stop(Some("injected".into()));
    assert!(until(async || h.tree().down.contains_key("OrphanReaper")).await);
    assert!(until(async || h.tree().dead.is_some()).await, "the root gave the child up");
    let dead = h.tree().dead.unwrap();
    assert!(dead.contains("OrphanReaper") && dead.contains("injected respawn failure"), "{dead}");
    // The rest of the tree keeps running; readiness says the tree is down, and why.
    assert!(h.manager().is_some() && h.provider().is_some() && h.store().is_some());
    let why = t.worker.unready_reason().expect("readiness answers 503");
    assert!(why.contains("OrphanReaper"), "{why}");
}

#[tokio::test(start_paused = true)]
async fn a_respawn_after_one_failure_brings_the_child_back() {
    let t = tree_with(ObserverSetup::default(), 3, Duration::from_secs(60)).await;
    let h = t.ctx.handles.clone();
    t.faults.respawn_failures.store(1, Ordering::Relaxed);
    h.reaper().expect("reaper").stop(Some("injected".into()));
    assert!(until(async || h.tree().down.is_empty() && h.reaper().is_some_and(|r| r.get_status() == ractor::ActorStatus::Running)).await);
    assert!(h.tree().dead.is_none());
}

#[tokio::test(start_paused = true)]
async fn stop_all_answers_after_the_sessions_are_gone() {
    let t = tree_with(ObserverSetup::default(), 3, Duration::from_secs(60)).await;
    let ctx = &t.ctx;
    for s in ["a", "b", "c"] {
        // Each actor takes a second to stop: StopAll must wait for it.
        t.faults.slow_stops.insert(crate::store::sessions::SessionKey::new("claude", s));
        event(ctx, s, 0).await;
    }
    let manager = ctx.handles.manager().unwrap();
    assert!(until(async || manager.get_children().len() == 3).await);
    // Idle first: a stop waits behind a handler that waits on the writer thread in real time,
    // while paused time leaps past StopAll's 5 s wait. A stored batch is not enough: the handler
    // that stored it is idle only once it has marked the session idle, its last step.
    for s in ["a", "b", "c"] {
        assert!(until(async || observed(&t, s).await == 1).await, "{s} observed");
        let idle = async || matches!(state_of(ctx, s).await, Some((SessionState::Idle, 0)));
        assert!(until(idle).await, "{s} idle");
    }
    let children = manager.get_children();
    ractor::call_t!(manager, ManagerMsg::StopAll, 30_000).expect("StopAll answers");
    for c in children {
        assert_eq!(
            c.get_status(),
            ractor::ActorStatus::Stopped,
            "StopAll answered before {:?} stopped",
            c.get_id()
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_late_healthy_does_not_revive_a_parked_session() {
    let t = tree_with(ObserverSetup::default(), 3, Duration::from_secs(60)).await;
    let ctx = &t.ctx;
    t.faults
        .session_failures
        .insert(crate::store::sessions::SessionKey::new("claude", "bad"), 10);
    event(ctx, "bad", 0).await;
    let key = crate::store::sessions::SessionKey::new("claude", "bad");
    let parked = async || {
        ctx.registry
            .sessions
            .get(&key)
            .is_some_and(|s| s.state == super::registry::SessionState::Failed)
    };
    assert!(until(parked).await);
    let manager = ctx.handles.manager().unwrap();
    manager.cast(ManagerMsg::Healthy(key.clone())).unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let s = ctx.registry.sessions.get(&key).map(|s| s.clone()).expect("still listed as failed");
    assert_eq!(s.state, super::registry::SessionState::Failed);
    assert!(s.last_error.is_some() && s.consecutive_failures > 0, "{s:?}");
}

async fn tool_uses(t: &super::supervision_tests::Tree) -> i64 {
    t.store
        .read(|c| Ok(c.query_row("SELECT count(*) FROM tool_uses", [], |r| r.get(0))?))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_transcript_watcher_is_restarted_and_stores_every_call() {
    let root = tempfile::tempdir().unwrap();
    let name = "DRMacIver__claude-reliability__hello-world-script.transcript.jsonl";
    let text = std::fs::read_to_string(format!("{}/tests/fixtures/transcripts/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // The first call and its result; the second call comes after the restart.
    let file = root.path().join(name);
    let t = tree_watching(root.path()).await;
    // Written after the watcher started (the exact time: the file system's clock is coarser),
    // so it is no history.
    std::fs::write(&file, lines[..4].join("\n") + "\n").unwrap();
    let f = std::fs::File::options().write(true).open(&file).unwrap();
    f.set_modified(std::time::SystemTime::now()).unwrap();
    let h = t.ctx.handles.clone();
    assert!(until(async || tool_uses(&t).await == 1).await, "the watcher stored the first call");
    h.watcher().expect("watcher").stop(Some("injected".into()));
    assert!(
        until(async || h.child_restarts.load(Ordering::Relaxed) >= 1 && h.watcher().is_some()).await,
        "the root restarted the watcher"
    );
    std::fs::write(&file, &text).unwrap();
    assert!(
        until(async || tool_uses(&t).await == 2).await,
        "the restarted watcher stored the second call"
    );
    let status = ractor::call_t!(h.watcher().unwrap(), super::transcript_watcher::WatcherMsg::Status, 2_000).unwrap();
    assert_eq!(status.files_tracked, 1, "{status:?}");
    assert!(h.tree().dead.is_none() && h.tree().down.is_empty(), "{:?}", h.tree());
}
