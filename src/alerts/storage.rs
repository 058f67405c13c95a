//! The alert outbox as a storage area: the trait a backend implements once
//! (the backend's `Storage` includes it), and its SQLite implementation over anything that
//! holds the embedded [`Store`] (the default backend does).

use super::outbox::{self, AlertFigures, Delivery, DueAlert};
use crate::store::{Op, Store};

/// The alert outbox (issue 39).
pub trait AlertOutbox: Send + Sync {
    /// Queues new observations of `types` (the first call only sets the cursor).
    fn alerts_enqueue(&self, types: Vec<String>, now: i64) -> Op<'_, usize>;
    fn alerts_due(&self, now: i64, limit: usize) -> Op<'_, Vec<DueAlert>>;
    fn alert_delivered(&self, observation_id: i64, d: Delivery, now: i64) -> Op<'_, ()>;
    fn alert_figures(&self) -> Op<'_, AlertFigures>;
}

impl<S: AsRef<Store> + Send + Sync> AlertOutbox for S {
    fn alerts_enqueue(&self, types: Vec<String>, now: i64) -> Op<'_, usize> {
        Box::pin(self.as_ref().write(move |c| outbox::enqueue(c, &types, now)))
    }
    fn alerts_due(&self, now: i64, limit: usize) -> Op<'_, Vec<DueAlert>> {
        Box::pin(self.as_ref().read(move |c| Ok(outbox::due(c, now, limit)?)))
    }
    fn alert_delivered(&self, observation_id: i64, d: Delivery, now: i64) -> Op<'_, ()> {
        Box::pin(self.as_ref().write(move |c| outbox::record(c, observation_id, &d, now)))
    }
    fn alert_figures(&self) -> Op<'_, AlertFigures> {
        Box::pin(self.as_ref().read(|c| Ok(outbox::figures(c)?)))
    }
}
