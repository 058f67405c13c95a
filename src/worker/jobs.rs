//! Background work declared once (docs/decisions/architecture.md "Background work: a job, a loop
//! or an actor"). Every periodic job is one [`Job`] row: its name (its line in `memd status`), when
//! its first pass runs, how long it waits after a pass (read from the settings each time, so a
//! reload applies at the next pass; None: off for now), the [`Backoff`] after a failed pass, and
//! the pass itself. [`drive`] is the one loop that runs a row, under [`super::tasks::supervise`]
//! (a pass that panics restarts the loop); [`JobBoard`] keeps what each job did last for status.
//! The worker's rows are [`super::job_table::JOBS`]; adding a job is a pass in its feature and a
//! row there.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::actors::backoff::Backoff;

/// How long a job that is off waits before asking its settings again.
pub const OFF_RECHECK: Duration = Duration::from_secs(30);

/// One pass's future.
pub type PassFuture = Pin<Box<dyn Future<Output = Result<Done, JobError>> + Send>>;

/// How a pass that did not fail ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Done {
    /// Its work is done; what it did, in a few words ("3 rows deleted").
    Did(String),
    /// It stood aside (ingest is busy): the next try comes after the backoff's first step.
    Busy,
}

/// A failed pass: what went wrong, as its area said it.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct JobError(pub String);

impl JobError {
    pub fn of(e: impl std::fmt::Display) -> Self {
        Self(e.to_string())
    }
}

/// One periodic job over a context `C` (the worker's state in production).
pub struct Job<C> {
    pub name: &'static str,
    /// The wait before the first pass; None: the first wait is `every`'s.
    pub first: Option<Duration>,
    /// The wait after a pass, asked after each one; None: off for now (asked again after
    /// [`OFF_RECHECK`]).
    pub every: fn(&C) -> Option<Duration>,
    /// The wait after the n-th failed pass in a row; after a busy pass, its first step.
    pub backoff: Backoff,
    pub pass: fn(C) -> PassFuture,
}

/// What one job did last (`GET /api/status` → `jobs`, a line each in `memd status`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct JobStatus {
    /// Whether it is on now (its setting).
    pub on: bool,
    /// Its wait between passes now, in ms (0 while off).
    pub every_ms: u64,
    /// Passes that ended without failing.
    pub passes: u64,
    /// Failed passes in a row now (0 after one succeeds).
    pub failing: u32,
    /// Epoch ms of its last pass that ended without failing.
    pub last_ok_at: Option<i64>,
    /// What that pass did.
    pub last_did: Option<String>,
    /// The last failure, and when.
    pub last_error: Option<String>,
    pub last_error_at: Option<i64>,
}

/// Every job's [`JobStatus`], by name.
#[derive(Debug, Default)]
pub struct JobBoard(Mutex<BTreeMap<&'static str, JobStatus>>);

impl JobBoard {
    pub fn snapshot(&self) -> BTreeMap<String, JobStatus> {
        let jobs = self.0.lock().unwrap_or_else(|p| p.into_inner());
        jobs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
    }

    fn update(&self, name: &'static str, f: impl FnOnce(&mut JobStatus)) {
        let mut jobs = self.0.lock().unwrap_or_else(|p| p.into_inner());
        f(jobs.entry(name).or_default());
    }

    /// A job's schedule now: on (with its wait) or off.
    pub fn schedule(&self, name: &'static str, every: Option<Duration>) {
        self.update(name, |s| {
            s.on = every.is_some();
            s.every_ms = every.map_or(0, |d| d.as_millis() as u64);
        });
    }

    /// A pass ended: the wait before the next one (`every` when it worked, the backoff's step
    /// when it failed, its first step when the pass stood aside).
    pub fn settle(&self, name: &'static str, r: &Result<Done, JobError>, backoff: &Backoff, every: Duration, now: i64) -> Duration {
        let mut wait = every;
        self.update(name, |s| match r {
            Ok(Done::Did(what)) => {
                (s.passes, s.failing) = (s.passes + 1, 0);
                (s.last_ok_at, s.last_did) = (Some(now), Some(what.clone()));
            }
            Ok(Done::Busy) => wait = backoff.first,
            Err(e) => {
                wait = backoff.delay(s.failing);
                s.failing = s.failing.saturating_add(1);
                (s.last_error, s.last_error_at) = (Some(e.0.clone()), Some(now));
            }
        });
        wait
    }
}

/// Runs `job` over `ctx` until `stop`: the first wait, then a pass and the wait it earned,
/// recorded on `board`.
pub async fn drive<C: Clone + Send + 'static>(job: &'static Job<C>, ctx: C, board: Arc<JobBoard>, stop: CancellationToken) {
    let stop = &stop;
    let first = job.first.or_else(|| (job.every)(&ctx)).unwrap_or(OFF_RECHECK);
    board.schedule(job.name, (job.every)(&ctx));
    if !pause(first, stop).await {
        return;
    }
    loop {
        let every = (job.every)(&ctx);
        board.schedule(job.name, every);
        let Some(every) = every else {
            if !pause(OFF_RECHECK, stop).await {
                return;
            }
            continue;
        };
        let r = (job.pass)(ctx.clone()).await;
        if let Err(e) = &r {
            tracing::warn!(job = job.name, error = %e, "background job failed; retrying after a backoff");
        }
        let wait = board.settle(job.name, &r, &job.backoff, every, crate::clock::now_ms());
        if !pause(wait, stop).await {
            return;
        }
    }
}

/// Sleeps `d`; false when `stop` came first.
async fn pause(d: Duration, stop: &CancellationToken) -> bool {
    tokio::select! {
        _ = tokio::time::sleep(d) => true,
        _ = stop.cancelled() => false,
    }
}

#[cfg(test)]
#[path = "jobs_tests.rs"]
mod tests;
