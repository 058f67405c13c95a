//! What the observer's provider counts and decides, apart from the actor that carries it out
//! ([`super::provider`]): routing a batch (extractive, deferred or a call), the defer limit, the
//! day's calls, failures, tokens and latencies, and the status line. Plain methods, unit-tested
//! without a runtime in `provider_state_tests.rs`.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::Handles;
use super::breaker::{Admission, Breakers, Outcome};
use super::provider::ProviderArgs;
use crate::backend::Storage;
use crate::clock::{Clock, day};
use crate::observer::prompt::part_a_sha256;
use crate::observer::setup::ObserverSetup;
use crate::pipeline::privacy::Privacy;
use crate::providers::{Backend, CallError};

/// docs/spec/api.md §6.3 `provider`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ProviderStatus {
    pub name: String,
    pub model: String,
    pub using_fallback: bool,
    pub breakers: BTreeMap<String, serde_json::Value>,
    pub tokens_today: i64,
    pub budget: u64,
    pub budget_left: Option<u64>,
    pub calls_today: u64,
    pub failures_today: u64,
    pub latency_ms: Latency,
    pub prefix_sha256: BTreeMap<String, String>,
    /// Provider calls open now, and the cap (`MEMD_OBSERVER_CONCURRENCY`).
    pub calls_open: usize,
    pub calls_max: usize,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Latency {
    pub p50: u64,
    pub p95: u64,
    /// The last (up to 100) calls' latencies, oldest first: what `memd stats` draws.
    pub recent: Vec<u64>,
}

/// The provider's state: its resources (`setup`, `privacy`, `storage`, `handles`, `clock`) and
/// what it counts and decides (breakers, today's calls and tokens, latencies).
pub struct ProviderState {
    pub(super) setup: ObserverSetup,
    pub(super) privacy: Arc<Privacy>,
    pub(super) storage: Arc<dyn Storage>,
    pub(super) handles: Arc<Handles>,
    pub(super) breakers: Breakers,
    next_call: u64,
    day: String,
    calls: u64,
    failures: u64,
    pub(super) tokens: i64,
    latencies: VecDeque<u64>,
    prefix: BTreeMap<String, String>,
    pub(super) clock: Clock,
}

/// Where a batch goes when it arrives ([`ProviderState::route`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// To the extractive observer now, and why.
    Extractive(&'static str),
    /// Back to `pending` until a breaker's probe time.
    Defer { retry_at: i64 },
    /// To the provider, as this call.
    Call(u64),
}

impl ProviderState {
    /// `tokens`: today's tokens already spent (from `token_usage`).
    pub fn new(args: ProviderArgs, tokens: i64) -> Self {
        let now = args.clock.now();
        let prefix = BTreeMap::from([(args.setup.mode_id.clone(), part_a_sha256(&args.setup.mode))]);
        Self {
            setup: args.setup,
            privacy: args.privacy,
            storage: args.storage,
            handles: args.handles,
            breakers: Breakers::default(),
            next_call: 0,
            day: day(now),
            calls: 0,
            failures: 0,
            tokens,
            latencies: VecDeque::new(),
            prefix,
            clock: args.clock,
        }
    }

    /// The next call's id (breakers tell a probe's answer from others by it).
    pub(super) fn next_call_id(&mut self) -> u64 {
        self.next_call += 1;
        self.next_call
    }

    /// Routing (docs/spec/pipeline.md §13): no provider, budget spent or auth breaker open →
    /// extractive; quota/failure breaker open → deferred ([`Self::defer_to`]); else a call.
    pub fn route(&mut self, now: i64, oldest_epoch: i64) -> Route {
        self.roll_day(now);
        if matches!(self.setup.backend, Backend::Extractive) {
            return Route::Extractive("no provider configured");
        }
        if self.budget_spent() {
            return Route::Extractive("daily token budget spent");
        }
        let call_id = self.next_call_id();
        match self.breakers.admit(now, call_id) {
            Admission::Fallback(why) => Route::Extractive(why),
            Admission::WaitUntil(t) => match self.defer_to(now, oldest_epoch, t) {
                Some(retry_at) => Route::Defer { retry_at },
                None => Route::Extractive("deferred as long as allowed"),
            },
            Admission::Call | Admission::Probe => Route::Call(call_id),
        }
    }

    /// When rows whose oldest arrived at `oldest_epoch` retry if they wait for `until`: no later
    /// than `MEMD_OBSERVER_MAX_DEFER_MS` after that row; None once that limit has passed.
    pub fn defer_to(&self, now: i64, oldest_epoch: i64, until: i64) -> Option<i64> {
        let limit = oldest_epoch + self.setup.max_defer_ms as i64;
        (now < limit).then_some(until.min(limit))
    }

    /// Counts a finished call (its latency and tokens) and tells the breakers how it ended.
    pub fn settle(&mut self, call_id: u64, outcome: &Outcome, latency_ms: u64, tokens: i64, now: i64) {
        self.roll_day(now);
        self.record_call(matches!(outcome, Outcome::Success), latency_ms, tokens);
        self.breakers.record(call_id, outcome, now);
    }

    pub(super) fn roll_day(&mut self, now: i64) {
        let today = day(now);
        if today != self.day {
            self.day = today;
            (self.calls, self.failures, self.tokens) = (0, 0, 0);
        }
    }

    pub(super) fn budget_spent(&self) -> bool {
        self.setup.budget > 0 && self.tokens >= self.setup.budget as i64
    }

    pub(super) fn record_call(&mut self, ok: bool, latency_ms: u64, tokens: i64) {
        self.calls += 1;
        self.failures += u64::from(!ok);
        self.tokens += tokens;
        if self.latencies.len() >= 100 {
            self.latencies.pop_front();
        }
        self.latencies.push_back(latency_ms);
    }

    pub fn status(&self) -> ProviderStatus {
        let mut v: Vec<u64> = self.latencies.iter().copied().collect();
        v.sort_unstable();
        let pct = |p: usize| v.get((v.len() * p / 100).min(v.len().saturating_sub(1))).copied().unwrap_or(0);
        let b = &self.breakers;
        let gated = [&b.quota, &b.failure].iter().any(|x| x.state != super::breaker::State::Closed);
        let budget_left = (self.setup.budget > 0).then(|| self.setup.budget.saturating_sub(self.tokens.max(0) as u64));
        ProviderStatus {
            name: self.setup.backend.kind().name().into(),
            model: self.setup.backend.model().into(),
            using_fallback: matches!(self.setup.backend, Backend::Extractive) || b.forces_fallback() || self.budget_spent() || gated,
            breakers: BTreeMap::from([
                ("failure".into(), b.failure.view()),
                ("quota".into(), b.quota.view()),
                ("overflow".into(), b.overflow.view()),
                ("auth".into(), b.auth.view()),
            ]),
            tokens_today: self.tokens,
            budget: self.setup.budget,
            budget_left,
            calls_today: self.calls,
            failures_today: self.failures,
            latency_ms: Latency {
                p50: pct(50),
                p95: pct(95),
                recent: self.latencies.iter().copied().collect(),
            },
            prefix_sha256: self.prefix.clone(),
            calls_open: self.setup.max_calls.saturating_sub(self.setup.calls.available_permits()),
            calls_max: self.setup.max_calls,
        }
    }
}

pub fn outcome_of(e: &CallError) -> Outcome {
    match e {
        CallError::Transient(r) => Outcome::Transient(r.clone()),
        CallError::Quota { retry_after_ms, reason } => Outcome::Quota {
            retry_after_ms: *retry_after_ms,
            reason: reason.clone(),
        },
        CallError::Auth(r) => Outcome::Auth(r.clone()),
        CallError::Overflow(r) => Outcome::Overflow(r.clone()),
    }
}

#[cfg(test)]
#[path = "provider_state_tests.rs"]
mod tests;
