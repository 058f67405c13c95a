//! The provider's decisions without a runtime: routing, the defer limit, the breakers as calls
//! settle, the budget and the day's counters.

use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::actors::breaker::{FAILURE_OPEN_MS, FAILURES_TO_OPEN};
use crate::backend::sqlite::SqliteBackend;
use crate::config::Secret;
use crate::providers::anthropic::Anthropic;
use crate::store::{Store, StoreOptions};

const NOW: i64 = 1_760_000_000_000;
const DAY: i64 = 86_400_000;

/// A provider state over a real (temporary) store; `llm`: an Anthropic backend (never called here)
/// instead of the extractive observer.
fn state(llm: bool, budget: u64, tokens: i64) -> (ProviderState, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("memd.db"), &StoreOptions::default(), NOW).unwrap();
    let mut setup = ObserverSetup {
        budget,
        ..Default::default()
    };
    if llm {
        let key = Secret::new("sk-ant-test").unwrap();
        let api = Anthropic::new("http://127.0.0.1:9", key, "claude-haiku-4-5".into(), Duration::from_secs(5));
        setup.backend = Backend::Anthropic(api);
    }
    let args = ProviderArgs {
        setup,
        privacy: Arc::new(Privacy::default()),
        storage: Arc::new(SqliteBackend::new(store, None)),
        handles: Arc::new(Handles::default()),
        clock: Clock::manual(NOW),
    };
    (ProviderState::new(args, tokens), dir)
}

fn transient() -> Outcome {
    Outcome::Transient("503".into())
}

#[test]
fn without_a_provider_every_batch_goes_to_the_extractive_observer() {
    let (mut s, _dir) = state(false, 0, 0);
    assert_eq!(s.route(NOW, NOW), Route::Extractive("no provider configured"));
    assert!(s.status().using_fallback);
}

#[test]
fn a_spent_budget_routes_to_the_extractive_observer_until_the_next_day() {
    let (mut s, _dir) = state(true, 1_000, 1_000);
    assert_eq!(s.route(NOW, NOW), Route::Extractive("daily token budget spent"));
    assert_eq!(s.status().budget_left, Some(0));
    let tomorrow = NOW + 2 * DAY;
    assert!(matches!(s.route(tomorrow, tomorrow), Route::Call(_)));
    assert_eq!(s.status().budget_left, Some(1_000), "a new day starts with the whole budget");
}

#[test]
fn each_call_gets_a_new_id() {
    let (mut s, _dir) = state(true, 0, 0);
    let Route::Call(a) = s.route(NOW, NOW) else { panic!("a call") };
    let Route::Call(b) = s.route(NOW, NOW) else { panic!("a call") };
    assert!(b > a);
    assert!(s.next_call_id() > b);
}

#[test]
fn failures_open_the_breaker_batches_wait_for_its_probe_and_never_past_the_defer_limit() {
    let (mut s, _dir) = state(true, 0, 0);
    for _ in 0..FAILURES_TO_OPEN {
        let Route::Call(id) = s.route(NOW, NOW) else {
            panic!("closed breaker: a call")
        };
        s.settle(id, &transient(), 40, 0, NOW);
    }
    // Open: a fresh batch waits for the probe time.
    assert_eq!(
        s.route(NOW, NOW),
        Route::Defer {
            retry_at: NOW + FAILURE_OPEN_MS
        }
    );
    // A batch near its limit waits only until the limit.
    let limit_in = 5_000;
    let oldest = NOW - s.setup.max_defer_ms as i64 + limit_in;
    assert_eq!(s.route(NOW, oldest), Route::Defer { retry_at: NOW + limit_in });
    // Past its limit it goes to the extractive observer at once.
    let too_old = NOW - s.setup.max_defer_ms as i64;
    assert_eq!(s.route(NOW, too_old), Route::Extractive("deferred as long as allowed"));
    // After the open period one probe goes out; its success closes the breaker.
    let later = NOW + FAILURE_OPEN_MS;
    let Route::Call(probe) = s.route(later, later) else {
        panic!("the probe")
    };
    s.settle(probe, &Outcome::Success, 30, 10, later);
    assert!(matches!(s.route(later, later), Route::Call(_)));
}

#[test]
fn refused_credentials_send_every_batch_to_the_extractive_observer() {
    let (mut s, _dir) = state(true, 0, 0);
    let Route::Call(id) = s.route(NOW, NOW) else { panic!("a call") };
    s.settle(id, &Outcome::Auth("401".into()), 20, 0, NOW);
    assert_eq!(s.route(NOW + 1, NOW + 1), Route::Extractive("auth breaker open"));
    assert!(s.status().using_fallback);
}

#[test]
fn defer_to_caps_the_wait_at_the_limit_of_the_oldest_row() {
    let (s, _dir) = state(true, 0, 0);
    let max = s.setup.max_defer_ms as i64;
    assert_eq!(s.defer_to(NOW, NOW, NOW + 10), Some(NOW + 10));
    assert_eq!(s.defer_to(NOW, NOW, NOW + 2 * max), Some(NOW + max));
    assert_eq!(s.defer_to(NOW + max, NOW, NOW + max + 1), None);
}

#[test]
fn status_counts_the_day_and_starts_over_the_next() {
    let (mut s, _dir) = state(true, 10_000, 0);
    for (i, latency) in [10, 20, 30, 40].into_iter().enumerate() {
        let outcome = if i == 3 { transient() } else { Outcome::Success };
        let id = s.next_call_id();
        s.settle(id, &outcome, latency, 100, NOW);
    }
    let st = s.status();
    assert_eq!((st.calls_today, st.failures_today, st.tokens_today), (4, 1, 400));
    assert_eq!((st.latency_ms.p50, st.latency_ms.p95), (30, 40));
    assert_eq!(st.latency_ms.recent, vec![10, 20, 30, 40]);
    assert_eq!(st.budget_left, Some(9_600));
    assert_eq!(st.name, "anthropic");
    s.roll_day(NOW + 2 * DAY);
    let st = s.status();
    assert_eq!((st.calls_today, st.failures_today, st.tokens_today), (0, 0, 0));
}

#[test]
fn the_status_keeps_only_the_last_hundred_latencies() {
    let (mut s, _dir) = state(true, 0, 0);
    for latency in 0..150 {
        s.settle(s.next_call, &Outcome::Success, latency, 0, NOW);
    }
    let recent = s.status().latency_ms.recent;
    assert_eq!(recent.len(), 100);
    assert_eq!(recent.first(), Some(&50));
}

#[test]
fn every_call_error_maps_to_its_breaker_outcome() {
    let quota = CallError::Quota {
        retry_after_ms: Some(7),
        reason: "429".into(),
    };
    assert_eq!(
        outcome_of(&quota),
        Outcome::Quota {
            retry_after_ms: Some(7),
            reason: "429".into()
        }
    );
    assert_eq!(outcome_of(&CallError::Auth("401".into())), Outcome::Auth("401".into()));
    assert_eq!(outcome_of(&CallError::Overflow("long".into())), Outcome::Overflow("long".into()));
    assert_eq!(outcome_of(&CallError::Transient("503".into())), transient());
}
