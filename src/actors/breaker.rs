//! Circuit breakers of the ProviderActor (docs/design.md "The observer"), pure: time is passed in.
//!
//! * failure — 5 consecutive transient failures open it for 30 s; then exactly one probe call.
//! * quota — a 429 or quota prose opens it until Retry-After (else 5 min); then exactly one probe.
//! * auth — 401/403 or auth prose opens it until the settings change (they are read at start, so
//!   until the worker restarts); meanwhile every batch goes to the extractive observer.
//! * overflow — informational: open after a context-too-long answer (the batch is split or its
//!   fields cut harder by the caller), closed again by the next successful call.
//!
//! Only the probe's own result moves an open breaker; answers of calls started before it opened
//! do not close it early.

use serde::Serialize;

use crate::clock::iso;

pub const FAILURES_TO_OPEN: u32 = 5;
pub const FAILURE_OPEN_MS: i64 = 30_000;
pub const QUOTA_DEFAULT_MS: i64 = 300_000;
/// How long a caller waits before asking again while a probe is in flight.
pub const PROBE_WAIT_MS: i64 = 1_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    Closed,
    Open,
    HalfOpen,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Breaker {
    pub state: State,
    pub since_ms: i64,
    pub until_ms: Option<i64>,
    pub reason: Option<String>,
}

impl Default for Breaker {
    fn default() -> Self {
        Self {
            state: State::Closed,
            since_ms: 0,
            until_ms: None,
            reason: None,
        }
    }
}

impl Breaker {
    fn open(&mut self, now: i64, until: Option<i64>, reason: &str) {
        self.state = State::Open;
        self.since_ms = now;
        self.until_ms = until;
        self.reason = Some(reason.chars().take(200).collect());
    }

    fn close(&mut self) {
        *self = Self::default();
    }

    /// `{"state", "since"?, "until"?, "reason"?}` for `GET /api/status`.
    pub fn view(&self) -> serde_json::Value {
        let mut v = serde_json::json!({"state": self.state});
        if self.state != State::Closed {
            v["since"] = iso(self.since_ms).into();
            if let Some(u) = self.until_ms {
                v["until"] = iso(u).into();
            }
            v["reason"] = self.reason.clone().into();
        }
        v
    }
}

/// What the caller may do with the next batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Admission {
    Call,
    /// The one probe of a breaker whose open period ended.
    Probe,
    /// Try again at this time (quota/failure open, or a probe in flight).
    WaitUntil(i64),
    /// Go to the extractive observer now (auth open).
    Fallback(&'static str),
}

/// How a call ended, for the breakers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Success,
    Transient(String),
    Quota { retry_after_ms: Option<u64>, reason: String },
    Auth(String),
    Overflow(String),
}

#[derive(Debug, Clone, Default)]
pub struct Breakers {
    pub failure: Breaker,
    pub quota: Breaker,
    pub overflow: Breaker,
    pub auth: Breaker,
    pub consecutive_failures: u32,
    /// Call id of the probe in flight.
    pub probe: Option<u64>,
}

impl Breakers {
    pub fn admit(&mut self, now: i64, call_id: u64) -> Admission {
        if self.auth.state != State::Closed {
            return Admission::Fallback("auth breaker open");
        }
        let mut probe = false;
        for b in [&mut self.quota, &mut self.failure] {
            match (b.state, b.until_ms) {
                (State::Closed, _) => {}
                (State::Open, Some(until)) if until > now => return Admission::WaitUntil(until),
                _ if self.probe.is_some() => return Admission::WaitUntil(now + PROBE_WAIT_MS),
                _ => {
                    b.state = State::HalfOpen;
                    probe = true;
                }
            }
        }
        if probe {
            self.probe = Some(call_id);
            Admission::Probe
        } else {
            Admission::Call
        }
    }

    /// Whether the extractive observer must take batches now (for `using_fallback`).
    pub fn forces_fallback(&self) -> bool {
        self.auth.state != State::Closed
    }

    pub fn record(&mut self, call_id: u64, outcome: &Outcome, now: i64) {
        let was_probe = self.probe == Some(call_id);
        if was_probe {
            self.probe = None;
        }
        let gate_open = |b: &Breaker| b.state != State::Closed;
        let gated = gate_open(&self.quota) || gate_open(&self.failure);
        match outcome {
            Outcome::Success | Outcome::Overflow(_) => {
                self.consecutive_failures = 0;
                if was_probe || !gated {
                    self.quota.close();
                    self.failure.close();
                }
                match outcome {
                    Outcome::Overflow(reason) => self.overflow.open(now, None, reason),
                    _ => self.overflow.close(),
                }
            }
            Outcome::Transient(reason) => {
                self.consecutive_failures += 1;
                if was_probe && self.quota.state == State::HalfOpen {
                    self.quota.close(); // the provider answered, just not well: quota is not the issue
                }
                let probe_failed = was_probe && self.failure.state == State::HalfOpen;
                if probe_failed || (self.consecutive_failures >= FAILURES_TO_OPEN && self.failure.state == State::Closed) {
                    self.failure.open(now, Some(now + FAILURE_OPEN_MS), reason);
                }
            }
            Outcome::Quota { retry_after_ms, reason } => {
                let wait = retry_after_ms.map_or(QUOTA_DEFAULT_MS, |ms| ms as i64);
                if was_probe || self.quota.state == State::Closed || self.quota.until_ms.is_some_and(|u| u < now + wait) {
                    self.quota.open(now, Some(now + wait), reason);
                }
                if was_probe && self.failure.state == State::HalfOpen {
                    self.failure.close();
                }
            }
            Outcome::Auth(reason) => self
                .auth
                .open(now, None, &format!("{reason} (open until the provider settings change)")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn five_failures_open_then_one_probe_after_30_s() {
        let mut b = Breakers::default();
        for id in 0..5 {
            assert_eq!(b.admit(0, id), Admission::Call);
            b.record(id, &Outcome::Transient("500".into()), 0);
        }
        assert_eq!(b.failure.state, State::Open);
        assert_eq!(b.admit(29_999, 10), Admission::WaitUntil(30_000));
        assert_eq!(b.admit(30_000, 11), Admission::Probe);
        assert_eq!(b.admit(30_001, 12), Admission::WaitUntil(30_001 + PROBE_WAIT_MS));
        b.record(11, &Outcome::Transient("500".into()), 30_100);
        assert_eq!(b.admit(30_200, 13), Admission::WaitUntil(60_100), "a failed probe reopens");
        assert_eq!(b.admit(60_100, 14), Admission::Probe);
        b.record(14, &Outcome::Success, 60_200);
        assert_eq!(b.failure.state, State::Closed);
        assert_eq!(b.admit(60_300, 15), Admission::Call);
    }

    #[test]
    fn quota_honours_retry_after_else_five_minutes_and_stale_answers_do_not_close_it() {
        let mut b = Breakers::default();
        b.admit(0, 1);
        b.admit(0, 2);
        let q = |ms| Outcome::Quota {
            retry_after_ms: ms,
            reason: "429".into(),
        };
        b.record(1, &q(Some(2_000)), 100);
        b.record(2, &Outcome::Success, 150);
        assert_eq!(b.quota.state, State::Open, "an answer started before the open does not close it");
        assert_eq!(b.admit(2_099, 3), Admission::WaitUntil(2_100));
        assert_eq!(b.admit(2_100, 4), Admission::Probe);
        assert!(matches!(b.admit(2_100, 5), Admission::WaitUntil(_)), "exactly one probe");
        b.record(4, &q(None), 2_200);
        assert_eq!(b.quota.until_ms, Some(2_200 + QUOTA_DEFAULT_MS));
        assert_eq!(b.admit(2_200 + QUOTA_DEFAULT_MS, 6), Admission::Probe);
        b.record(6, &Outcome::Success, 0);
        assert_eq!(b.admit(1, 7), Admission::Call);
    }

    #[test]
    fn auth_forces_fallback_until_restart_and_overflow_is_informational() {
        let mut b = Breakers::default();
        b.record(1, &Outcome::Overflow("prompt is too long".into()), 0);
        assert_eq!(b.overflow.state, State::Open);
        assert_eq!(b.admit(0, 2), Admission::Call);
        b.record(2, &Outcome::Success, 1);
        assert_eq!(b.overflow.state, State::Closed);
        b.record(3, &Outcome::Auth("http 401".into()), 5);
        assert_eq!(b.admit(1_000_000_000, 4), Admission::Fallback("auth breaker open"));
        assert_eq!(b.auth.view()["state"], "open");
        assert!(b.auth.view().get("until").is_none());
    }
}
