//! Claude Code's own memory as a storage area — the evidence of memd's note on a memory file, and
//! the Markdown notes imported from configured roots: the trait a backend
//! implements once (the backend's `Storage` includes it), and its SQLite implementation over
//! anything that holds the embedded [`Store`].

use super::note::Evidence;
use super::note_rows::{self, NoteIn, NoteOutcome};
use crate::retrieval::scope::Scope;
use crate::retrieval::{RetrievalError, read_on};
use crate::store::{Op, Store};

/// What a native memory note cites, and the notes imported (issue 39).
pub trait NativeMemory: Send + Sync {
    /// Memories in `scope` superseded after `since`, and observations after it that changed files.
    fn memory_evidence(&self, scope: Scope, since: i64) -> Op<'_, Evidence, RetrievalError>;
    /// Imports one Markdown note (again when it changed).
    fn import_note(&self, n: NoteIn, now: i64) -> Op<'_, NoteOutcome>;
}

impl<S: AsRef<Store> + Send + Sync> NativeMemory for S {
    fn memory_evidence(&self, scope: Scope, since: i64) -> Op<'_, Evidence, RetrievalError> {
        read_on(self.as_ref(), move |c| super::evidence_rows::memory_evidence(c, &scope, since))
    }
    fn import_note(&self, n: NoteIn, now: i64) -> Op<'_, NoteOutcome> {
        Box::pin(self.as_ref().write(move |c| note_rows::import_note(c, &n, now)))
    }
}
