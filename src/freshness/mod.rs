//! Memory that stays current (issue 38): code anchors taken from git (`anchor.rs`, `git.rs`; their table `anchor_rows.rs`),
//! staleness when a later commit changes an anchored file (`staleness.rs`), supersession and
//! contradictions between a new observation and live ones (the rules in
//! `pipeline/supersession.rs`, run as each record is written), and the background consolidation
//! pass with its audit log (`consolidate.rs`; its rules in `pipeline/consolidation.rs`). [`service::Freshness`] runs the
//! git side off every request path: the worker's supervised `freshness` loop anchors queued
//! observations once ingest is quiet and re-checks work trees whose HEAD moved; SessionStart
//! checks the project's work trees first, within a budget.

pub mod anchor;
pub mod anchor_rows;
pub mod consolidate;
pub mod consolidation_plan;
pub mod git;
pub mod service;
pub mod staleness;
pub mod storage;

pub use service::Freshness;

#[derive(Debug, thiserror::Error)]
pub enum FreshnessError {
    /// git failed or could not be run.
    #[error("{0}")]
    Git(String),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    /// A blocking task running git ended without an answer.
    #[error("the git task failed")]
    Task,
}
