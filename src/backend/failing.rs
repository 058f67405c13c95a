//! A backend whose every operation fails as a store that cannot commit does: the failing half of
//! the seam's fault tests. Whatever a caller does with it must end in a clear error (HTTP 503, an
//! MCP error text, a batch kept for retry), never a panic or a lost acknowledgement.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use super::*;
use crate::retrieval::vector_rows::VectorRows;

/// Fails every call with [`StoreError::Unavailable`] (reads: [`RetrievalError::Store`] of it).
#[derive(Debug, Clone, Default)]
pub struct Failing;

/// Why every call failed.
pub const REASON: &str = "disk I/O error (injected)";

fn op<'a, T: Send + 'a>() -> Op<'a, T> {
    Box::pin(async { Err(StoreError::Unavailable(REASON.into())) })
}

fn read<'a, T: Send + 'a>() -> Read<'a, T> {
    Box::pin(async { Err(RetrievalError::Store(StoreError::Unavailable(REASON.into()))) })
}

impl Ingest for Failing {
    fn ingest_prompt(&self, _p: PromptIn) -> Op<'_, PromptOutcome> {
        op()
    }
    fn ingest_tool_event(&self, _e: ToolEventIn) -> Op<'_, ToolEventOutcome> {
        op()
    }
    fn ingest_summary_request(&self, _s: SummaryRequestIn) -> Op<'_, SummaryRequestOutcome> {
        op()
    }
    fn complete_session(&self, _key: SessionKey, _reason: String, _event_id: Option<String>, _now: i64) -> Op<'_, Option<CompleteOutcome>> {
        op()
    }
}

impl WorkQueue for Failing {
    fn sessions_with_pending_work(&self) -> Op<'_, Vec<(i64, SessionKey)>> {
        op()
    }
    fn revert_session(&self, _session_db_id: i64) -> Op<'_, Depth> {
        op()
    }
    fn claim_batch(&self, _session_db_id: i64, _now: i64, _limits: BatchLimits) -> Op<'_, (Claim, Depth)> {
        op()
    }
    fn release_batch(&self, _ids: Vec<i64>, _how: Release, _error: String, _now: i64) -> Op<'_, ()> {
        op()
    }
    fn store_batch(&self, _meta: BatchMeta, _out: BatchOutput, _now: i64) -> Op<'_, StoredBatch> {
        op()
    }
    fn mark_session_failed(&self, _session_db_id: i64, _reason: String) -> Op<'_, ()> {
        op()
    }
    fn complete_idle_session(&self, _session_db_id: i64, _now: i64) -> Op<'_, bool> {
        op()
    }
    fn record_usage(&self, _delta: UsageDelta, _now: i64) -> Op<'_, ()> {
        op()
    }
    fn tokens_today(&self, _now: i64) -> Op<'_, i64> {
        op()
    }
    fn requeue_failed(&self, _content_session_id: Option<String>, _ids: Option<Vec<i64>>) -> Op<'_, crate::store::retry::Requeued> {
        op()
    }
}

impl Memories for Failing {
    fn save_memory(&self, _m: ManualMemory, _now: i64) -> Op<'_, SavedMemory> {
        op()
    }
    fn edit_observation(&self, _id: i64, _edit: ObservationEdit) -> Op<'_, bool> {
        op()
    }
    fn forget(&self, _r: RecordRef, _reason: Option<String>, _now: i64) -> Op<'_, Forgotten> {
        op()
    }
    fn forget_matching(&self, _sel: ForgetSelector, _dry_run: bool, _reason: Option<String>, _now: i64) -> Op<'_, ForgetCounts> {
        op()
    }
    fn release(&self, _observation_id: i64) -> Op<'_, bool> {
        op()
    }
    fn quarantined(&self, _limit: usize) -> Op<'_, (Vec<crate::store::quarantine::Quarantined>, i64)> {
        op()
    }
    fn contradictions(&self, _all: bool, _limit: i64) -> Op<'_, Vec<crate::store::supersession::Contradiction>> {
        op()
    }
    fn resolve_contradiction(&self, _id: i64, _how: crate::store::supersession::Resolution, _now: i64) -> Op<'_, Option<(i64, i64)>> {
        op()
    }
}

impl Recall for Failing {
    fn context(&self, _req: ContextRequest, _cfg: ContextSettings, _mode: Arc<Mode>, _now: i64) -> Read<'_, RenderedContext> {
        read()
    }
    fn semantic_context(&self, _req: SemanticRequest, _vector: Option<Vec<Near>>, _floor: f32) -> Read<'_, (String, Vec<i64>)> {
        read()
    }
    fn file_context(&self, _req: FileContextRequest, _mode: Arc<Mode>, _now: i64) -> Read<'_, (String, Vec<i64>)> {
        read()
    }
    fn observations_by_file(&self, _req: FileContextRequest) -> Read<'_, Vec<Observation>> {
        read()
    }
    fn keyword_search(&self, _req: SearchRequest) -> Read<'_, KeywordPhase> {
        read()
    }
    fn vector_candidates(&self, _query: String, _scope: VectorScope) -> Pin<Box<dyn Future<Output = VectorRows> + Send + '_>> {
        Box::pin(async { VectorRows::Failed(REASON.into()) })
    }
    fn fuse(&self, _req: SearchRequest, _phase: KeywordPhase, _vector: Option<Vec<Near>>, _fusion: Fusion) -> Read<'_, SearchResult> {
        read()
    }
    fn timeline(&self, _req: TimelineRequest) -> Read<'_, Option<TimelineResult>> {
        read()
    }
    fn related(&self, _req: crate::retrieval::related::RelatedRequest) -> Read<'_, crate::retrieval::related::Related> {
        read()
    }
    fn graph_expansion(&self, _query: String, _scope: Scope) -> Read<'_, Vec<i64>> {
        read()
    }
    fn records(&self, _ids: Vec<RecordId>, _scope: Scope) -> Read<'_, HashMap<RecordId, Record>> {
        read()
    }
    fn projects(&self, _platform: Option<String>) -> Read<'_, ProjectList> {
        read()
    }
    fn database_figures(&self) -> Read<'_, DatabaseFigures> {
        read()
    }
}

impl Browse for Failing {
    fn observations_page(&self, _project: Option<String>, _memory_session: Option<String>, _page: Page) -> Read<'_, Listed<Observation>> {
        read()
    }
    fn sessions_page(&self, _project: Option<String>, _page: Page) -> Read<'_, Listed<SessionRow>> {
        read()
    }
    fn session_detail(&self, _id: i64) -> Read<'_, SessionDetail> {
        read()
    }
    fn tool_uses(&self, _observation_id: i64) -> Read<'_, ToolUses> {
        read()
    }
    fn usage_by_day(&self, _days: i64, _today: String) -> Read<'_, Usage> {
        read()
    }
    fn stats(&self, _now: i64, _days: i64) -> Read<'_, crate::retrieval::stats::Stats> {
        read()
    }
    fn feed_head(&self) -> Read<'_, Cursor> {
        read()
    }
    fn feed_since(&self, _from: Cursor) -> Read<'_, (Vec<FeedEvent>, Cursor)> {
        read()
    }
}

impl WorkStates for Failing {
    fn write_work_state(&self, _w: crate::work_state::tables::WorkWrite, _now: i64) -> Op<'_, crate::work_state::tables::WorkState> {
        op()
    }
    fn work_state(&self, _project: String, _branch: String) -> Op<'_, Option<crate::work_state::tables::WorkState>> {
        op()
    }
    fn work_states(&self, _project: Option<String>, _limit: usize) -> Op<'_, Vec<crate::work_state::tables::WorkState>> {
        op()
    }
}

impl Transfer for Failing {
    fn export_page(&self, _project: Option<String>, _since: Option<i64>, _after: i64, _limit: usize) -> Read<'_, Vec<ExportedObservation>> {
        read()
    }
    fn import_observations(&self, _rows: Vec<ExportedObservation>) -> Op<'_, Vec<Result<Imported, StoreError>>> {
        op()
    }
    fn link_observations(&self, _links: Vec<(i64, i64, Option<String>)>) -> Op<'_, usize> {
        op()
    }
}

impl TeamRows for Failing {
    fn team_outgoing(
        &self,
        _projects: Vec<String>,
        _redactor: Arc<crate::pipeline::redact::Redactor>,
        _install: String,
        _limit: usize,
    ) -> Op<'_, Vec<crate::team::local::rows::Outgoing>> {
        op()
    }
    fn team_mark_pushed(&self, _rows: Vec<(String, crate::team::local::rows::LocalRef)>, _origin: String, _now: i64) -> Op<'_, ()> {
        op()
    }
    fn team_edits_due(
        &self,
        _redactor: Arc<crate::pipeline::redact::Redactor>,
        _limit: usize,
    ) -> Op<'_, Vec<crate::team::local::edits::Edit>> {
        op()
    }
    fn team_edit_sent(&self, _gid: String, _count: i64) -> Op<'_, ()> {
        op()
    }
    fn team_tombstones_due(&self, _limit: usize) -> Op<'_, Vec<String>> {
        op()
    }
    fn team_tombstone_done(&self, _gid: String, _refused: bool) -> Op<'_, ()> {
        op()
    }
    fn team_pull_state(&self) -> Op<'_, (String, i64)> {
        op()
    }
    fn team_apply_pulled(
        &self,
        _rows: Vec<crate::team::local::rows::Incoming>,
        _install: String,
        _projects: Vec<String>,
        _now: i64,
    ) -> Op<'_, crate::team::local::Applied> {
        op()
    }
    fn team_figures(&self, _projects: Vec<String>) -> Op<'_, crate::team::local::TeamFigures> {
        op()
    }
    fn team_work(&self, _limit: usize) -> Op<'_, Vec<crate::team::local::work::TeamWork>> {
        op()
    }
}

impl AlertOutbox for Failing {
    fn alerts_enqueue(&self, _types: Vec<String>, _now: i64) -> Op<'_, usize> {
        op()
    }
    fn alerts_due(&self, _now: i64, _limit: usize) -> Op<'_, Vec<crate::alerts::outbox::DueAlert>> {
        op()
    }
    fn alert_delivered(&self, _observation_id: i64, _d: crate::alerts::outbox::Delivery, _now: i64) -> Op<'_, ()> {
        op()
    }
    fn alert_figures(&self) -> Op<'_, crate::alerts::outbox::AlertFigures> {
        op()
    }
}

impl Figures for Failing {
    fn read_only(&self) -> bool {
        false
    }
    fn store_figures(&self, _now: i64) -> Op<'_, StoreFigures> {
        op()
    }
    fn parked_sessions(&self, _limit: i64) -> Op<'_, Vec<ParkedSession>> {
        op()
    }
}

impl crate::folders::storage::FolderRows for Failing {
    fn folder_rows(&self, _since: i64, _limit: usize) -> Read<'_, Vec<crate::folders::plan::FolderRow>> {
        read()
    }
}

impl crate::action::storage::ActionMemory for Failing {
    fn action_lookup(
        &self,
        _project: String,
        _key: Option<String>,
        _file: Option<String>,
        _session: String,
    ) -> Read<'_, crate::action::storage::ActionLookup> {
        read()
    }
    fn record_injection(&self, _i: crate::action::storage::Injection) -> Op<'_, bool> {
        op()
    }
    fn session_uses(&self, _session: String) -> Read<'_, (Option<String>, Vec<crate::action::injected::UseItem>)> {
        read()
    }
    fn mark_uses(&self, _marks: Vec<crate::action::injected::UseMark>, _now: i64) -> Op<'_, ()> {
        op()
    }
    fn use_totals(&self) -> Read<'_, Vec<crate::action::injected::UseTotals>> {
        read()
    }
}

impl crate::readgate::storage::GateRows for Failing {
    fn stored_text(&self, _paths: Vec<String>, _scope: Scope) -> Read<'_, Option<(String, i64)>> {
        read()
    }
}

impl crate::bridge::storage::NativeMemory for Failing {
    fn import_note(&self, _n: crate::bridge::note_rows::NoteIn, _now: i64) -> Op<'_, crate::bridge::note_rows::NoteOutcome> {
        op()
    }
    fn memory_evidence(&self, _scope: Scope, _since: i64) -> Read<'_, crate::bridge::note::Evidence> {
        read()
    }
}

impl crate::freshness::storage::Anchors for Failing {
    fn anchors_queued(&self, _limit: usize) -> Op<'_, Vec<crate::freshness::anchor_rows::AnchorJob>> {
        op()
    }
    fn write_anchors(
        &self,
        _done: Vec<crate::freshness::anchor_rows::AnchorJob>,
        _found: Vec<crate::freshness::anchor_rows::Anchor>,
    ) -> Op<'_, ()> {
        op()
    }
    fn anchor_roots(&self, _projects: Vec<String>) -> Op<'_, Vec<(String, Option<String>)>> {
        op()
    }
    fn live_anchors(&self, _root: String) -> Op<'_, Vec<crate::freshness::anchor_rows::LiveAnchor>> {
        op()
    }
    fn mark_stale(
        &self,
        _root: String,
        _head: Option<String>,
        _marks: Vec<crate::freshness::anchor_rows::StaleMark>,
        _now: i64,
    ) -> Op<'_, usize> {
        op()
    }
}
