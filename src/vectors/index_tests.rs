//! Unit tests of the document layout and the embedded index on a migrated in-memory database.

use super::documents::{DocKind, documents};
use super::index::{collect_garbage, register_extension, replace_rows};
use super::nearest::{VectorScope, brute_force, nearest};

fn conn() -> rusqlite::Connection {
    register_extension();
    let c = crate::store::test_conn();
    c.execute_batch(
        "INSERT INTO sdk_sessions(content_session_id, memory_session_id, project, started_at, started_at_epoch, last_event_epoch)
           VALUES ('c', 'm', 'proj', 'x', 0, 0);
         INSERT INTO observations(memory_session_id, project, platform_source, type, title, subtitle, narrative, facts, concepts,
           files_read, content_hash, origin, created_at, created_at_epoch)
           VALUES ('m', 'proj', 'claude', 'bugfix', 'Fix', '', 'the narrative', '[\"f0\",\"f1\"]', '[\"how-it-works\"]',
           '[\"a.rs\",\"b.rs\"]', 'h1', 'manual', 'x', 5);
         INSERT INTO session_summaries(memory_session_id, project, platform_source, request, learned, created_at, created_at_epoch)
           VALUES ('m', 'proj', 'claude', 'the request', 'what we learned', 'x', 6);
         INSERT INTO user_prompts(session_db_id, content_session_id, platform_source, project, prompt_number, prompt_text, created_at, created_at_epoch)
           VALUES (1, 'c', 'claude', 'proj', 1, 'a prompt', 'x', 7);
         INSERT INTO user_prompts(session_db_id, content_session_id, platform_source, project, prompt_number, prompt_text, is_private, created_at, created_at_epoch)
           VALUES (1, 'c', 'claude', 'proj', 2, '', 1, 'x', 8);",
    )
    .unwrap();
    c
}

fn unit(i: usize) -> Vec<f32> {
    let mut v = vec![0.0; 384];
    v[i] = 1.0;
    v
}

#[test]
fn documents_follow_the_layout() {
    let c = conn();
    let obs = documents(&c, DocKind::Observation, &[1]).unwrap();
    let ids: Vec<&str> = obs.iter().map(|d| d.doc_id.as_str()).collect();
    assert_eq!(ids, ["obs_1_title", "obs_1_narrative", "obs_1_fact_0", "obs_1_fact_1"]);
    assert_eq!(obs[0].text, "Fix", "the title alone");
    assert_eq!(obs[1].text, "Fix\nthe narrative", "empty subtitle skipped");
    assert_eq!(obs[1].metadata["files_read"], "a.rs,b.rs");
    assert_eq!(obs[1].metadata["doc_type"], "observation");
    assert_eq!(obs[3].metadata["fact_index"], 1);
    assert!(!obs[0].metadata.contains_key("merged_into_project"), "empty values omitted");
    let sum = documents(&c, DocKind::Summary, &[1]).unwrap();
    let ids: Vec<&str> = sum.iter().map(|d| d.doc_id.as_str()).collect();
    assert_eq!(ids, ["summary_1_request", "summary_1_learned"]);
    assert_eq!(sum[1].metadata["field_type"], "learned");
    let prompts = documents(&c, DocKind::Prompt, &[1, 2]).unwrap();
    assert_eq!(prompts.len(), 1, "a private prompt has no document");
    assert_eq!(prompts[0].doc_id, "prompt_1");
    assert_eq!(prompts[0].metadata["memory_session_id"], "m");
}

#[test]
fn nearest_uses_sqlite_vec_and_agrees_with_brute_force_and_deletes_reach_the_index() {
    let c = conn();
    let docs = documents(&c, DocKind::Observation, &[1]).unwrap();
    let with: Vec<_> = docs.into_iter().enumerate().map(|(i, d)| (d, unit(i))).collect();
    replace_rows(&c, DocKind::Observation, &[1], &with, "m").unwrap();
    let (found, path) = nearest(&c, None, &unit(2), &VectorScope::default(), 10).unwrap();
    assert_eq!(path, super::nearest::QueryPath::SqliteVec);
    assert_eq!(found[0].doc_id, "obs_1_fact_0");
    assert!(found[0].distance.abs() < 1e-5);
    let brute = brute_force(&c, &unit(2), &VectorScope::default(), 10).unwrap();
    assert_eq!(brute[0].doc_id, found[0].doc_id);
    let other_project = VectorScope {
        projects: vec!["elsewhere".into()],
        ..Default::default()
    };
    assert!(nearest(&c, None, &unit(1), &other_project, 10).unwrap().0.is_empty());
    // Re-embedding replaces in place: still 4 documents in both tables.
    replace_rows(&c, DocKind::Observation, &[1], &with, "m").unwrap();
    let count = |sql: &str| c.query_row(sql, [], |r| r.get::<_, i64>(0)).unwrap();
    assert_eq!(count("SELECT count(*) FROM vectors"), 4);
    assert_eq!(count("SELECT count(*) FROM vectors_bin"), 4);
    assert_eq!(count("SELECT count(*) FROM vectors_vec_gc"), 0);
    // Forget: the trigger empties `vectors`, the garbage pass empties `vectors_bin`.
    c.execute("DELETE FROM observations WHERE id = 1", []).unwrap();
    assert_eq!(count("SELECT count(*) FROM vectors"), 0);
    assert_eq!(collect_garbage(&c).unwrap(), 4);
    assert_eq!(count("SELECT count(*) FROM vectors_bin"), 0);
}

#[test]
fn a_replaced_summary_is_queued_for_the_embedded_store() {
    let c = conn();
    c.execute("UPDATE session_summaries SET learned = 'more' WHERE id = 1", []).unwrap();
    let state: String = c
        .query_row(
            "SELECT state FROM vector_sync WHERE target = 'sqlite' AND doc_kind = 'summary' AND row_id = 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(state, "pending");
}

#[test]
fn a_project_scope_reaches_rows_merged_into_it() {
    let c = conn();
    c.execute("UPDATE observations SET merged_into_project = 'main-proj' WHERE id = 1", [])
        .unwrap();
    let docs = documents(&c, DocKind::Observation, &[1]).unwrap();
    let with: Vec<_> = docs.into_iter().enumerate().map(|(i, d)| (d, unit(i))).collect();
    replace_rows(&c, DocKind::Observation, &[1], &with, "m").unwrap();
    let scope = VectorScope {
        projects: vec!["main-proj".into()],
        ..Default::default()
    };
    assert!(
        nearest(&c, None, &unit(2), &scope, 10).unwrap().0.is_empty(),
        "documents carry the row's own project"
    );
    let scope = scope.with_merged_projects(&c).unwrap();
    assert_eq!(scope.projects, ["main-proj", "proj"]);
    assert_eq!(nearest(&c, None, &unit(2), &scope, 10).unwrap().0[0].doc_id, "obs_1_fact_0");
}

#[test]
fn stored_vectors_are_half_precision_and_older_f32_rows_still_read() {
    use super::index::{from_blob, to_blob, to_stored_blob};
    let v: Vec<f32> = (0..384).map(|i| ((i as f32) * 0.37).sin() / 14.0).collect();
    let stored = to_stored_blob(&v);
    assert_eq!(stored.len(), 768);
    assert!(v.iter().zip(from_blob(&stored)).all(|(a, b)| (a - b).abs() < 1e-3));
    assert_eq!(from_blob(&to_blob(&v)), v, "f32 rows of earlier data dirs");
}

#[test]
fn an_index_missing_from_an_older_data_dir_is_built_from_its_f32_rows() {
    let c = conn();
    c.execute(
        "INSERT INTO vectors(doc_id, doc_kind, row_id, field, project, platform_source, created_at_epoch, model, dim, embedding)
         VALUES ('obs_1_narrative', 'observation', 1, 'narrative', 'proj', 'claude', 5, 'm', 384, ?1)",
        [super::index::to_blob(&unit(3))],
    )
    .unwrap();
    assert!(super::index::ensure_vec_table(&c).unwrap());
    let (found, path) = nearest(&c, None, &unit(3), &VectorScope::default(), 5).unwrap();
    assert_eq!(path, super::nearest::QueryPath::SqliteVec);
    assert_eq!(found[0].doc_id, "obs_1_narrative");
    assert!(found[0].distance.abs() < 1e-5);
}
