//! Team memory's local side as a storage area: the trait a backend implements once
//! (the backend's `Storage` includes it), and its SQLite implementation over anything that
//! holds the embedded [`Store`] (the default backend does). The tables are `local/`.

use std::sync::Arc;

use super::local::{self, edits, rows, work};
use crate::pipeline::redact::Redactor;
use crate::store::{Op, Store};

/// Team memory's local side (issue 40): what goes to the server, what came from it, forgets to send.
pub trait TeamRows: Send + Sync {
    /// Not pushed yet, as pushed (a read: the writer is free while the server is slow).
    fn team_outgoing(&self, projects: Vec<String>, redactor: Arc<Redactor>, install: String, limit: usize) -> Op<'_, Vec<rows::Outgoing>>;
    fn team_mark_pushed(&self, rows: Vec<(String, rows::LocalRef)>, origin: String, now: i64) -> Op<'_, ()>;
    /// Edits of pushed observations not sent yet (a read).
    fn team_edits_due(&self, redactor: Arc<Redactor>, limit: usize) -> Op<'_, Vec<edits::Edit>>;
    fn team_edit_sent(&self, gid: String, count: i64) -> Op<'_, ()>;
    fn team_tombstones_due(&self, limit: usize) -> Op<'_, Vec<String>>;
    fn team_tombstone_done(&self, gid: String, refused: bool) -> Op<'_, ()>;
    /// This data directory's install id and the pull cursor.
    fn team_pull_state(&self) -> Op<'_, (String, i64)>;
    fn team_apply_pulled(&self, rows: Vec<rows::Incoming>, install: String, projects: Vec<String>, now: i64) -> Op<'_, local::Applied>;
    fn team_figures(&self, projects: Vec<String>) -> Op<'_, local::TeamFigures>;
    /// Teammates' work states as last pulled, newest first.
    fn team_work(&self, limit: usize) -> Op<'_, Vec<work::TeamWork>>;
}

impl<S: AsRef<Store> + Send + Sync> TeamRows for S {
    fn team_outgoing(&self, projects: Vec<String>, redactor: Arc<Redactor>, install: String, limit: usize) -> Op<'_, Vec<rows::Outgoing>> {
        Box::pin(
            self.as_ref()
                .read(move |c| local::outgoing(c, &projects, &redactor, &install, limit)),
        )
    }
    fn team_mark_pushed(&self, rows: Vec<(String, rows::LocalRef)>, origin: String, now: i64) -> Op<'_, ()> {
        Box::pin(self.as_ref().write(move |c| local::mark_pushed(c, &rows, &origin, now)))
    }
    fn team_edits_due(&self, redactor: Arc<Redactor>, limit: usize) -> Op<'_, Vec<edits::Edit>> {
        Box::pin(self.as_ref().read(move |c| edits::edits_due(c, &redactor, limit)))
    }
    fn team_edit_sent(&self, gid: String, count: i64) -> Op<'_, ()> {
        Box::pin(self.as_ref().write(move |c| edits::edit_sent(c, &gid, count)))
    }
    fn team_tombstones_due(&self, limit: usize) -> Op<'_, Vec<String>> {
        Box::pin(self.as_ref().write(move |c| local::tombstones_due(c, limit)))
    }
    fn team_tombstone_done(&self, gid: String, refused: bool) -> Op<'_, ()> {
        Box::pin(self.as_ref().write(move |c| local::tombstone_done(c, &gid, refused)))
    }
    fn team_pull_state(&self) -> Op<'_, (String, i64)> {
        Box::pin(self.as_ref().write(|c| Ok((local::install_id(c)?, local::pull_cursor(c)?))))
    }
    fn team_apply_pulled(&self, rows: Vec<rows::Incoming>, install: String, projects: Vec<String>, now: i64) -> Op<'_, local::Applied> {
        Box::pin(
            self.as_ref()
                .write(move |c| local::apply_pulled(c, &rows, &install, &projects, now)),
        )
    }
    fn team_work(&self, limit: usize) -> Op<'_, Vec<work::TeamWork>> {
        Box::pin(self.as_ref().read(move |c| work::list(c, limit)))
    }
    fn team_figures(&self, projects: Vec<String>) -> Op<'_, local::TeamFigures> {
        Box::pin(self.as_ref().read(move |c| local::figures(c, &projects)))
    }
}
