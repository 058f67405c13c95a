//! Code anchors as a storage area: the trait a backend implements once (the backend's `Storage`
//! includes it), and its SQLite implementation over anything that holds the embedded [`Store`].
//! The freshness service reaches its tables only through it.

use super::anchor_rows::{self as rows, Anchor, AnchorJob, LiveAnchor, StaleMark};
use crate::store::{Op, Store};

/// Anchors of observations and their staleness (issue 38).
pub trait Anchors: Send + Sync {
    /// Observations queued for anchors, oldest first.
    fn anchors_queued(&self, limit: usize) -> Op<'_, Vec<AnchorJob>>;
    /// Stores what was found for `done` and takes them off the queue.
    fn write_anchors(&self, done: Vec<AnchorJob>, found: Vec<Anchor>) -> Op<'_, ()>;
    /// The work trees holding anchors of `projects` (all when empty) and the HEAD last checked.
    fn anchor_roots(&self, projects: Vec<String>) -> Op<'_, Vec<(String, Option<String>)>>;
    /// The anchors in `root` of observations not yet stale.
    fn live_anchors(&self, root: String) -> Op<'_, Vec<LiveAnchor>>;
    /// Marks what a later commit changed and records `head` as checked; answers how many.
    fn mark_stale(&self, root: String, head: Option<String>, marks: Vec<StaleMark>, now: i64) -> Op<'_, usize>;
}

impl<S: AsRef<Store> + Send + Sync> Anchors for S {
    fn anchors_queued(&self, limit: usize) -> Op<'_, Vec<AnchorJob>> {
        Box::pin(self.as_ref().read(move |c| rows::queued(c, limit)))
    }
    fn write_anchors(&self, done: Vec<AnchorJob>, found: Vec<Anchor>) -> Op<'_, ()> {
        Box::pin(self.as_ref().write(move |c| rows::write_anchors(c, &done, &found)))
    }
    fn anchor_roots(&self, projects: Vec<String>) -> Op<'_, Vec<(String, Option<String>)>> {
        Box::pin(self.as_ref().read(move |c| rows::roots(c, &projects)))
    }
    fn live_anchors(&self, root: String) -> Op<'_, Vec<LiveAnchor>> {
        Box::pin(self.as_ref().read(move |c| rows::live_anchors(c, &root)))
    }
    fn mark_stale(&self, root: String, head: Option<String>, marks: Vec<StaleMark>, now: i64) -> Op<'_, usize> {
        Box::pin(
            self.as_ref()
                .write(move |c| rows::mark_stale(c, &root, head.as_deref(), &marks, now)),
        )
    }
}
