//! Vectors end to end with the real model (`MEMD_TEST_MODEL_DIR`, set by `.ci/run`; the tests skip
//! with a message without it): the sync embeds committed rows per the document layout, a worker
//! killed mid-backfill resumes with no duplicates and no gaps, forget removes the documents, and
//! status reports `no_model` when the model is absent.

use std::time::Duration;

use crate::support::{TestWorker, model_dir, wait_until};
use serde_json::Value;

/// A writable connection beside the worker's writer (busy timeout covers its transactions).
fn writer(w: &TestWorker) -> rusqlite::Connection {
    let c = rusqlite::Connection::open(w.db_path()).expect("open db");
    c.busy_timeout(Duration::from_secs(10)).expect("busy timeout");
    c
}

/// Inserts `n` observations of session `s` (a session row first), each with a narrative and two facts.
pub fn insert_observations(c: &rusqlite::Connection, s: &str, n: usize, text: impl Fn(usize) -> (String, String)) {
    let memory = format!("memd-claude-{s}");
    c.execute(
        "INSERT OR IGNORE INTO sdk_sessions(content_session_id, memory_session_id, project, started_at, started_at_epoch, last_event_epoch)
         VALUES (?1, ?2, 'proj', '2026-01-01T00:00:00Z', 0, 0)",
        [s, memory.as_str()],
    )
    .expect("session");
    let tx = c.unchecked_transaction().expect("tx");
    for i in 0..n {
        let (title, narrative) = text(i);
        let facts = serde_json::json!([format!("fact a of {i}"), format!("fact b of {i}")]).to_string();
        tx.execute(
            "INSERT INTO observations(memory_session_id, project, platform_source, type, title, narrative, facts, content_hash, origin, created_at, created_at_epoch)
             VALUES (?1, 'proj', 'claude', 'discovery', ?2, ?3, ?4, ?5, 'manual', '2026-01-01T00:00:00Z', ?6)",
            rusqlite::params![memory, title, narrative, facts, format!("h-{s}-{i}"), 1_700_000_000_000i64 + i as i64],
        )
        .expect("observation");
    }
    tx.commit().expect("commit");
}

fn backfill(w: &TestWorker) -> (i64, i64, String) {
    let st = w.status();
    let v = &st["vectors"];
    (
        v["backfill"]["done"].as_i64().unwrap_or(-1),
        v["backfill"]["total"].as_i64().unwrap_or(-1),
        v["state"].as_str().unwrap_or("").to_string(),
    )
}

#[test]
fn without_a_model_status_says_no_model_once() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none");
    let w = TestWorker::start(&[("MEMD_EMBED_MODEL_DIR", missing.to_str().unwrap())]);
    let st = w.status();
    assert_eq!(st["vectors"]["state"], "no_model", "{st}");
    let warnings: Vec<&Value> = st["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w.as_str().unwrap_or("").contains("no embedding model"))
        .collect();
    assert_eq!(warnings.len(), 1, "{st}");
}

#[test]
fn rows_are_embedded_per_layout_and_a_killed_backfill_resumes_without_duplicates_or_gaps() {
    let Some(model) = model_dir() else { return };
    let mut w = TestWorker::start(&[("MEMD_EMBED_MODEL_DIR", &model)]);
    insert_observations(&writer(&w), "s1", 120, |i| {
        (format!("title {i}"), format!("narrative number {i} about the build"))
    });
    // Kill the worker as soon as the backfill has made progress but before it finished.
    assert!(wait_until(Duration::from_secs(120), || {
        let (done, total, _) = backfill(&w);
        done > 0 || total == 0
    }));
    w.kill9();
    let partial: i64 = w.count("SELECT count(*) FROM vectors");
    w.spawn();
    assert!(
        wait_until(Duration::from_secs(300), || {
            let (done, total, state) = backfill(&w);
            state == "ok" && done == total && total >= 120
        }),
        "backfill did not finish: {:?}",
        backfill(&w)
    );
    // Every observation has its title, its narrative and its two facts; nothing else, nothing twice.
    let docs = w.count("SELECT count(*) FROM vectors WHERE doc_kind = 'observation'");
    assert_eq!(docs, 480, "documents after resume (had {partial} before the kill)");
    let distinct = w.count("SELECT count(DISTINCT doc_id) FROM vectors");
    assert_eq!(distinct, w.count("SELECT count(*) FROM vectors"));
    let gaps = w.count(
        "SELECT count(*) FROM observations o WHERE NOT EXISTS (SELECT 1 FROM vectors v WHERE v.doc_id = 'obs_' || o.id || '_narrative')",
    );
    assert_eq!(gaps, 0);
    let facts = w.count("SELECT count(*) FROM vectors WHERE doc_id LIKE 'obs_%_fact_1' AND field = 'fact' AND dim = 384");
    assert_eq!(facts, 120);
    // Embedding work is counted in token_usage as provider `embeddings`, outside the daily budget.
    let calls = w.count("SELECT coalesce(sum(calls), 0) FROM token_usage WHERE provider = 'embeddings' AND model = 'all-MiniLM-L6-v2'");
    let tokens = w.count("SELECT coalesce(sum(input_tokens), 0) FROM token_usage WHERE provider = 'embeddings'");
    assert!(calls > 0 && tokens >= 3 * calls, "embeddings usage: {calls} calls, {tokens} tokens");
    assert_eq!(
        w.status()["provider"]["tokens_today"],
        0,
        "embeddings do not spend the observer budget"
    );
    // The sqlite-vec index holds the same documents.
    memd::vectors::index::register_extension();
    let vec_rows: i64 = w.db().query_row("SELECT count(*) FROM vectors_bin", [], |r| r.get(0)).unwrap();
    assert_eq!(vec_rows, 480);

    // Forget: deleting the rows removes their documents from both tables.
    writer(&w)
        .execute(
            "DELETE FROM observations WHERE id IN (SELECT id FROM observations ORDER BY id LIMIT 10)",
            [],
        )
        .unwrap();
    assert_eq!(w.count("SELECT count(*) FROM vectors"), 440);
    assert!(wait_until(Duration::from_secs(30), || {
        w.db()
            .query_row("SELECT count(*) FROM vectors_bin", [], |r| r.get::<_, i64>(0))
            .unwrap()
            == 440
    }));
}

#[test]
fn a_data_dir_with_the_earlier_f32_index_gets_the_binary_index_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none");
    let mut w = TestWorker::start(&[("MEMD_EMBED_MODEL_DIR", missing.to_str().unwrap())]);
    w.stop();
    {
        // The layout of the first vector release: f32 rows and a float vec0 table `vectors_vec`.
        memd::vectors::index::register_extension();
        let c = writer(&w);
        c.execute_batch(
            "DROP TABLE IF EXISTS vectors_bin;
             CREATE VIRTUAL TABLE vectors_vec USING vec0(doc_id TEXT PRIMARY KEY, embedding float[384] distance_metric=cosine);",
        )
        .unwrap();
        let v: Vec<f32> = (0..384).map(|i| if i == 7 { 1.0 } else { 0.0 }).collect();
        let blob = memd::vectors::index::to_blob(&v);
        c.execute(
            "INSERT INTO vectors(doc_id, doc_kind, row_id, field, project, platform_source, created_at_epoch, model, dim, embedding)
             VALUES ('obs_1_narrative', 'observation', 1, 'narrative', 'p', 'claude', 0, 'all-MiniLM-L6-v2', 384, ?1)",
            [&blob],
        )
        .unwrap();
        c.execute("INSERT INTO vectors_vec(doc_id, embedding) VALUES ('obs_1_narrative', ?1)", [&blob])
            .unwrap();
    }
    w.spawn();
    let tables = |name: &str| w.count(&format!("SELECT count(*) FROM sqlite_master WHERE name = '{name}'"));
    assert!(
        wait_until(Duration::from_secs(30), || tables("vectors_bin") == 1),
        "vectors_bin built at start"
    );
    assert_eq!(tables("vectors_vec"), 0, "the f32 index is dropped");
    let rows: i64 = w.db().query_row("SELECT count(*) FROM vectors_bin", [], |r| r.get(0)).unwrap();
    assert_eq!(rows, 1, "built from the f32 rows");
}
