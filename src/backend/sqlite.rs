//! The embedded SQLite backend of the store seam: writes go to the single writer thread (group
//! commit), reads to the read-only pool; each method is one of the plain functions of `store/`
//! or `retrieval/` over a connection. Vector candidates come from the vector runtime (sqlite-vec
//! in the same file, or Chroma).

use std::collections::HashMap;
use std::sync::Arc;

use rusqlite::{Connection, OptionalExtension};

use super::{Browse, Depth, Figures, Forgotten, Ingest, Memories, ObservationEdit, Op, Read, Recall, Transfer, WorkQueue};
use crate::config::ContextSettings;
use crate::modes::Mode;
use crate::retrieval::browse::{self, Listed, Page, SessionDetail, SessionRow, ToolUses, Usage};
use crate::retrieval::browse_rows::ProjectList;
use crate::retrieval::feed::{self, Cursor, FeedEvent};
use crate::retrieval::fusion::{Fusion, Near};
use crate::retrieval::overview::{self, DatabaseFigures};
use crate::retrieval::records::Observation;
use crate::retrieval::search::{KeywordPhase, SearchRequest, SearchResult, finish, keyword_phase};
use crate::retrieval::semantic::{SemanticRequest, semantic_context_with};
use crate::retrieval::vector_rows::{VectorRows, nearest_rows};
use crate::retrieval::{
    ContextRequest, FileContextRequest, Record, RecordId, RenderedContext, RetrievalError, Scope, TimelineRequest, TimelineResult, Zone,
};
use crate::store::batch::{BatchMeta, BatchOutput, StoredBatch, UsageDelta, record_usage, store_batch, tokens_today};
use crate::store::export_rows::{self, ExportedObservation, Imported};
use crate::store::forget::{ForgetCounts, ForgetSelector, RecordRef, forget_bulk, forget_one};
use crate::store::memory::{ManualMemory, SavedMemory, save_memory};
use crate::store::pending::{self, BatchLimits, Claim, Release};
use crate::store::prompts::{PromptIn, PromptOutcome, ingest_prompt, record_event, seen_event};
use crate::store::sessions::{self, CompleteOutcome, SessionKey};
use crate::store::stats::{ParkedSession, StoreFigures, figures, parked_sessions};
use crate::store::tool_events::{
    SummaryRequestIn, SummaryRequestOutcome, ToolEventIn, ToolEventOutcome, ingest_summary_request, ingest_tool_event,
};
use crate::store::{Store, StoreError};
use crate::vectors::nearest::VectorScope;
use crate::vectors::runtime::VectorRuntime;

/// The default backend: one SQLite file (`<data>/memd.db`).
pub struct SqliteBackend {
    store: Store,
    vectors: Option<Arc<VectorRuntime>>,
    /// When the raw search index catches up (issue 35).
    raw_drain: Arc<super::raw_drain::RawDrain>,
}

impl SqliteBackend {
    pub fn new(store: Store, vectors: Option<Arc<VectorRuntime>>) -> Self {
        let raw_drain = super::raw_drain::RawDrain::new();
        // Calls a stopped worker left queued for the raw index are indexed once ingest is quiet.
        if tokio::runtime::Handle::try_current().is_ok() && !store.read_only {
            raw_drain.after_batch(&store);
        }
        Self { store, vectors, raw_drain }
    }

    fn write<T, F>(&self, f: F) -> Op<'_, T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    {
        Box::pin(self.store.write(f))
    }

    fn stat<T, F>(&self, f: F) -> Op<'_, T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    {
        Box::pin(self.store.read(f))
    }

    fn read<T, F>(&self, f: F) -> Read<'_, T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T, RetrievalError> + Send + 'static,
    {
        crate::retrieval::read_on(&self.store, f)
    }
}

impl Ingest for SqliteBackend {
    fn ingest_prompt(&self, p: PromptIn) -> Op<'_, PromptOutcome> {
        self.raw_drain.touched();
        self.write(move |c| ingest_prompt(c, &p))
    }
    fn ingest_tool_event(&self, e: ToolEventIn) -> Op<'_, ToolEventOutcome> {
        self.raw_drain.touched();
        self.write(move |c| {
            let out = ingest_tool_event(c, &e)?;
            // The action memory's index, in the call's own transaction (issue 53).
            if let ToolEventOutcome::Queued { pending_id, .. } = out {
                crate::action::rows::note_queued(c, pending_id, &e)?;
            }
            Ok(out)
        })
    }
    fn ingest_summary_request(&self, s: SummaryRequestIn) -> Op<'_, SummaryRequestOutcome> {
        self.write(move |c| ingest_summary_request(c, &s))
    }
    fn complete_session(&self, key: SessionKey, reason: String, event_id: Option<String>, now: i64) -> Op<'_, Option<CompleteOutcome>> {
        self.write(move |c| {
            if seen_event(c, event_id.as_deref())?.is_some() {
                return Ok(None);
            }
            let out = sessions::complete(c, &key, &reason, now)?;
            if let CompleteOutcome::Completing { session_db_id, .. } | CompleteOutcome::Completed { session_db_id } = out {
                record_event(c, event_id.as_deref(), "complete", session_db_id, None, now)?;
            }
            Ok(Some(out))
        })
    }
}

impl WorkQueue for SqliteBackend {
    fn sessions_with_pending_work(&self) -> Op<'_, Vec<(i64, SessionKey)>> {
        self.stat(sessions::with_pending_work)
    }
    fn revert_session(&self, id: i64) -> Op<'_, Depth> {
        self.write(move |c| {
            pending::revert_session(c, id)?;
            pending::depth(c, id)
        })
    }
    fn claim_batch(&self, id: i64, now: i64, limits: BatchLimits) -> Op<'_, (Claim, Depth)> {
        self.write(move |c| Ok((pending::claim_batch(c, id, now, limits)?, pending::depth(c, id)?)))
    }
    fn release_batch(&self, ids: Vec<i64>, how: Release, error: String, now: i64) -> Op<'_, ()> {
        self.write(move |c| pending::release_batch(c, &ids, &how, &error, now))
    }
    fn store_batch(&self, meta: BatchMeta, out: BatchOutput, now: i64) -> Op<'_, StoredBatch> {
        Box::pin(async move {
            let stored = self.store.write(move |c| store_batch(c, &meta, &out, now)).await;
            // Its calls were queued for the raw index: indexed once ingest is quiet (issue 35).
            if stored.is_ok() {
                self.raw_drain.after_batch(&self.store);
            }
            stored
        })
    }
    fn mark_session_failed(&self, id: i64, reason: String) -> Op<'_, ()> {
        self.write(move |c| sessions::mark_failed(c, id, &reason))
    }
    fn complete_idle_session(&self, id: i64, now: i64) -> Op<'_, bool> {
        self.write(move |c| sessions::complete_idle(c, id, now))
    }
    fn record_usage(&self, delta: UsageDelta, now: i64) -> Op<'_, ()> {
        self.write(move |c| record_usage(c, &delta, now))
    }
    fn tokens_today(&self, now: i64) -> Op<'_, i64> {
        self.stat(move |c| tokens_today(c, now))
    }
    fn requeue_failed(&self, content_session_id: Option<String>, ids: Option<Vec<i64>>) -> Op<'_, crate::store::retry::Requeued> {
        self.write(move |c| crate::store::retry::requeue_failed(c, content_session_id.as_deref(), ids.as_deref()))
    }
}

impl Memories for SqliteBackend {
    fn save_memory(&self, m: ManualMemory, now: i64) -> Op<'_, SavedMemory> {
        self.write(move |c| save_memory(c, &m, now))
    }
    fn edit_observation(&self, id: i64, e: ObservationEdit) -> Op<'_, bool> {
        self.write(move |c| {
            let n = c.execute(
                "UPDATE observations SET title = coalesce(?2, title), narrative = coalesce(?3, narrative),
                   facts = coalesce(?4, facts) WHERE id = ?1",
                rusqlite::params![id, e.title, e.narrative, e.facts],
            )?;
            if n > 0 {
                crate::store::rescan::requeue_vector(c, "observation", id)?;
            }
            Ok(n > 0)
        })
    }
    fn forget(&self, r: RecordRef, reason: Option<String>, now: i64) -> Op<'_, Forgotten> {
        self.write(move |c| {
            let vector_target: Option<String> = c
                .query_row("SELECT value FROM meta WHERE key = 'vector_target'", [], |r| r.get(0))
                .optional()?;
            let found = forget_one(c, r, reason.as_deref(), now)?;
            Ok(Forgotten { found, vector_target })
        })
    }
    fn forget_matching(&self, sel: ForgetSelector, dry_run: bool, reason: Option<String>, now: i64) -> Op<'_, ForgetCounts> {
        self.write(move |c| forget_bulk(c, &sel, dry_run, reason.as_deref(), now))
    }
    fn release(&self, observation_id: i64) -> Op<'_, bool> {
        self.write(move |c| Ok(crate::store::quarantine::release(c, observation_id)?))
    }
    fn quarantined(&self, limit: usize) -> Op<'_, (Vec<crate::store::quarantine::Quarantined>, i64)> {
        self.write(move |c| Ok(crate::store::quarantine::list(c, limit)?))
    }
    fn contradictions(&self, all: bool, limit: i64) -> Op<'_, Vec<crate::store::supersession::Contradiction>> {
        self.stat(move |c| crate::store::supersession::contradictions(c, all, limit))
    }
    fn resolve_contradiction(&self, id: i64, how: crate::store::supersession::Resolution, now: i64) -> Op<'_, Option<(i64, i64)>> {
        self.write(move |c| crate::store::supersession::resolve(c, id, how, now))
    }
}

impl Recall for SqliteBackend {
    fn context(&self, req: ContextRequest, cfg: ContextSettings, mode: Arc<Mode>, now: i64) -> Read<'_, RenderedContext> {
        self.read(move |c| crate::retrieval::context_inject(c, &req, &cfg, &mode, &Zone::Local, now))
    }
    fn semantic_context(&self, req: SemanticRequest, vector: Option<Vec<Near>>, floor: f32) -> Read<'_, (String, Vec<i64>)> {
        self.read(move |c| semantic_context_with(c, &req, &Zone::Local, vector.as_deref(), floor))
    }
    fn file_context(&self, req: FileContextRequest, mode: Arc<Mode>, now: i64) -> Read<'_, (String, Vec<i64>)> {
        self.read(move |c| crate::retrieval::file_context(c, &req, &mode, &Zone::Local, now))
    }
    fn observations_by_file(&self, req: FileContextRequest) -> Read<'_, Vec<Observation>> {
        self.read(move |c| crate::retrieval::observations_by_file(c, &req))
    }
    fn keyword_search(&self, req: SearchRequest) -> Read<'_, KeywordPhase> {
        self.read(move |c| keyword_phase(c, &req))
    }
    fn vector_candidates(&self, query: String, scope: VectorScope) -> std::pin::Pin<Box<dyn Future<Output = VectorRows> + Send + '_>> {
        Box::pin(async move { nearest_rows(self.vectors.as_ref(), &self.store, &query, scope).await })
    }
    fn fuse(&self, req: SearchRequest, phase: KeywordPhase, vector: Option<Vec<Near>>, fusion: Fusion) -> Read<'_, SearchResult> {
        self.read(move |c| finish(c, &req, phase, vector.as_deref(), &fusion))
    }
    fn timeline(&self, req: TimelineRequest) -> Read<'_, Option<TimelineResult>> {
        self.read(move |c| crate::retrieval::timeline(c, &req))
    }
    fn records(&self, ids: Vec<RecordId>, scope: Scope) -> Read<'_, HashMap<RecordId, Record>> {
        self.read(move |c| crate::retrieval::fetch_records(c, &ids, &scope))
    }
    fn projects(&self, platform: Option<String>) -> Read<'_, ProjectList> {
        self.read(move |c| overview::projects(c, platform.as_deref()))
    }
    fn database_figures(&self) -> Read<'_, DatabaseFigures> {
        self.read(overview::database_figures)
    }
    fn related(&self, req: crate::retrieval::related::RelatedRequest) -> Read<'_, crate::retrieval::related::Related> {
        self.read(move |c| crate::retrieval::related::related(c, &req))
    }
    fn graph_expansion(&self, query: String, scope: Scope) -> Read<'_, Vec<i64>> {
        self.read(move |c| crate::retrieval::graph_expand::expand(c, &query, &scope))
    }
}

impl Browse for SqliteBackend {
    fn observations_page(&self, project: Option<String>, session: Option<String>, page: Page) -> Read<'_, Listed<Observation>> {
        self.read(move |c| browse::observations_page(c, project.as_deref(), session.as_deref(), page))
    }
    fn sessions_page(&self, project: Option<String>, page: Page) -> Read<'_, Listed<SessionRow>> {
        self.read(move |c| browse::sessions_page(c, project.as_deref(), page))
    }
    fn session_detail(&self, id: i64) -> Read<'_, SessionDetail> {
        self.read(move |c| browse::session_detail(c, id))
    }
    fn tool_uses(&self, id: i64) -> Read<'_, ToolUses> {
        self.read(move |c| browse::tool_uses_of(c, id))
    }
    fn usage_by_day(&self, days: i64, today: String) -> Read<'_, Usage> {
        self.read(move |c| browse::usage_by_day(c, days, &today))
    }
    fn stats(&self, now: i64, days: i64) -> Read<'_, crate::retrieval::stats::Stats> {
        self.read(move |c| crate::retrieval::stats::stats(c, now, days))
    }
    fn feed_head(&self) -> Read<'_, Cursor> {
        self.read(feed::head)
    }
    fn feed_since(&self, from: Cursor) -> Read<'_, (Vec<FeedEvent>, Cursor)> {
        self.read(move |c| feed::since(c, from))
    }
}

impl Transfer for SqliteBackend {
    fn export_page(&self, project: Option<String>, since: Option<i64>, after: i64, limit: usize) -> Read<'_, Vec<ExportedObservation>> {
        self.read(move |c| Ok(export_rows::export_page(c, project.as_deref(), since, after, limit)?))
    }
    fn import_observations(&self, rows: Vec<ExportedObservation>) -> Op<'_, Vec<Result<Imported, StoreError>>> {
        self.write(move |c| export_rows::import_all(c, &rows))
    }
    fn link_observations(&self, links: Vec<(i64, i64, Option<String>)>) -> Op<'_, usize> {
        self.write(move |c| export_rows::link(c, &links))
    }
}

impl AsRef<Store> for SqliteBackend {
    /// The areas implemented over the embedded file in their feature's folder (alerts, team rows,
    /// work states) reach it through this.
    fn as_ref(&self) -> &Store {
        &self.store
    }
}

impl Figures for SqliteBackend {
    fn read_only(&self) -> bool {
        self.store.read_only
    }
    fn store_figures(&self, now: i64) -> Op<'_, StoreFigures> {
        self.stat(move |c| figures(c, now))
    }
    fn parked_sessions(&self, limit: i64) -> Op<'_, Vec<ParkedSession>> {
        self.stat(move |c| parked_sessions(c, limit))
    }
}
