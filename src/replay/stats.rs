//! Counting a replay: per event kind (sent, acknowledged, skipped, duplicates, errors by kind,
//! latencies) and per session the PostToolUse ids the worker acknowledged, for the loss check.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde::Serialize;

use super::deliver::Answer;
use super::event::EventKind;

/// Latency percentiles in milliseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Latency {
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
}

impl Latency {
    pub fn of(samples_us: &mut [u64]) -> Latency {
        if samples_us.is_empty() {
            return Latency::default();
        }
        samples_us.sort_unstable();
        let at = |q: f64| {
            let i = ((samples_us.len() as f64 * q).ceil() as usize).clamp(1, samples_us.len()) - 1;
            samples_us[i] as f64 / 1000.0
        };
        Latency {
            p50: at(0.50),
            p95: at(0.95),
            p99: at(0.99),
            max: at(1.0),
        }
    }
}

/// Figures of one event kind.
#[derive(Debug, Clone, Default, Serialize)]
pub struct KindStats {
    pub converted: u64,
    pub sent: u64,
    pub acknowledged: u64,
    pub skipped: BTreeMap<String, u64>,
    pub duplicates: u64,
    pub errors: BTreeMap<String, u64>,
    #[serde(skip)]
    pub samples_us: Vec<u64>,
    pub latency_ms: Latency,
}

/// What the worker acknowledged for one session's tool events.
#[derive(Debug, Clone, Default)]
pub struct SessionTally {
    /// tool_use_id → tool name of events answered `queued` (or exit 0 in hook mode).
    pub acked: BTreeMap<String, String>,
    pub skipped: BTreeSet<String>,
    pub duplicates: BTreeSet<String>,
    pub errors: BTreeSet<String>,
}

/// Everything counted during a run (merged from the threads).
#[derive(Debug, Clone, Default)]
pub struct Tally {
    pub kinds: BTreeMap<EventKind, KindStats>,
    pub sessions: BTreeMap<String, SessionTally>,
}

impl Tally {
    pub fn record(&mut self, kind: EventKind, session: &str, tool: Option<(&str, &str)>, answer: &Answer, took: Duration) {
        let k = self.kinds.entry(kind).or_default();
        k.sent += 1;
        k.samples_us.push(took.as_micros() as u64);
        match answer {
            Answer::Acked => k.acknowledged += 1,
            Answer::Skipped(r) => *k.skipped.entry(r.clone()).or_default() += 1,
            Answer::Duplicate => k.duplicates += 1,
            Answer::Error(e) => *k.errors.entry(e.clone()).or_default() += 1,
        }
        let Some((id, name)) = tool.filter(|_| matches!(kind, EventKind::PostToolUse | EventKind::PostToolUseFailure)) else {
            return;
        };
        let s = self.sessions.entry(session.to_string()).or_default();
        match answer {
            Answer::Acked => {
                s.acked.insert(id.to_string(), name.to_string());
            }
            Answer::Skipped(_) => {
                s.skipped.insert(id.to_string());
            }
            Answer::Duplicate => {
                s.duplicates.insert(id.to_string());
            }
            Answer::Error(_) => {
                s.errors.insert(id.to_string());
            }
        }
    }

    pub fn merge(&mut self, other: Tally) {
        for (kind, o) in other.kinds {
            let k = self.kinds.entry(kind).or_default();
            k.sent += o.sent;
            k.acknowledged += o.acknowledged;
            k.duplicates += o.duplicates;
            k.samples_us.extend(o.samples_us);
            for (r, n) in o.skipped {
                *k.skipped.entry(r).or_default() += n;
            }
            for (e, n) in o.errors {
                *k.errors.entry(e).or_default() += n;
            }
        }
        for (id, o) in other.sessions {
            let s = self.sessions.entry(id).or_default();
            s.acked.extend(o.acked);
            s.skipped.extend(o.skipped);
            s.duplicates.extend(o.duplicates);
            s.errors.extend(o.errors);
        }
    }

    /// Computes the percentiles (call once, after the run).
    pub fn finish(&mut self) {
        for k in self.kinds.values_mut() {
            k.latency_ms = Latency::of(&mut k.samples_us);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_and_merge() {
        let mut v: Vec<u64> = (1..=100).map(|i| i * 1000).collect();
        assert_eq!(
            Latency::of(&mut v),
            Latency {
                p50: 50.0,
                p95: 95.0,
                p99: 99.0,
                max: 100.0
            }
        );
        let mut a = Tally::default();
        let mut b = Tally::default();
        a.record(
            EventKind::PostToolUse,
            "s",
            Some(("t1", "Bash")),
            &Answer::Acked,
            Duration::from_millis(1),
        );
        b.record(
            EventKind::PostToolUse,
            "s",
            Some(("t2", "TodoWrite")),
            &Answer::Skipped("tool_excluded".into()),
            Duration::from_millis(2),
        );
        a.merge(b);
        a.finish();
        let k = &a.kinds[&EventKind::PostToolUse];
        assert_eq!((k.sent, k.acknowledged, k.skipped["tool_excluded"]), (2, 1, 1));
        assert_eq!(a.sessions["s"].acked.len(), 1);
    }
}
