//! The SessionActor's state and its batching policy, kept apart from the actor
//! ([`super::session`]) so the policy is unit tested without a runtime: when to claim a batch
//! (debounce, max wait, a full batch), what is in flight, the retry backoff, and the backstop
//! timer of the batch in flight.

use std::time::Duration;

use crate::store::sessions::SessionKey;

/// Backoff before retrying a batch after its `attempts`-th failed provider call:
/// 5 s, 30 s, then 120 s, each ± 20 % jitter (docs/spec/pipeline.md §13).
pub fn retry_delay_ms(attempts: i64, jitter_unit: f64) -> i64 {
    let step = attempts.clamp(1, 16) as u32 - 1;
    super::backoff::Backoff::BATCH_RETRY.jittered(step, jitter_unit).as_millis() as i64
}

/// A number in [0, 1) from the process's random hasher keys and `seed` (the clock's now).
pub(super) fn jitter_unit(seed: i64) -> f64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_i64(seed);
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
    /// The timer that takes the batch in flight back if no answer comes.
    pub backstop: Backstop,
}

/// The backstop timer of the batch in flight. Its task holds the actor's `ActorRef` until it
/// fires (minutes later), which kept every stopped session's mailbox alive that long: 4,000
/// reaped sessions held ~14 MB of mailboxes (heaptrack). Replacing, clearing or dropping it (the
/// actor stopped) aborts the task. A clone is empty.
#[derive(Default)]
pub struct Backstop(Option<tokio::task::AbortHandle>);

impl Backstop {
    pub fn set(&mut self, timer: tokio::task::AbortHandle) {
        self.clear();
        self.0 = Some(timer);
    }

    pub fn clear(&mut self) {
        if let Some(t) = self.0.take() {
            t.abort();
        }
    }

    pub fn is_armed(&self) -> bool {
        self.0.as_ref().is_some_and(|t| !t.is_finished())
    }
}

impl Drop for Backstop {
    fn drop(&mut self) {
        self.clear();
    }
}

impl Clone for Backstop {
    fn clone(&self) -> Self {
        Self(None)
    }
}

impl std::fmt::Debug for Backstop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.is_armed() { "Backstop(armed)" } else { "Backstop(none)" })
    }
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
        self.backstop.clear();
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
pub(super) const DEADLINE_GRACE: Duration = Duration::from_secs(5);

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
            backstop: Backstop::default(),
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

#[cfg(test)]
mod backstop_tests {
    use super::*;

    #[tokio::test]
    async fn a_dropped_or_replaced_backstop_aborts_its_timer() {
        let held = std::sync::Arc::new(());
        let timer = |h: std::sync::Arc<()>| {
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                drop(h);
            })
            .abort_handle()
        };
        let mut b = Backstop::default();
        b.set(timer(held.clone()));
        assert!(b.is_armed());
        b.set(timer(held.clone()));
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while std::sync::Arc::strong_count(&held) > 2 && std::time::Instant::now() < deadline {
            tokio::task::yield_now().await;
        }
        assert_eq!(std::sync::Arc::strong_count(&held), 2, "the replaced timer let go of what it held");
        drop(b);
        while std::sync::Arc::strong_count(&held) > 1 && std::time::Instant::now() < deadline {
            tokio::task::yield_now().await;
        }
        assert_eq!(std::sync::Arc::strong_count(&held), 1, "dropping the state aborts the timer");
    }
}
