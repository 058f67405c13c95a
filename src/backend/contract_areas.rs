//! Every method of every area trait, called once: the SQLite backend answers each (its results
//! checked where an empty store has a known answer), and the failing backend fails each with its
//! error, never a panic. The walk in `contract_tests.rs` checks the main path's meaning; this
//! file keeps a method from being added to an area without a caller in the contract.

use std::sync::Arc;

use super::failing::{Failing, REASON};
use super::sqlite::SqliteBackend;
use super::{Figures, Storage};
use crate::alerts::outbox::Delivery;
use crate::bridge::note_rows::NoteIn;
use crate::config::ContextSettings;
use crate::pipeline::redact::Redactor;
use crate::retrieval::browse::Page;
use crate::retrieval::feed::Cursor;
use crate::retrieval::related::RelatedRequest;
use crate::retrieval::semantic::SemanticRequest;
use crate::retrieval::vector_rows::VectorRows;
use crate::retrieval::{ContextRequest, FileContextRequest, RetrievalError, Scope};
use crate::store::forget::ForgetSelector;
use crate::store::memory::ManualMemory;
use crate::store::pending::Release;
use crate::store::prompts::PromptIn;
use crate::store::sessions::{SessionKey, SessionSeed};
use crate::store::tool_events::SummaryRequestIn;
use crate::team::local::rows::LocalRef;
use crate::work_state::tables::WorkWrite;

const NOW: i64 = 1_787_011_200_000;

fn seed() -> SessionSeed {
    SessionSeed {
        key: SessionKey::new("claude", "c9"),
        project: "acme".into(),
        project_root: None,
        transcript_path: None,
        custom_title: None,
    }
}

fn file_request() -> FileContextRequest {
    FileContextRequest {
        paths: vec!["src/a.rs".into()],
        scope: Scope::default(),
        limit: 5,
        file_mtime_ms: None,
        content_session_id: None,
        vectors: false,
    }
}

/// Calls every method once; each entry is (method, whether it answered without an error).
async fn every_method(s: &dyn Storage) -> Vec<(&'static str, bool)> {
    let mode = Arc::new(crate::modes::load_mode("code", &[]).0);
    let redactor = Arc::new(Redactor::default());
    let mut out: Vec<(&'static str, bool)> = Vec::new();
    macro_rules! call {
        ($name:literal, $e:expr) => {
            out.push(($name, $e.await.is_ok()))
        };
    }
    // Ingest
    let prompt = PromptIn {
        seed: seed(),
        text: "fix the login page".into(),
        is_private: false,
        prompt_id: None,
        cwd: None,
        event_id: Some("e-1".into()),
        at: NOW,
    };
    call!("ingest_prompt", s.ingest_prompt(prompt));
    let summary = SummaryRequestIn {
        seed: seed(),
        last_assistant_message: "done".into(),
        event_id: Some("e-2".into()),
        at: NOW,
    };
    call!("ingest_summary_request", s.ingest_summary_request(summary));
    // WorkQueue
    call!("release_batch", s.release_batch(vec![], Release::Fail, "x".into(), NOW));
    call!("mark_session_failed", s.mark_session_failed(999, "x".into()));
    call!("complete_idle_session", s.complete_idle_session(999, NOW));
    call!("record_usage", s.record_usage(Default::default(), NOW));
    call!("tokens_today", s.tokens_today(NOW));
    call!("requeue_failed", s.requeue_failed(None, Some(vec![1])));
    call!(
        "complete_session",
        s.complete_session(SessionKey::new("claude", "c9"), "exit".into(), Some("e-3".into()), NOW)
    );
    // Memories
    let memory = ManualMemory {
        platform_source: "claude".into(),
        project: "acme".into(),
        obs_type: "discovery".into(),
        title: "Login redirect".into(),
        narrative: "the login page caches its redirect".into(),
        ..Default::default()
    };
    call!("save_memory", s.save_memory(memory, NOW));
    call!("edit_observation", s.edit_observation(999, Default::default()));
    let sel = ForgetSelector::Project {
        project: "nobody".into(),
        before: None,
        provenance: None,
    };
    call!("forget_matching", s.forget_matching(sel, true, None, NOW));
    call!("release", s.release(999));
    call!("quarantined", s.quarantined(10));
    call!("contradictions", s.contradictions(true, 10));
    call!(
        "resolve_contradiction",
        s.resolve_contradiction(1, crate::store::supersession::Resolution::Both, NOW)
    );
    // Recall
    let ctx = ContextRequest {
        chain: vec!["acme".into()],
        platform: "claude".into(),
        full: false,
        max_chars: None,
        memory_lines: Vec::new(),
    };
    call!("context", s.context(ctx, ContextSettings::default(), mode.clone(), NOW));
    let sem = SemanticRequest {
        q: "login".into(),
        scope: Scope::default(),
        limit: 5,
        content_session_id: None,
    };
    call!("semantic_context", s.semantic_context(sem, None, 0.5));
    call!("file_context", s.file_context(file_request(), mode.clone(), NOW));
    call!("observations_by_file", s.observations_by_file(file_request()));
    let near = s.vector_candidates("login".into(), Default::default()).await;
    out.push(("vector_candidates", !matches!(near, VectorRows::Failed(_))));
    let related = RelatedRequest {
        entity: "src/a.rs".into(),
        ..Default::default()
    };
    call!("related", s.related(related));
    call!("graph_expansion", s.graph_expansion("login".into(), Scope::default()));
    call!("projects", s.projects(None));
    call!("database_figures", s.database_figures());
    call!("memory_evidence", s.memory_evidence(Scope::default(), 0));
    call!("stored_text", s.stored_text(vec!["src/a.rs".into()], Scope::default()));
    call!("folder_rows", s.folder_rows(0, 10));
    // Anchors
    call!("anchors_queued", s.anchors_queued(10));
    call!("write_anchors", s.write_anchors(Vec::new(), Vec::new()));
    call!("anchor_roots", s.anchor_roots(Vec::new()));
    call!("live_anchors", s.live_anchors("/nowhere".into()));
    call!("mark_stale", s.mark_stale("/nowhere".into(), None, Vec::new(), NOW));
    // Browse
    let page = Page { before: None, limit: 5 };
    call!("sessions_page", s.sessions_page(None, page));
    call!("session_detail", s.session_detail(1));
    let uses = s.tool_uses(999).await;
    out.push(("tool_uses", matches!(uses, Err(RetrievalError::NotFound(_)))));
    call!("usage_by_day", s.usage_by_day(7, "2026-08-18".into()));
    call!("stats", s.stats(NOW, 7));
    call!("feed_head", s.feed_head());
    call!("feed_since", s.feed_since(Cursor::default()));
    // WorkStates
    let work = WorkWrite {
        project: "acme".into(),
        branch: "main".into(),
        task: Some("login page".into()),
        ..Default::default()
    };
    call!("write_work_state", s.write_work_state(work, NOW));
    call!("work_state", s.work_state("acme".into(), "main".into()));
    call!("work_states", s.work_states(None, 10));
    // Transfer
    call!("export_page", s.export_page(None, None, 0, 10));
    call!("import_observations", s.import_observations(Vec::new()));
    call!("link_observations", s.link_observations(Vec::new()));
    let note = NoteIn {
        path: "notes/login.md".into(),
        project: "acme".into(),
        title: "Login".into(),
        text: "The login page caches its redirect.".into(),
    };
    call!("import_note", s.import_note(note, NOW));
    // TeamRows
    let projects = vec!["acme".to_string()];
    call!(
        "team_outgoing",
        s.team_outgoing(projects.clone(), redactor.clone(), "i1".into(), 10)
    );
    call!(
        "team_mark_pushed",
        s.team_mark_pushed(vec![("g1".into(), LocalRef::Observation(999))], "i1".into(), NOW)
    );
    call!("team_edits_due", s.team_edits_due(redactor, 10));
    call!("team_edit_sent", s.team_edit_sent("g1".into(), 1));
    call!("team_tombstones_due", s.team_tombstones_due(10));
    call!("team_tombstone_done", s.team_tombstone_done("g1".into(), false));
    call!("team_pull_state", s.team_pull_state());
    call!(
        "team_apply_pulled",
        s.team_apply_pulled(Vec::new(), "i1".into(), projects.clone(), NOW)
    );
    call!("team_figures", s.team_figures(projects));
    call!("team_work", s.team_work(10));
    // AlertOutbox
    call!("alerts_enqueue", s.alerts_enqueue(vec!["decision".into()], NOW));
    call!("alerts_due", s.alerts_due(NOW, 10));
    call!("alert_delivered", s.alert_delivered(999, Delivery::Sent, NOW));
    call!("alert_figures", s.alert_figures());
    // ActionMemory
    call!(
        "action_lookup",
        s.action_lookup("acme".into(), Some("cargo test".into()), Some("src/lib.rs".into()), "c1".into())
    );
    let injection = crate::action::storage::Injection {
        session: "c1".into(),
        project: "acme".into(),
        source: crate::action::injected::Source::Action,
        item: Some("command:cargo test".into()),
        files: vec!["src/lib.rs".into()],
        ids: Vec::new(),
        now: NOW,
    };
    call!("record_injection", s.record_injection(injection));
    call!("session_uses", s.session_uses("c1".into()));
    let mark = crate::action::injected::UseMark {
        injection_id: 1,
        delivered: true,
        used: false,
    };
    call!("mark_uses", s.mark_uses(vec![mark], NOW));
    call!("use_totals", s.use_totals());
    // Figures
    call!("store_figures", s.store_figures(NOW));
    call!("parked_sessions", s.parked_sessions(10));
    // The methods the walk in contract_tests.rs checks for meaning, called here too so that
    // the list below is every method.
    call!(
        "ingest_tool_event",
        s.ingest_tool_event(crate::store::tool_events::sample_event("c9", Some("toolu_9")))
    );
    call!("sessions_with_pending_work", s.sessions_with_pending_work());
    call!("revert_session", s.revert_session(1));
    let limits = crate::store::pending::BatchLimits {
        max_events: 5,
        max_chars: 10_000,
    };
    let claimed = s.claim_batch(1, NOW, limits).await;
    out.push(("claim_batch", claimed.is_ok()));
    match claimed {
        Ok((crate::store::pending::Claim::Batch(batch), _)) => {
            let rows = batch.meta.pending_ids.clone();
            let none = crate::store::batch::BatchOutput::extractive(Vec::new(), None, rows);
            call!("store_batch", s.store_batch(batch.meta, none, NOW));
        }
        _ => out.push(("store_batch", false)),
    }
    let around = crate::retrieval::TimelineRequest {
        anchor: crate::retrieval::Anchor::Query("login".into()),
        depth_before: 2,
        depth_after: 2,
        projects: None,
        platform: None,
    };
    call!("timeline", s.timeline(around));
    let search = crate::retrieval::SearchRequest::new("login", Scope::default());
    let phase = s.keyword_search(search.clone()).await;
    out.push(("keyword_search", phase.is_ok()));
    if let Ok(phase) = phase {
        call!("fuse", s.fuse(search, phase, None, Default::default()));
    } else {
        out.push(("fuse", false));
    }
    let r = crate::store::forget::RecordRef {
        kind: crate::store::forget::RecordKind::Observation,
        id: 999,
    };
    call!("forget", s.forget(r, None, NOW));
    call!("records", s.records(Vec::new(), Scope::default()));
    call!("observations_page", s.observations_page(None, None, page));
    out
}

/// The methods of every area trait, read from the trait definitions (`backend/mod.rs`).
/// Every method the area traits declare: the core areas here, and the areas a feature keeps in its
/// own folder (each file from its first `pub trait` to its implementation).
fn declared() -> Vec<String> {
    let core = include_str!("mod.rs");
    let features = [
        include_str!("../action/storage.rs"),
        include_str!("../alerts/storage.rs"),
        include_str!("../bridge/storage.rs"),
        include_str!("../folders/storage.rs"),
        include_str!("../freshness/storage.rs"),
        include_str!("../readgate/storage.rs"),
        include_str!("../team/storage.rs"),
        include_str!("../work_state/storage.rs"),
    ];
    let mut texts = vec![&core[core.find("pub trait Ingest").expect("the first area")..]];
    for f in features {
        let from = f.find("pub trait ").expect("a feature's area trait");
        let to = f.find("\nimpl<").expect("its SQLite implementation");
        texts.push(&f[from..to]);
    }
    let mut names: Vec<String> = texts
        .iter()
        .flat_map(|t| t.split("fn ").skip(1))
        .filter_map(|rest| rest.split('(').next())
        .map(str::to_string)
        .filter(|n| n != "read_only")
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn every_method_of_every_area_answers_on_sqlite_and_fails_cleanly_on_failure() {
    let dir = tempfile::tempdir().unwrap();
    let store = super::contract_tests::open_store(dir.path());
    let sqlite = SqliteBackend::new(store.clone(), None);
    let answers = every_method(&sqlite).await;
    let mut called: Vec<String> = answers.iter().map(|(n, _)| n.to_string()).collect();
    called.sort();
    assert_eq!(called, declared(), "every method of every area is called once");
    let refused: Vec<_> = answers.iter().filter(|(_, ok)| !ok).collect();
    assert!(refused.is_empty(), "the SQLite backend answers every method: {refused:?}");
    assert!(!sqlite.read_only());
    store.writer.shutdown().await;

    let failing = Failing;
    let answered: Vec<_> = every_method(&failing).await.into_iter().filter(|(_, ok)| *ok).collect();
    assert!(answered.is_empty(), "the failing backend fails every method: {answered:?}");
    let err = failing.store_figures(NOW).await.unwrap_err();
    assert!(err.to_string().contains(REASON), "{err}");
}
