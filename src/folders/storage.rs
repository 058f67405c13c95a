//! Folder files' rows as a storage area: the trait a backend implements once (the backend's
//! `Storage` includes it), and its SQLite implementation over anything that holds the embedded
//! [`Store`].

use super::plan::FolderRow;
use crate::retrieval::{RetrievalError, read_on};
use crate::store::{Op, Store};

/// The rows folder context files are made from (issue 39).
pub trait FolderRows: Send + Sync {
    /// Injectable observations since `since` with their files and project root, newest first.
    fn folder_rows(&self, since: i64, limit: usize) -> Op<'_, Vec<FolderRow>, RetrievalError>;
}

impl<S: AsRef<Store> + Send + Sync> FolderRows for S {
    fn folder_rows(&self, since: i64, limit: usize) -> Op<'_, Vec<FolderRow>, RetrievalError> {
        read_on(self.as_ref(), move |c| super::rows::folder_rows(c, since, limit))
    }
}
