//! Backoff and restart policy, pure, no runtime needed: [`Backoff`] is the one delay schedule of
//! every retry in the worker (session and child restarts, a batch's retry, the vector and Chroma
//! syncs, the supervised loops); [`RestartTracker`] is the restart budget of session actors and
//! the root's children (docs/design.md "Supervision").
//!
//! Restarts wait 1 s, 2 s, 4 s, capped at 8 s; more than 3 consecutive failures, or more than 10
//! restarts within 60 s, parks the session as `failed`.

use std::collections::VecDeque;
use std::time::Duration;

/// A delay schedule: `first`, then multiplied by `factor` at each step up to `cap`, with an
/// optional ± `jitter` fraction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backoff {
    pub first: Duration,
    pub factor: u32,
    pub cap: Duration,
    /// 0.2 spreads each delay over ± 20 % ([`Backoff::jittered`]).
    pub jitter: f64,
}

impl Backoff {
    /// Restarts of session actors and of the root's children: 1 s, 2 s, 4 s, 8 s, 8 s …
    pub const RESTART: Backoff = Backoff::doubling(Duration::from_secs(1), Duration::from_secs(8));
    /// Supervised loops and the vector sync: 1 s, 2 s, 4 s … 60 s.
    pub const LOOP: Backoff = Backoff::doubling(Duration::from_secs(1), Duration::from_secs(60));
    /// A batch the observer could not take: 5 s, 30 s, then 120 s, ± 20 % (docs/spec/pipeline.md §13).
    pub const BATCH_RETRY: Backoff = Backoff {
        first: Duration::from_secs(5),
        factor: 6,
        cap: Duration::from_secs(120),
        jitter: 0.2,
    };

    /// `first`, doubling up to `cap`, no jitter.
    pub const fn doubling(first: Duration, cap: Duration) -> Backoff {
        Backoff {
            first,
            factor: 2,
            cap,
            jitter: 0.0,
        }
    }

    /// The delay after `step` earlier waits (step 0 is `first`).
    pub fn delay(&self, step: u32) -> Duration {
        let mut d = self.first;
        for _ in 0..step {
            if d >= self.cap {
                break;
            }
            d = d.saturating_mul(self.factor);
        }
        d.min(self.cap)
    }

    /// [`Backoff::delay`] spread by the jitter: `unit` in [0, 1) maps to −jitter … +jitter.
    pub fn jittered(&self, step: u32, unit: f64) -> Duration {
        self.delay(step)
            .mul_f64(1.0 - self.jitter + 2.0 * self.jitter * unit.clamp(0.0, 1.0))
    }
}

pub const MAX_CONSECUTIVE: u32 = 3;
pub const MAX_RESTARTS_IN_WINDOW: usize = 10;
pub const WINDOW_MS: u64 = 60_000;

#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    RestartAfter(Duration),
    Park(String),
}

/// Failure history of one session.
#[derive(Debug, Clone, Default)]
pub struct RestartTracker {
    pub consecutive: u32,
    pub restarts: u32,
    history_ms: VecDeque<u64>,
}

impl RestartTracker {
    /// Records a failure at `now_ms` (a monotonic clock) and decides what to do.
    pub fn on_failure(&mut self, now_ms: u64) -> Verdict {
        self.consecutive += 1;
        while self.history_ms.front().is_some_and(|t| now_ms.saturating_sub(*t) > WINDOW_MS) {
            self.history_ms.pop_front();
        }
        if self.consecutive > MAX_CONSECUTIVE {
            return Verdict::Park(format!("{} consecutive failures", self.consecutive));
        }
        if self.history_ms.len() >= MAX_RESTARTS_IN_WINDOW {
            return Verdict::Park(format!("more than {MAX_RESTARTS_IN_WINDOW} restarts in 60 s"));
        }
        self.history_ms.push_back(now_ms);
        self.restarts += 1;
        Verdict::RestartAfter(delay(self.consecutive))
    }

    /// A batch succeeded: the consecutive count starts over (the 60 s window does not).
    pub fn on_success(&mut self) {
        self.consecutive = 0;
    }
}

/// 1 s, 2 s, 4 s, 8 s, 8 s …
pub fn delay(consecutive: u32) -> Duration {
    Backoff::RESTART.delay(consecutive.saturating_sub(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backs_off_then_parks_after_four_in_a_row() {
        let mut t = RestartTracker::default();
        assert_eq!(t.on_failure(0), Verdict::RestartAfter(Duration::from_secs(1)));
        assert_eq!(t.on_failure(1_000), Verdict::RestartAfter(Duration::from_secs(2)));
        assert_eq!(t.on_failure(3_000), Verdict::RestartAfter(Duration::from_secs(4)));
        assert!(matches!(t.on_failure(7_000), Verdict::Park(_)));
    }

    #[test]
    fn delay_is_capped() {
        assert_eq!(delay(10), Duration::from_secs(8));
    }

    #[test]
    fn each_schedule_keeps_the_delays_it_replaced() {
        let secs = |b: Backoff, n: u32| (0..n).map(|i| b.delay(i).as_secs()).collect::<Vec<_>>();
        assert_eq!(secs(Backoff::RESTART, 6), [1, 2, 4, 8, 8, 8]);
        assert_eq!(secs(Backoff::LOOP, 9), [1, 2, 4, 8, 16, 32, 60, 60, 60]);
        assert_eq!(secs(Backoff::BATCH_RETRY, 4), [5, 30, 120, 120]);
        let chroma = Backoff::doubling(Duration::from_millis(500), Duration::from_secs(5));
        assert_eq!(chroma.delay(40), Duration::from_secs(5), "no overflow on a long outage");
        assert_eq!(Backoff::BATCH_RETRY.jittered(1, 0.0), Duration::from_secs(24));
        assert_eq!(Backoff::BATCH_RETRY.jittered(2, 1.0), Duration::from_secs(144));
    }

    #[test]
    fn many_restarts_in_a_minute_park_even_with_successes_between() {
        let mut t = RestartTracker::default();
        for i in 0..10 {
            assert!(matches!(t.on_failure(i * 1000), Verdict::RestartAfter(_)));
            t.on_success();
        }
        assert!(matches!(t.on_failure(10_500), Verdict::Park(_)));
        let mut fresh = RestartTracker::default();
        for i in 0..10 {
            fresh.on_failure(i * 10_000);
            fresh.on_success();
        }
        assert!(
            matches!(fresh.on_failure(200_000), Verdict::RestartAfter(_)),
            "old restarts leave the window"
        );
    }
}
