//! The replay report: per event kind counts and latencies, throughput, worker resource use and the
//! loss check; rendered as a table or serialised as JSON.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use super::event::{EventKind, SessionEvents};
use super::loss::LossReport;
use super::proc_stats::ProcSample;
use super::stats::{KindStats, Tally};

#[derive(Debug, Clone, Serialize)]
pub struct WorkerUsage {
    pub pid: u32,
    pub before: Option<ProcSample>,
    pub after: Option<ProcSample>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub mode: String,
    pub target: String,
    pub files: usize,
    pub sessions: usize,
    pub elapsed_s: f64,
    pub bounded: bool,
    pub sent: u64,
    pub acknowledged: u64,
    pub skipped: u64,
    pub duplicates: u64,
    pub errors: BTreeMap<String, u64>,
    pub throughput_eps: f64,
    /// Keyed by hook event name; every converted kind appears, delivered or not.
    pub events: BTreeMap<&'static str, KindStats>,
    pub dropped_tool_results: BTreeMap<&'static str, u64>,
    pub worker: Option<WorkerUsage>,
    pub loss_check: Option<LossReport>,
}

impl Report {
    pub fn new(mode: &str, target: &str, files: usize, sessions: &[SessionEvents], tally: Tally, elapsed_s: f64, bounded: bool) -> Report {
        let mut events: BTreeMap<&'static str, KindStats> = BTreeMap::new();
        for kind in EventKind::ALL {
            let converted: usize = sessions.iter().map(|s| s.count(kind, None)).sum();
            let mut k = tally.kinds.get(&kind).cloned().unwrap_or_default();
            k.converted = converted as u64;
            if converted > 0 || k.sent > 0 {
                events.insert(kind.name(), k);
            }
        }
        let mut errors = BTreeMap::new();
        for k in events.values() {
            for (e, n) in &k.errors {
                *errors.entry(e.clone()).or_default() += n;
            }
        }
        let sum = |f: fn(&KindStats) -> u64| events.values().map(f).sum::<u64>();
        let sent = sum(|k| k.sent);
        let mut dropped = BTreeMap::new();
        for s in sessions {
            for d in [s.dropped_main, s.dropped_sidechain, s.dropped_subagent] {
                *dropped.entry("permission_denials").or_default() += d.denials;
                *dropped.entry("validation_errors").or_default() += d.validation_errors;
                *dropped.entry("unmatched_results").or_default() += d.unmatched_results;
            }
        }
        Report {
            mode: mode.to_string(),
            target: target.to_string(),
            files,
            sessions: sessions.len(),
            elapsed_s,
            bounded,
            sent,
            acknowledged: sum(|k| k.acknowledged),
            skipped: sum(|k| k.skipped.values().sum()),
            duplicates: sum(|k| k.duplicates),
            errors,
            throughput_eps: if elapsed_s > 0.0 { sent as f64 / elapsed_s } else { 0.0 },
            events,
            dropped_tool_results: dropped,
            worker: None,
            loss_check: None,
        }
    }

    /// Exit status: loss check failed (or could not drain) → false.
    pub fn passed(&self) -> bool {
        self.loss_check.as_ref().is_none_or(LossReport::passed)
    }

    pub fn render(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(
            o,
            "replay ({} → {}): {} files, {} sessions, {:.2} s{}",
            self.mode,
            self.target,
            self.files,
            self.sessions,
            self.elapsed_s,
            if self.bounded { " (stopped by --duration/--events)" } else { "" }
        );
        let _ = writeln!(
            o,
            "sent {}  acknowledged {}  skipped {}  duplicates {}  errors {}  throughput {:.1} events/s\n",
            self.sent,
            self.acknowledged,
            self.skipped,
            self.duplicates,
            self.errors.values().sum::<u64>(),
            self.throughput_eps
        );
        let _ = writeln!(
            o,
            "{:<20} {:>9} {:>7} {:>7} {:>7} {:>5} {:>6} {:>8} {:>8} {:>8} {:>8}",
            "event", "converted", "sent", "acked", "skipped", "dup", "errors", "p50 ms", "p95 ms", "p99 ms", "max ms"
        );
        for (name, k) in &self.events {
            let l = &k.latency_ms;
            let _ = writeln!(
                o,
                "{:<20} {:>9} {:>7} {:>7} {:>7} {:>5} {:>6} {:>8.2} {:>8.2} {:>8.2} {:>8.2}",
                name,
                k.converted,
                k.sent,
                k.acknowledged,
                k.skipped.values().sum::<u64>(),
                k.duplicates,
                k.errors.values().sum::<u64>(),
                l.p50,
                l.p95,
                l.p99,
                l.max
            );
        }
        for (e, n) in &self.errors {
            let _ = writeln!(o, "error {e}: {n}");
        }
        let d = &self.dropped_tool_results;
        let _ = writeln!(o, "\ntool results without a Post event: {d:?}");
        if let Some(w) = &self.worker {
            let fmt = |s: &Option<ProcSample>| s.map_or("-".to_string(), |s| format!("rss {} KiB cpu {:.2} s", s.rss_kb, s.cpu_s));
            let _ = writeln!(o, "worker pid {}: before {} | after {}", w.pid, fmt(&w.before), fmt(&w.after));
        }
        match &self.loss_check {
            None => {
                let _ = writeln!(o, "loss check: not run");
            }
            Some(l) => {
                let verdict = if l.passed() { "PASS" } else { "FAIL" };
                let _ = writeln!(
                    o,
                    "loss check: {verdict} — drained {} in {:.1} s (pending {} processing {} spool {}); {} sessions, \
                     expected rows {} found {} missing {}; skipped {} (+{} by skip rule), duplicates {}, \
                     rows for unacknowledged events {}, failed pending {}",
                    l.drain.drained,
                    l.drain.waited_s,
                    l.drain.pending,
                    l.drain.processing,
                    l.drain.spool_files,
                    l.sessions,
                    l.expected_rows,
                    l.found_rows,
                    l.missing_rows,
                    l.skipped,
                    l.skipped_by_rule,
                    l.duplicates,
                    l.unacknowledged_rows,
                    l.failed_pending
                );
                for s in &l.losses {
                    let _ = writeln!(o, "  LOST {} of session {}: {:?}", s.missing, s.session_id, s.examples);
                }
            }
        }
        o
    }
}
