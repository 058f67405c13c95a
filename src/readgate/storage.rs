//! The read gate's evidence as a storage area: the trait a backend implements once (the backend's
//! `Storage` includes it), and its SQLite implementation over anything that holds the embedded
//! [`Store`].

use crate::retrieval::scope::Scope;
use crate::retrieval::{RetrievalError, read_on};
use crate::store::{Op, Store};

/// What the read gate answers from (issue 39).
pub trait GateRows: Send + Sync {
    /// The newest stored full text of one of `paths` in `scope`, and when it was recorded.
    fn stored_text(&self, paths: Vec<String>, scope: Scope) -> Op<'_, Option<(String, i64)>, RetrievalError>;
}

impl<S: AsRef<Store> + Send + Sync> GateRows for S {
    fn stored_text(&self, paths: Vec<String>, scope: Scope) -> Op<'_, Option<(String, i64)>, RetrievalError> {
        read_on(self.as_ref(), move |c| super::rows::stored_text(c, &paths, &scope))
    }
}
