//! The action memory as a storage area: the trait a backend implements once (the backend's
//! `Storage` includes it), and its SQLite implementation over anything that holds the embedded
//! [`Store`]. The index itself is written at ingest (`rows::note_queued`, in the call's own
//! transaction).

use super::injected::{self, Source, UseItem, UseMark, UseTotals};
use super::rows::{self, CommandFailure, FileNote};
use crate::retrieval::{RetrievalError, read_on};
use crate::store::{Op, Store};

/// What the index holds about one command key or one file of a project.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ActionLookup {
    pub failure: Option<CommandFailure>,
    pub notes: Vec<FileNote>,
    /// The session was warned about this command or file already.
    pub warned: bool,
}

/// The injection item of a warning before `key`.
pub fn item_of_command(key: &str) -> String {
    format!("command:{key}")
}

/// The injection item of a warning before an edit of `file`.
pub fn item_of_file(file: &str) -> String {
    format!("file:{file}")
}

/// One injection to record.
#[derive(Debug, Clone)]
pub struct Injection {
    pub session: String,
    pub project: String,
    pub source: Source,
    /// An action warning's key (`None`: the records `ids`).
    pub item: Option<String>,
    /// The files an action warning named (the warned file, what fixed it before).
    pub files: Vec<String>,
    pub ids: Vec<i64>,
    pub now: i64,
}

/// Memory at the point of action (issue 53).
pub trait ActionMemory: Send + Sync {
    /// The open failure of `key` and the notes on `file` in `project` (either may be absent), and
    /// whether `session` was warned about them already.
    fn action_lookup(
        &self,
        project: String,
        key: Option<String>,
        file: Option<String>,
        session: String,
    ) -> Op<'_, ActionLookup, RetrievalError>;
    /// Records an injection; true when it is new to the session (an action item is claimed once).
    fn record_injection(&self, i: Injection) -> Op<'_, bool>;
    /// A session's transcript path and what memd injected into it.
    fn session_uses(&self, session: String) -> Op<'_, (Option<String>, Vec<UseItem>), RetrievalError>;
    /// Records the use check's decisions.
    fn mark_uses(&self, marks: Vec<UseMark>, now: i64) -> Op<'_, ()>;
    /// Injected, delivered and used per project and source.
    fn use_totals(&self) -> Op<'_, Vec<UseTotals>, RetrievalError>;
}

impl<S: AsRef<Store> + Send + Sync> ActionMemory for S {
    fn action_lookup(
        &self,
        project: String,
        key: Option<String>,
        file: Option<String>,
        session: String,
    ) -> Op<'_, ActionLookup, RetrievalError> {
        read_on(self.as_ref(), move |c| {
            let item = match (&key, &file) {
                (Some(k), _) => item_of_command(k),
                (None, Some(f)) => item_of_file(f),
                (None, None) => String::new(),
            };
            let warned = injected::claimed(c, &session, Source::Action, &item)?;
            if warned {
                return Ok(ActionLookup {
                    warned,
                    ..ActionLookup::default()
                });
            }
            let failure = match &key {
                Some(k) => rows::open_failure(c, &project, k)?,
                None => None,
            };
            let notes = match &file {
                Some(f) => rows::file_notes(c, &project, f)?,
                None => Vec::new(),
            };
            Ok(ActionLookup { failure, notes, warned })
        })
    }
    fn record_injection(&self, i: Injection) -> Op<'_, bool> {
        Box::pin(self.as_ref().write(move |c| {
            Ok(match &i.item {
                Some(item) => injected::claim(c, &i.session, &i.project, i.source, item, &i.files, i.now)?,
                None => injected::record(c, &i.session, &i.project, i.source, &i.ids, i.now)? > 0,
            })
        }))
    }
    fn session_uses(&self, session: String) -> Op<'_, (Option<String>, Vec<UseItem>), RetrievalError> {
        read_on(self.as_ref(), move |c| Ok(injected::session_items(c, &session)?))
    }
    fn mark_uses(&self, marks: Vec<UseMark>, now: i64) -> Op<'_, ()> {
        Box::pin(self.as_ref().write(move |c| Ok(injected::mark(c, &marks, now)?)))
    }
    fn use_totals(&self) -> Op<'_, Vec<UseTotals>, RetrievalError> {
        read_on(self.as_ref(), move |c| Ok(injected::totals(c)?))
    }
}
