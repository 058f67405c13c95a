//! The evidence of memd's note on a Claude Code memory file as a storage area: the trait a backend
//! implements once (the backend's `Storage` includes it), and its SQLite implementation over
//! anything that holds the embedded [`Store`].

use super::note::Evidence;
use crate::retrieval::scope::Scope;
use crate::retrieval::{RetrievalError, read_on};
use crate::store::{Op, Store};

/// What a native memory note cites (issue 39).
pub trait NoteEvidence: Send + Sync {
    /// Memories in `scope` superseded after `since`, and observations after it that changed files.
    fn memory_evidence(&self, scope: Scope, since: i64) -> Op<'_, Evidence, RetrievalError>;
}

impl<S: AsRef<Store> + Send + Sync> NoteEvidence for S {
    fn memory_evidence(&self, scope: Scope, since: i64) -> Op<'_, Evidence, RetrievalError> {
        read_on(self.as_ref(), move |c| super::evidence_rows::memory_evidence(c, &scope, since))
    }
}
