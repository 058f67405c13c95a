//! Restart policy of session actors (docs/design.md "Supervision"): pure, no runtime needed.
//!
//! Delays 1 s, 2 s, 4 s, capped at 8 s; more than 3 consecutive failures, or more than 10 restarts
//! within 60 s, parks the session as `failed`.

use std::collections::VecDeque;
use std::time::Duration;

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
    Duration::from_secs(1u64 << consecutive.saturating_sub(1).min(3))
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
