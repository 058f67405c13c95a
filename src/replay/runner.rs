//! Replaying converted sessions against a worker: `concurrency` threads each take whole sessions
//! (events of a session stay in order), an optional global events/s cap, `--duration` and
//! `--events` bounds, and a progress bar. Plain std threads; no async runtime.

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use super::bodies::{Target, delivered_over_http, delivered_via_hook, http_call};
use super::deliver::{Answer, HookRunner, HttpTarget, run_hook, send_http};
use super::event::{HookEvent, SessionEvents};
use super::stats::Tally;
use crate::clock::now_ms;

/// How events reach the worker.
#[derive(Debug, Clone)]
pub enum Mode {
    Http(HttpTarget),
    Hook(HookRunner),
}

#[derive(Debug, Clone)]
pub struct RunOptions {
    pub mode: Mode,
    pub target: Target,
    pub concurrency: usize,
    /// Events per second over all threads; `None` = unthrottled.
    pub rate: Option<f64>,
    pub duration: Option<Duration>,
    pub max_events: Option<u64>,
    /// For project names (`~` expansion), as the hook would see it.
    pub home: Option<PathBuf>,
    pub progress: bool,
    /// A backfill (`memd import-sessions`), not a load test: each event keeps its recorded time
    /// and gets an id derived from its session and position, so importing again stores nothing
    /// twice.
    pub import: bool,
}

#[derive(Debug, Default)]
pub struct RunResult {
    pub tally: Tally,
    pub elapsed: Duration,
    /// A `--duration` or `--events` bound ended the run before every event was sent.
    pub bounded: bool,
}

impl RunOptions {
    /// Everything sent over HTTP to a local memd worker at `addr`, two sessions at a time, no
    /// bound, no progress bar, as a load replay (set `import` for a backfill).
    pub fn to_local_worker(addr: std::net::SocketAddr, token: Option<String>, home: Option<PathBuf>) -> Self {
        Self {
            mode: Mode::Http(super::deliver::HttpTarget {
                addr,
                token,
                timeout: Duration::from_secs(30),
            }),
            target: Target::Memd,
            concurrency: 2,
            rate: None,
            duration: None,
            max_events: None,
            home,
            progress: false,
            import: false,
        }
    }

    pub fn delivers(&self, e: &HookEvent) -> bool {
        match self.mode {
            Mode::Http(_) => delivered_over_http(e.kind, self.target),
            Mode::Hook(_) => delivered_via_hook(e),
        }
    }
}

/// A shared pacing clock: each event reserves the next free slot.
struct Pacer {
    next: Mutex<Instant>,
    gap: Duration,
}

impl Pacer {
    fn wait(&self) {
        let slot = {
            let Ok(mut next) = self.next.lock() else { return };
            let slot = (*next).max(Instant::now());
            *next = slot + self.gap;
            slot
        };
        let now = Instant::now();
        if slot > now {
            std::thread::sleep(slot - now);
        }
    }
}

pub fn run(sessions: &[SessionEvents], opts: &RunOptions) -> RunResult {
    let deliverable: u64 = sessions.iter().flat_map(|s| &s.events).filter(|e| opts.delivers(e)).count() as u64;
    let total = opts.max_events.map_or(deliverable, |m| m.min(deliverable));
    let bar = if opts.progress {
        ProgressBar::new(total)
    } else {
        ProgressBar::hidden()
    };
    if let Ok(style) = ProgressStyle::with_template("{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} events {per_sec} eta {eta}") {
        bar.set_style(style);
    }
    let pacer = opts.rate.filter(|r| *r > 0.0).map(|r| Pacer {
        next: Mutex::new(Instant::now()),
        gap: Duration::from_secs_f64(1.0 / r),
    });
    let next_session = AtomicUsize::new(0);
    let budget = AtomicI64::new(i64::try_from(total).unwrap_or(i64::MAX));
    let start = Instant::now();
    let deadline = opts.duration.map(|d| start + d);
    let nonce = format!("{:x}{:x}", now_ms(), std::process::id());
    let merged = Mutex::new(Tally::default());
    std::thread::scope(|scope| {
        for _ in 0..opts.concurrency.max(1) {
            scope.spawn(|| {
                let mut tally = Tally::default();
                loop {
                    let i = next_session.fetch_add(1, Ordering::Relaxed);
                    let Some(session) = sessions.get(i) else { break };
                    let go_on = replay_session(session, i, opts, &nonce, &mut tally, pacer.as_ref(), &budget, deadline, &bar);
                    if !go_on {
                        break;
                    }
                }
                if let Ok(mut m) = merged.lock() {
                    m.merge(tally);
                }
            });
        }
    });
    bar.finish_and_clear();
    let mut tally = merged.into_inner().unwrap_or_default();
    tally.finish();
    let sent: u64 = tally.kinds.values().map(|k| k.sent).sum();
    RunResult {
        tally,
        elapsed: start.elapsed(),
        bounded: sent < deliverable,
    }
}

/// Sends one session's events in order; false when a bound stopped the run.
#[allow(clippy::too_many_arguments)]
fn replay_session(
    session: &SessionEvents,
    index: usize,
    opts: &RunOptions,
    nonce: &str,
    tally: &mut Tally,
    pacer: Option<&Pacer>,
    budget: &AtomicI64,
    deadline: Option<Instant>,
    bar: &ProgressBar,
) -> bool {
    for (n, e) in session.events.iter().enumerate() {
        if !opts.delivers(e) {
            continue;
        }
        if deadline.is_some_and(|d| Instant::now() >= d) || budget.fetch_sub(1, Ordering::Relaxed) <= 0 {
            return false;
        }
        if let Some(p) = pacer {
            p.wait();
        }
        let started = Instant::now();
        let answer = match &opts.mode {
            Mode::Http(t) => {
                let (id, at) = match opts.import {
                    true => (format!("import-{}-{n}", e.session_id()), e.at_ms),
                    false => (format!("replay-{nonce}-{index}-{n}"), now_ms()),
                };
                match http_call(e, opts.target, &id, at, opts.home.as_deref()) {
                    Some(call) => send_http(t, &call),
                    None => continue,
                }
            }
            Mode::Hook(h) => match e.kind.handler() {
                Some(handler) => run_hook(h, handler, &e.payload),
                None => continue,
            },
        };
        let took = started.elapsed();
        let tool = e.tool_use_id().map(|id| (id, e.tool_name().unwrap_or("")));
        tally.record(e.kind, e.session_id(), tool, &answer, took);
        if let Answer::Error(kind) = &answer {
            tracing::debug!(session_id = %e.session_id(), error = %kind, "event not acknowledged");
        }
        bar.inc(1);
    }
    true
}
