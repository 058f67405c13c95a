//! Work state as a storage area: the trait a backend implements once (the backend's `Storage`
//! includes it), and its SQLite implementation over anything that holds the embedded [`Store`].

use super::tables::{self, WorkState, WorkWrite};
use crate::store::{Op, Store};

/// Work state per project and branch (issue 39).
pub trait WorkStates: Send + Sync {
    fn write_work_state(&self, w: WorkWrite, now: i64) -> Op<'_, WorkState>;
    fn work_state(&self, project: String, branch: String) -> Op<'_, Option<WorkState>>;
    /// Every project's and branch's state, newest first (one project's when given).
    fn work_states(&self, project: Option<String>, limit: usize) -> Op<'_, Vec<WorkState>>;
}

impl<S: AsRef<Store> + Send + Sync> WorkStates for S {
    fn write_work_state(&self, w: WorkWrite, now: i64) -> Op<'_, WorkState> {
        Box::pin(self.as_ref().write(move |c| tables::write(c, &w, now)))
    }
    fn work_state(&self, project: String, branch: String) -> Op<'_, Option<WorkState>> {
        Box::pin(self.as_ref().read(move |c| Ok(tables::read(c, &project, &branch)?)))
    }
    fn work_states(&self, project: Option<String>, limit: usize) -> Op<'_, Vec<WorkState>> {
        Box::pin(self.as_ref().read(move |c| Ok(tables::list(c, project.as_deref(), limit)?)))
    }
}
