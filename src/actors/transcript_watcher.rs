//! TranscriptWatcher — the transcript watcher inside the worker (`MEMD_WATCH=true`; off by
//! default), for hosts or setups without hooks (docs/spec/hosts.md §4).
//!
//! Owns the per-file marks of `<data>/watch-state-worker.json` ([`crate::watch::WatchState`]).
//! Every `MEMD_WATCH_INTERVAL_MS` it runs one pass of [`crate::watch::scan`] on a blocking thread
//! (the files are read and converted there); each new event goes through the ingest commands
//! in-process ([`IngestService`], the same validation, privacy and dedupe as the HTTP routes and
//! the spool), so a tool use both the hook and the watcher deliver is stored once. What was
//! written before the watcher was first enabled is history and is not delivered.
//!
//! Supervised by RootSupervisor. Failure policy: the marks are saved after every file, so a
//! restarted watcher (or a worker killed with SIGKILL) loads them and offers again only what was
//! not acknowledged; the worker's `eventId` dedupe makes that exactly-once. A pass still running
//! when the actor restarts keeps the shared `busy` flag, so two passes never overlap.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use serde::{Deserialize, Serialize};

use crate::clock::{Clock, iso};
use crate::ingest::{CompleteOutcome, IngestError, IngestService, InitOutcome, ObservationOutcome, SummarizeOutcome, body_platform};
use crate::protocol::IngestRoute;
use crate::replay::bodies::Call;
use crate::watch::{Answer, Pass, ScanRules, WatchError, WatchState, scan};

pub struct TranscriptWatcher;

#[derive(Clone)]
pub struct WatcherArgs {
    pub ingest: Arc<IngestService>,
    pub roots: Vec<PathBuf>,
    pub state_path: PathBuf,
    pub interval: Duration,
    pub idle: Duration,
    /// A pass is running (shared by every instance the root starts, so it outlives a restart).
    pub busy: Arc<AtomicBool>,
    pub clock: Clock,
}

pub enum WatcherMsg {
    /// Start a pass unless one is running.
    Tick,
    /// A pass ended: the marks it updated, and what it did or why it stopped.
    PassDone(Box<WatchState>, Result<Pass, WatchError>),
    /// The watcher part of `GET /api/status`.
    Status(RpcReplyPort<WatcherStatus>),
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct WatcherStatus {
    pub roots: Vec<String>,
    /// Files with a mark (delivered, or history).
    pub files_tracked: usize,
    /// Records written from this time on are delivered (when the watcher was first enabled).
    pub since: Option<String>,
    pub passes: u64,
    pub delivered: u64,
    pub duplicates: u64,
    pub skipped: u64,
    pub last_pass_at: Option<String>,
    /// Why the last pass stopped early (None after a complete pass).
    pub last_error: Option<String>,
}

pub struct WatcherState {
    ingest: Arc<IngestService>,
    passes: PassBook,
    clock: Clock,
}

/// The watcher's bookkeeping: where it looks, its marks between passes, its counters.
pub struct PassBook {
    roots: Vec<PathBuf>,
    state_path: PathBuf,
    idle: Duration,
    busy: Arc<AtomicBool>,
    /// None while a pass holds them.
    marks: Option<WatchState>,
    status: WatcherStatus,
}

impl PassBook {
    /// The saved marks, with the history line drawn at `now` the first time.
    pub fn new(roots: Vec<PathBuf>, state_path: PathBuf, idle: Duration, busy: Arc<AtomicBool>, now: i64) -> Self {
        let mut marks = WatchState::load(&state_path);
        if marks.since_ms.is_none() {
            marks.since_ms = Some(now);
            if let Err(e) = marks.save(&state_path) {
                tracing::warn!(error = %e, "watcher state not saved; it is retried after the first file");
            }
        }
        let status = WatcherStatus {
            roots: roots.iter().map(|r| r.display().to_string()).collect(),
            files_tracked: marks.files.len(),
            since: marks.since_ms.map(iso),
            ..WatcherStatus::default()
        };
        Self {
            roots,
            state_path,
            idle,
            busy,
            marks: Some(marks),
            status,
        }
    }

    /// What a pass starting at `now` needs, or None when one is running.
    pub fn begin_pass(&mut self, now: i64) -> Option<PassStart> {
        if self.busy.swap(true, Ordering::AcqRel) {
            return None;
        }
        Some(PassStart {
            // None when a pass ended and its marks are not back yet, or it was an earlier
            // instance's: the pass reads them from the file (saved after every file).
            marks: self.marks.take(),
            idle: self.idle,
            now,
        })
    }

    /// A pass's marks and outcome are back (its thread frees the `busy` flag itself).
    pub fn end_pass(&mut self, marks: WatchState, outcome: Result<Pass, WatchError>, now: i64) {
        self.status.files_tracked = marks.files.len();
        self.marks = Some(marks);
        self.status.passes += 1;
        self.status.last_pass_at = Some(iso(now));
        match outcome {
            Ok(p) => {
                self.status.delivered += p.delivered as u64;
                self.status.duplicates += p.duplicates as u64;
                self.status.skipped += p.skipped as u64;
                self.status.last_error = None;
            }
            Err(why) => self.status.last_error = Some(why.to_string()),
        }
    }
}

/// The start of a pass: its marks, when the book holds them, and its clock.
pub struct PassStart {
    marks: Option<WatchState>,
    idle: Duration,
    now: i64,
}

impl PassStart {
    /// The pass's marks and rules, reading the marks from `path` when the book had none (file I/O:
    /// called on the pass's blocking thread, never in the handler).
    pub fn resolve(self, path: &std::path::Path) -> (WatchState, ScanRules) {
        let marks = self.marks.unwrap_or_else(|| WatchState::load(path));
        let rules = ScanRules {
            idle: self.idle,
            now_ms: self.now,
            history_before: marks.since_ms,
        };
        (marks, rules)
    }
}

/// One event through the ingest command of its route, in the terms a pass counts.
async fn deliver(ingest: &IngestService, call: &Call) -> Answer {
    let (body, platform) = (call.body.clone(), body_platform(&call.body));
    let answer = match call.route {
        IngestRoute::Init => ingest.init(body, platform).await.map(|o| match o {
            InitOutcome::Duplicate { .. } => Answer::Duplicate,
            InitOutcome::Skipped(s) => Answer::Skipped(s.reason().into()),
            InitOutcome::Stored { .. } | InitOutcome::Private { .. } => Answer::Acked,
        }),
        IngestRoute::Observations => ingest.observations(body, platform).await.map(|o| match o {
            ObservationOutcome::Duplicate => Answer::Duplicate,
            ObservationOutcome::Skipped(s) => Answer::Skipped(s.reason().into()),
            ObservationOutcome::Queued { .. } | ObservationOutcome::Private => Answer::Acked,
        }),
        IngestRoute::Summarize => ingest.summarize(body, platform).await.map(|o| match o {
            SummarizeOutcome::Duplicate => Answer::Duplicate,
            SummarizeOutcome::Skipped(s) => Answer::Skipped(s.reason().into()),
            SummarizeOutcome::Queued { .. } | SummarizeOutcome::Private => Answer::Acked,
        }),
        IngestRoute::Complete => ingest.complete(body, platform).await.map(|o| match o {
            CompleteOutcome::Duplicate => Answer::Duplicate,
            CompleteOutcome::UnknownSession => Answer::Skipped("unknown_session".into()),
            CompleteOutcome::Completing { .. } | CompleteOutcome::Completed => Answer::Acked,
        }),
    };
    match answer {
        Ok(a) => a,
        // The same record will never be accepted: count it and go on, or it blocks its file.
        Err(IngestError::Invalid(why)) => Answer::Skipped(format!("invalid: {why}")),
        Err(e) => Answer::Error(e.to_string()),
    }
}

impl Actor for TranscriptWatcher {
    type Msg = WatcherMsg;
    type State = WatcherState;
    type Arguments = WatcherArgs;

    async fn pre_start(&self, myself: ActorRef<WatcherMsg>, args: WatcherArgs) -> Result<WatcherState, ActorProcessingErr> {
        myself.send_interval(args.interval, || WatcherMsg::Tick);
        let _ = myself.cast(WatcherMsg::Tick);
        // Reading the marks is file I/O: off the async workers.
        let (ingest, clock) = (args.ingest.clone(), args.clock.clone());
        let now = clock.now();
        let passes = tokio::task::spawn_blocking(move || PassBook::new(args.roots, args.state_path, args.idle, args.busy, now))
            .await
            .map_err(|e| ActorProcessingErr::from(format!("watcher state: {e}")))?;
        Ok(WatcherState { ingest, passes, clock })
    }

    async fn handle(&self, myself: ActorRef<WatcherMsg>, msg: WatcherMsg, state: &mut WatcherState) -> Result<(), ActorProcessingErr> {
        match msg {
            WatcherMsg::Tick => {
                let book = &mut state.passes;
                let Some(start) = book.begin_pass(state.clock.now()) else {
                    return Ok(());
                };
                let (roots, path, busy) = (book.roots.clone(), book.state_path.clone(), book.busy.clone());
                let ingest = state.ingest.clone();
                let rt = tokio::runtime::Handle::current();
                tokio::task::spawn_blocking(move || {
                    let (mut marks, rules) = start.resolve(&path);
                    let mut send = |call: &Call| rt.block_on(deliver(&ingest, call));
                    let outcome = scan(&roots, &mut marks, &path, rules, &mut send);
                    if let Err(why) = &outcome {
                        tracing::warn!(error = %why, "watcher pass stopped; retrying on the next one");
                    }
                    // The marks go back first, then the flag is freed: an actor that stopped
                    // meanwhile may accept the message and never handle it, so the flag cannot
                    // wait for `end_pass` (its successor reads the marks from the file).
                    let _ = myself.cast(WatcherMsg::PassDone(Box::new(marks), outcome));
                    busy.store(false, Ordering::Release);
                });
            }
            WatcherMsg::PassDone(marks, outcome) => state.passes.end_pass(*marks, outcome, state.clock.now()),
            WatcherMsg::Status(reply) => {
                let _ = reply.send(state.passes.status.clone());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(dir: &std::path::Path) -> PassBook {
        let path = dir.join("watch-state-worker.json");
        PassBook::new(vec![dir.join("projects")], path, Duration::from_secs(60), Arc::default(), 1_000)
    }

    #[test]
    fn the_history_line_is_drawn_once_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let s = state(dir.path());
        assert_eq!(s.marks.as_ref().unwrap().since_ms, Some(1_000));
        drop(s);
        let again = state(dir.path());
        assert_eq!(
            again.marks.as_ref().unwrap().since_ms,
            Some(1_000),
            "a restart keeps the first line"
        );
        assert_eq!(again.status.since.as_deref(), Some(iso(1_000).as_str()));
    }

    #[test]
    fn passes_never_overlap_and_count_what_they_did() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = state(dir.path());
        let path = s.state_path.clone();
        let (marks, rules) = s.begin_pass(5_000).expect("the first pass starts").resolve(&path);
        assert_eq!(rules.history_before, Some(1_000));
        assert!(s.begin_pass(6_000).is_none(), "a second pass waits for the first");
        let pass = Pass {
            files_read: 1,
            delivered: 3,
            duplicates: 1,
            skipped: 0,
        };
        s.end_pass(marks, Ok(pass), 7_000);
        assert_eq!((s.status.passes, s.status.delivered, s.status.duplicates), (1, 3, 1));
        assert!(s.begin_pass(7_500).is_none(), "the pass's thread has not freed the flag yet");
        s.busy.store(false, Ordering::Release);
        let (marks, _) = s.begin_pass(8_000).expect("free again").resolve(&path);
        s.end_pass(marks, Err(WatchError::Worker("store overloaded".into())), 9_000);
        let said = s.status.last_error.as_deref().unwrap_or_default();
        assert!(said.contains("store overloaded"), "{said}");
        assert_eq!(s.status.delivered, 3);
    }

    #[test]
    fn a_pass_of_a_dead_instance_frees_the_flag_and_the_marks_are_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = state(dir.path());
        let path = s.state_path.clone();
        let (_lost, _) = s.begin_pass(5_000).unwrap().resolve(&path);
        // The pass's actor died; its thread cleared the flag without handing the marks back.
        s.busy.store(false, Ordering::Release);
        let start = s.begin_pass(6_000).expect("the next tick starts a pass");
        assert!(start.marks.is_none(), "the handler reads no file");
        let (marks, rules) = start.resolve(&path);
        assert_eq!(
            (marks.since_ms, rules.history_before),
            (Some(1_000), Some(1_000)),
            "read from the file"
        );
    }
}
