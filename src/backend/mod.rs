//! The store seam: every operation that ingest, the session actors, the observer, retrieval, the
//! viewer and the memory use-cases need from storage, as small object-safe traits, one per area
//! ([`Ingest`], [`WorkQueue`], [`Memories`], [`Recall`], [`Browse`], [`WorkStates`], [`Transfer`],
//! [`TeamRows`], [`AlertOutbox`], [`Figures`]); [`Storage`] is all of them. Callers hold an
//! `Arc<dyn Storage>` (the worker's `Services::storage`) and never see a connection; no method
//! hands out loose JSON. A second backend implements each area trait once and is chosen in the
//! worker's builder without touching retrieval, ingest or the routes; `contract_areas.rs` calls
//! every method of every area on it, and `failing.rs` is the backend whose every call fails.
//!
//! Seven areas belong to one feature each and live in its folder with their tables and use-cases
//! ([`WorkStates`] in `work_state/`, [`TeamRows`] in `team/`, [`AlertOutbox`] in `alerts/`,
//! [`FolderRows`] in `folders/`, [`GateRows`] in `readgate/`, [`NativeMemory`] in `bridge/`,
//! [`Anchors`] in `freshness/`); their
//! SQLite implementation there is written over anything that holds the embedded store
//! (`AsRef<Store>`), and re-exported here so `Storage` stays their sum.
//!
//! [`sqlite::SqliteBackend`] is the default and, for now, only backend: each method runs the
//! existing functions of `store/` and `retrieval/` on the writer thread or the read pool.
//! Maintenance of the embedded file itself (integrity, retention and `VACUUM`, backups, re-scan,
//! the claude-mem import, consolidation) is not storage: the worker reaches it through its own
//! named handle, `worker::embedded::EmbeddedFile`, and holds no `Store` in its services.
//!
//! Errors: writes answer [`StoreError`] (overloaded, read-only, closed …); the read side's reads
//! (recall, browse, folder rows, the read gate, native memory) answer [`RetrievalError`], whose
//! `Store` variant carries a store failure; a storage-layer feature's reads of its own tables
//! (work states, team rows, the alert outbox, anchors) answer [`StoreError`].

#[cfg(test)]
mod contract_areas;
#[cfg(test)]
mod contract_tests;
#[cfg(test)]
pub mod failing;
mod raw_drain;
pub mod sqlite;

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::config::ContextSettings;
use crate::modes::Mode;
use crate::retrieval::browse::{Listed, Page, SessionDetail, SessionRow, ToolUses, Usage};
use crate::retrieval::browse_rows::ProjectList;
use crate::retrieval::feed::{Cursor, FeedEvent};
use crate::retrieval::fusion::{Fusion, Near};
use crate::retrieval::overview::DatabaseFigures;
use crate::retrieval::records::Observation;
use crate::retrieval::search::{KeywordPhase, SearchRequest, SearchResult};
use crate::retrieval::semantic::SemanticRequest;
use crate::retrieval::vector_rows::VectorRows;
use crate::retrieval::{
    ContextRequest, FileContextRequest, Record, RecordId, RenderedContext, RetrievalError, Scope, TimelineRequest, TimelineResult,
};
use crate::store::StoreError;
use crate::store::batch::{BatchMeta, BatchOutput, StoredBatch, UsageDelta};
use crate::store::export_rows::{ExportedObservation, Imported};
use crate::store::forget::{ForgetCounts, ForgetSelector, RecordRef};
use crate::store::memory::{ManualMemory, SavedMemory};
use crate::store::pending::{BatchLimits, Claim, Release};
use crate::store::prompts::{PromptIn, PromptOutcome};
use crate::store::sessions::{CompleteOutcome, SessionKey};
use crate::store::stats::{ParkedSession, StoreFigures};
use crate::store::tool_events::{SummaryRequestIn, SummaryRequestOutcome, ToolEventIn, ToolEventOutcome};
use crate::vectors::nearest::VectorScope;

pub use crate::action::storage::ActionMemory;
pub use crate::alerts::storage::AlertOutbox;
pub use crate::bridge::storage::NativeMemory;
pub use crate::folders::storage::FolderRows;
pub use crate::freshness::storage::Anchors;
pub use crate::readgate::storage::GateRows;
pub use crate::store::Op;
pub use crate::team::storage::TeamRows;
pub use crate::work_state::storage::WorkStates;

/// A read (retrieval) operation in flight.
pub type Read<'a, T> = Op<'a, T, RetrievalError>;

/// Queue depth of one session: (pending rows, rows with the observer).
pub type Depth = (i64, i64);

/// The changes `PATCH /api/observation/:id` makes (None keeps a field; text already cleaned).
#[derive(Debug, Clone, Default)]
pub struct ObservationEdit {
    pub title: Option<String>,
    pub narrative: Option<String>,
    /// A JSON array of strings.
    pub facts: Option<String>,
}

/// What forgetting one record found: whether it existed, and where its vectors lived
/// (`vector_target`, None when vectors were never written).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forgotten {
    pub found: bool,
    pub vector_target: Option<String>,
}

/// `Storage` and its blanket impl from one list of areas (an area added here is in both).
macro_rules! storage_of {
    ($($area:ident),+ $(,)?) => {
        /// Everything memd asks of a storage backend (see the module header): one trait per area,
        /// each implemented once per backend; callers hold an `Arc<dyn Storage>`.
        pub trait Storage: $($area +)+ {}

        impl<T> Storage for T where T: $($area +)+ {}
    };
}

storage_of!(
    Ingest,
    WorkQueue,
    Memories,
    Recall,
    Browse,
    WorkStates,
    Transfer,
    TeamRows,
    AlertOutbox,
    FolderRows,
    GateRows,
    NativeMemory,
    Anchors,
    ActionMemory,
    Figures,
);

/// Events from the hooks: one event, one transaction, idempotent by event id.
pub trait Ingest: Send + Sync {
    fn ingest_prompt(&self, p: PromptIn) -> Op<'_, PromptOutcome>;
    fn ingest_tool_event(&self, e: ToolEventIn) -> Op<'_, ToolEventOutcome>;
    fn ingest_summary_request(&self, s: SummaryRequestIn) -> Op<'_, SummaryRequestOutcome>;
    /// Ends a session (None: `event_id` was seen before, nothing changed).
    fn complete_session(&self, key: SessionKey, reason: String, event_id: Option<String>, now: i64) -> Op<'_, Option<CompleteOutcome>>;
}

/// Pending work: claimed by the session actors, released or completed by the observer; token usage.
pub trait WorkQueue: Send + Sync {
    fn sessions_with_pending_work(&self) -> Op<'_, Vec<(i64, SessionKey)>>;
    /// Rows a dead predecessor had claimed become claimable again; answers the depth after.
    fn revert_session(&self, session_db_id: i64) -> Op<'_, Depth>;
    fn claim_batch(&self, session_db_id: i64, now: i64, limits: BatchLimits) -> Op<'_, (Claim, Depth)>;
    fn release_batch(&self, ids: Vec<i64>, how: Release, error: String, now: i64) -> Op<'_, ()>;
    /// Writes a batch's observations and summary and completes its rows, in one transaction.
    fn store_batch(&self, meta: BatchMeta, out: BatchOutput, now: i64) -> Op<'_, StoredBatch>;
    fn mark_session_failed(&self, session_db_id: i64, reason: String) -> Op<'_, ()>;
    fn complete_idle_session(&self, session_db_id: i64, now: i64) -> Op<'_, bool>;
    fn record_usage(&self, delta: UsageDelta, now: i64) -> Op<'_, ()>;
    fn tokens_today(&self, now: i64) -> Op<'_, i64>;
    /// Failed rows (of one host session, or of some ids, or all) become pending again; answers
    /// how many and the sessions to wake.
    fn requeue_failed(&self, content_session_id: Option<String>, ids: Option<Vec<i64>>) -> Op<'_, crate::store::retry::Requeued>;
}

/// Memories written by hand, edited, forgotten, quarantined and released.
pub trait Memories: Send + Sync {
    fn save_memory(&self, m: ManualMemory, now: i64) -> Op<'_, SavedMemory>;
    /// Applies an edit and queues the observation for re-embedding (false: no such observation).
    fn edit_observation(&self, id: i64, edit: ObservationEdit) -> Op<'_, bool>;
    fn forget(&self, r: RecordRef, reason: Option<String>, now: i64) -> Op<'_, Forgotten>;
    fn forget_matching(&self, sel: ForgetSelector, dry_run: bool, reason: Option<String>, now: i64) -> Op<'_, ForgetCounts>;
    /// A person trusts a quarantined observation: it is injected again (issue 36).
    fn release(&self, observation_id: i64) -> Op<'_, bool>;
    /// The newest quarantined records and how many there are.
    fn quarantined(&self, limit: usize) -> Op<'_, (Vec<crate::store::quarantine::Quarantined>, i64)>;
    /// Open contradictions (every one with `all`), newest first.
    fn contradictions(&self, all: bool, limit: i64) -> Op<'_, Vec<crate::store::supersession::Contradiction>>;
    /// Resolves contradiction `id`: the pair it was between, None when it is not open.
    fn resolve_contradiction(&self, id: i64, how: crate::store::supersession::Resolution, now: i64) -> Op<'_, Option<(i64, i64)>>;
}

/// The read side an agent meets: context, file context, search halves, timeline, records, the graph.
pub trait Recall: Send + Sync {
    fn context(&self, req: ContextRequest, cfg: ContextSettings, mode: Arc<Mode>, now: i64) -> Read<'_, RenderedContext>;
    /// The semantic-context block and the number of records in it.
    fn semantic_context(&self, req: SemanticRequest, vector: Option<Vec<Near>>, floor: f32) -> Read<'_, (String, Vec<i64>)>;
    fn file_context(&self, req: FileContextRequest, mode: Arc<Mode>, now: i64) -> Read<'_, (String, Vec<i64>)>;
    fn observations_by_file(&self, req: FileContextRequest) -> Read<'_, Vec<Observation>>;
    /// The keyword half of a search: every kind's ranked candidates.
    fn keyword_search(&self, req: SearchRequest) -> Read<'_, KeywordPhase>;
    /// The rows nearest to `query` (never an error: a failure is [`VectorRows::Failed`]).
    fn vector_candidates(&self, query: String, scope: VectorScope) -> Pin<Box<dyn Future<Output = VectorRows> + Send + '_>>;
    /// Joins the keyword and vector halves and reads the page of results.
    fn fuse(&self, req: SearchRequest, phase: KeywordPhase, vector: Option<Vec<Near>>, fusion: Fusion) -> Read<'_, SearchResult>;
    fn timeline(&self, req: TimelineRequest) -> Read<'_, Option<TimelineResult>>;
    /// An entity's neighbours in the graph, with their evidence (issue 41).
    fn related(&self, req: crate::retrieval::related::RelatedRequest) -> Read<'_, crate::retrieval::related::Related>;
    /// Observations that changed the files defining the symbols a query names (the graph).
    fn graph_expansion(&self, query: String, scope: Scope) -> Read<'_, Vec<i64>>;
    fn records(&self, ids: Vec<RecordId>, scope: Scope) -> Read<'_, HashMap<RecordId, Record>>;
    fn projects(&self, platform: Option<String>) -> Read<'_, ProjectList>;
    fn database_figures(&self) -> Read<'_, DatabaseFigures>;
}

/// The viewer: paged lists, one session in order, tool uses, usage and charts, the live feed.
pub trait Browse: Send + Sync {
    fn observations_page(&self, project: Option<String>, memory_session: Option<String>, page: Page) -> Read<'_, Listed<Observation>>;
    fn sessions_page(&self, project: Option<String>, page: Page) -> Read<'_, Listed<SessionRow>>;
    fn session_detail(&self, id: i64) -> Read<'_, SessionDetail>;
    fn tool_uses(&self, observation_id: i64) -> Read<'_, ToolUses>;
    fn usage_by_day(&self, days: i64, today: String) -> Read<'_, Usage>;
    /// What `memd stats` and the status page draw, over the `days` days up to `now`'s.
    fn stats(&self, now: i64, days: i64) -> Read<'_, crate::retrieval::stats::Stats>;
    fn feed_head(&self) -> Read<'_, Cursor>;
    fn feed_since(&self, from: Cursor) -> Read<'_, (Vec<FeedEvent>, Cursor)>;
}

/// Whole records in and out: export pages, imports, supersession links (issue 39).
pub trait Transfer: Send + Sync {
    /// Observations with id > `after`, oldest id first (of `project`, since `since`).
    fn export_page(&self, project: Option<String>, since: Option<i64>, after: i64, limit: usize) -> Read<'_, Vec<ExportedObservation>>;
    /// Imports records in one transaction: each kept under its id when free, else a new one.
    fn import_observations(&self, rows: Vec<ExportedObservation>) -> Op<'_, Vec<Result<Imported, StoreError>>>;
    /// Sets `superseded_by` links between imported records: (id, superseded by, reason).
    fn link_observations(&self, links: Vec<(i64, i64, Option<String>)>) -> Op<'_, usize>;
}

/// The store's state and figures for status.
pub trait Figures: Send + Sync {
    /// Writes are refused (a damaged file, a newer schema): no work can be claimed.
    fn read_only(&self) -> bool;
    fn store_figures(&self, now: i64) -> Op<'_, StoreFigures>;
    fn parked_sessions(&self, limit: i64) -> Op<'_, Vec<ParkedSession>>;
}
