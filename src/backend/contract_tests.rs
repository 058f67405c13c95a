//! The contract every storage backend meets, written once against `Arc<dyn Storage>` and run here
//! on the SQLite backend over a real file; a second backend runs the same [`contract`]. It walks
//! one tool call through the life the worker gives it: ingested once, claimed, observed, found
//! by keyword, by id, on the timeline, in the viewer's pages and the feed, counted, forgotten.

use std::sync::Arc;

use super::Storage;
use super::sqlite::SqliteBackend;
use crate::observer::types::ObservationDraft;
use crate::retrieval::browse::Page;
use crate::retrieval::feed::Cursor;
use crate::retrieval::fusion::Fusion;
use crate::retrieval::{Anchor, Kind, Record, RecordId, Scope, SearchRequest, TimelineRequest};
use crate::store::batch::BatchOutput;
use crate::store::forget::{RecordKind, RecordRef};
use crate::store::pending::{BatchLimits, Claim};
use crate::store::sessions::SessionKey;
use crate::store::tool_events::{ToolEventOutcome, sample_event};
use crate::store::{Store, StoreOptions};

const NOW: i64 = 1_787_011_200_000; // 2026-08-18T00:00:00Z
const LIMITS: BatchLimits = BatchLimits {
    max_events: 20,
    max_chars: 40_000,
};

fn output(title: &str, source_rows: Vec<i64>) -> BatchOutput {
    let o = ObservationDraft {
        obs_type: "bugfix".into(),
        title: Some(title.into()),
        narrative: Some("The login page redirected to itself after a session expired.".into()),
        files_modified: vec!["src/auth/login.rs".into()],
        ..Default::default()
    };
    BatchOutput::extractive(vec![o], None, source_rows)
}

async fn ingest_and_observe(s: &dyn Storage) -> i64 {
    let ev = sample_event("c1", Some("toolu_1"));
    let ToolEventOutcome::Queued { session_db_id, .. } = s.ingest_tool_event(ev.clone()).await.unwrap() else {
        panic!("the first delivery is queued")
    };
    assert_eq!(s.ingest_tool_event(ev).await.unwrap(), ToolEventOutcome::Duplicate);
    let key = SessionKey::new("claude", "c1");
    assert_eq!(s.sessions_with_pending_work().await.unwrap(), vec![(session_db_id, key)]);
    let (claim, depth) = s.claim_batch(session_db_id, NOW, LIMITS).await.unwrap();
    assert_eq!(depth.1, 1, "the claimed row is with the observer");
    let Claim::Batch(batch) = claim else { panic!("a batch is claimed") };
    let rows = batch.meta.pending_ids.clone();
    let out = output("Fix the login redirect loop", rows);
    let stored = s.store_batch(batch.meta, out, NOW).await.unwrap();
    assert_eq!(stored.observation_ids.len(), 1);
    assert!(s.sessions_with_pending_work().await.unwrap().is_empty(), "nothing left to claim");
    assert_eq!(s.revert_session(session_db_id).await.unwrap(), (0, 0));
    stored.observation_ids[0]
}

/// Runs the whole contract on `s` (an empty store).
pub(crate) async fn contract(s: Arc<dyn Storage>) {
    let s = s.as_ref();
    assert!(!s.read_only());
    let head = s.feed_head().await.unwrap();
    let id = ingest_and_observe(s).await;
    let rid = RecordId {
        kind: Kind::Observation,
        id,
    };

    let req = SearchRequest::new("login redirect", Scope::default());
    let phase = s.keyword_search(req.clone()).await.unwrap();
    let found = s.fuse(req, phase, None, Fusion::default()).await.unwrap();
    assert_eq!(
        found.records.first().map(Record::id),
        Some(id),
        "keyword search finds the observation"
    );

    let by_id = s.records(vec![rid], Scope::default()).await.unwrap();
    assert!(matches!(by_id.get(&rid), Some(Record::Observation(o)) if o.title.as_deref() == Some("Fix the login redirect loop")));
    let around = TimelineRequest {
        anchor: Anchor::Record(rid),
        depth_before: 3,
        depth_after: 3,
        projects: None,
        platform: None,
    };
    let timeline = s.timeline(around).await.unwrap().expect("the anchor is found");
    assert_eq!(timeline.anchor, rid);

    let page = Page { before: None, limit: 10 };
    let listed = s.observations_page(None, None, page).await.unwrap();
    assert_eq!(listed.items[0].id, id);
    let (events, next) = s.feed_since(head).await.unwrap();
    assert!(!events.is_empty() && next != head, "the feed carries the new rows");
    assert_eq!(s.feed_since(next).await.unwrap().0.len(), 0, "and nothing twice");
    assert_ne!(s.feed_head().await.unwrap(), Cursor::default());
    assert_eq!(s.store_figures(NOW).await.unwrap().rows.observations, 1);

    let r = RecordRef {
        kind: RecordKind::Observation,
        id,
    };
    assert!(s.forget(r, Some("wrong".into()), NOW).await.unwrap().found);
    assert!(!s.forget(r, None, NOW).await.unwrap().found, "a forgotten record is gone");
    let req = SearchRequest::new("login redirect", Scope::default());
    let phase = s.keyword_search(req.clone()).await.unwrap();
    assert!(s.fuse(req, phase, None, Fusion::default()).await.unwrap().records.is_empty());
}

/// A store on a real file in `dir`, as the contract tests use it.
pub(crate) fn open_store(dir: &std::path::Path) -> Store {
    let opts = StoreOptions {
        readers: 2,
        queue_max: 100,
        ..Default::default()
    };
    Store::open(&dir.join("memd.db"), &opts, NOW).unwrap()
}

#[tokio::test]
async fn the_sqlite_backend_meets_the_storage_contract() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(dir.path());
    contract(Arc::new(SqliteBackend::new(store.clone(), None))).await;
    store.writer.shutdown().await;
}
