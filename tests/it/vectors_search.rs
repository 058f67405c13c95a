//! Hybrid search end to end (needs `MEMD_TEST_MODEL_DIR`; skips with a message without it): a query
//! sharing no word with the stored narrative still finds it, the semantic injection uses vectors,
//! the in-memory code index takes over after the first query and follows other writers, and a
//! broken vector side answers keyword results with `degraded: ["vectors"]`, never an error.

use std::time::Duration;

use crate::support::{TestWorker, model_dir, wait_until};
use serde_json::{Value, json};

const DISTRACTORS: [&str; 12] = [
    "Fixed the flaky login test by mocking the clock",
    "Added rate limiting to the login endpoint",
    "Migrated the orders table to a new schema version",
    "The CSS grid layout breaks on narrow screens",
    "Upgraded the HTTP client library and its TLS backend",
    "Daemon stop command documented in the README",
    "Cleanly formatted the code with rustfmt",
    "Cache invalidation bug in the product catalogue",
    "Refactored the payment provider adapter",
    "Investigated slow queries on the search page",
    "How the build pipeline caches dependencies",
    "Added a coupon code field to the checkout form",
];
const TARGET: &str = "Graceful shutdown on SIGTERM: drain in-flight requests, flush the write queue, then exit";

fn seed(w: &TestWorker) -> i64 {
    let c = rusqlite::Connection::open(w.db_path()).unwrap();
    c.busy_timeout(Duration::from_secs(10)).unwrap();
    c.execute(
        "INSERT INTO sdk_sessions(content_session_id, memory_session_id, project, started_at, started_at_epoch, last_event_epoch)
         VALUES ('s', 'memd-claude-s', 'proj', 'x', 0, 0)",
        [],
    )
    .unwrap();
    let mut target = 0;
    for (i, text) in DISTRACTORS.iter().chain([&TARGET]).enumerate() {
        c.execute(
            "INSERT INTO observations(memory_session_id, project, platform_source, type, title, narrative, content_hash, origin, created_at, created_at_epoch)
             VALUES ('memd-claude-s', 'proj', 'claude', 'discovery', ?1, ?2, ?3, 'manual', 'x', ?4)",
            rusqlite::params![text, text, format!("h{i}"), 1_700_000_000_000i64 + i as i64],
        )
        .unwrap();
        target = c.last_insert_rowid();
    }
    target
}

fn search(w: &TestWorker, q: &str) -> Value {
    let path = format!("/api/search?format=json&type=observations&query={}", q.replace(' ', "%20"));
    let r = w.get(&path);
    assert_eq!(r.status, 200, "{}", r.text());
    r.json().unwrap()
}

#[test]
fn a_query_sharing_no_word_finds_the_observation_in_the_top_three() {
    let Some(model) = model_dir() else { return };
    let w = TestWorker::start(&[("MEMD_EMBED_MODEL_DIR", &model)]);
    let target = seed(&w);
    assert!(wait_until(Duration::from_secs(120), || {
        let v = &w.status()["vectors"];
        v["state"] == "ok" && v["backfill"]["done"] == 13
    }));
    assert_found_in_top_three(&w, target);

    let sem = w
        .post(
            "/api/context/semantic",
            &json!({"q": "how do we stop the daemon cleanly without losing writes", "projects": "proj"}),
        )
        .json()
        .unwrap();
    assert!(sem["context"].as_str().unwrap().contains("Graceful shutdown"), "{sem}");
}

/// The first vector query is answered by sqlite-vec while the in-memory code index builds; later
/// ones by the index, which follows rows deleted and added by another connection.
#[test]
fn the_code_index_answers_after_the_first_query_and_follows_other_writers() {
    let Some(model) = model_dir() else { return };
    let w = TestWorker::start(&[("MEMD_EMBED_MODEL_DIR", &model)]);
    let target = seed(&w);
    let embedded = |n: i64| {
        wait_until(Duration::from_secs(120), || {
            let v = &w.status()["vectors"];
            v["state"] == "ok" && v["backfill"]["done"] == n
        })
    };
    assert!(embedded(13));
    assert_eq!(w.status()["vectors"]["index"], "sqlite-vec", "built on first use, not at start");
    assert_found_in_top_three(&w, target);
    assert!(
        wait_until(Duration::from_secs(30), || w.status()["vectors"]["index"] == "sign-codes"),
        "{}",
        w.status()["vectors"]
    );
    assert_found_in_top_three(&w, target);
    // Another connection forgets the target (its documents go with it) and adds a paraphrase.
    let c = rusqlite::Connection::open(w.db_path()).unwrap();
    c.busy_timeout(Duration::from_secs(10)).unwrap();
    c.execute("DELETE FROM observations WHERE id = ?1", [target]).unwrap();
    c.execute(
        "INSERT INTO observations(memory_session_id, project, platform_source, type, title, narrative, content_hash, origin, created_at, created_at_epoch)
         VALUES ('memd-claude-s', 'proj', 'claude', 'discovery', 'Stopping', 'On SIGTERM the worker finishes open requests and flushes queued writes before exiting', 'h-new', 'manual', 'x', 1700000000100)",
        [],
    )
    .unwrap();
    let added = c.last_insert_rowid();
    assert!(embedded(13), "{}", w.status()["vectors"]);
    assert_found_in_top_three(&w, added);
    let ids: Vec<i64> = search(&w, "how do we stop the daemon cleanly")["observations"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| o["id"].as_i64())
        .collect();
    assert!(!ids.contains(&target), "a forgotten row is not found: {ids:?}");
}

#[test]
fn a_broken_vector_side_degrades_to_keyword_results() {
    if model_dir().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for f in ["model.safetensors", "tokenizer.json", "config.json"] {
        std::fs::write(dir.path().join(f), "not a model").unwrap();
    }
    let w = TestWorker::start(&[("MEMD_EMBED_MODEL_DIR", dir.path().to_str().unwrap())]);
    seed(&w);
    let res = search(&w, "coupon checkout");
    assert_eq!(res["degraded"], json!(["vectors"]));
    assert_eq!(res["observations"].as_array().unwrap().len(), 1, "{res}");
    let text = w.get("/api/search?query=coupon%20checkout").text();
    assert!(text.contains("(semantic ranking unavailable:"), "{text}");
}

/// `MEMD_EMBED_ENCODER=static`: the worker distils (or reads) the table beside the model, switching
/// to it re-embeds every document under its own model name, and the query sharing no word with the
/// narrative still finds it.
#[test]
fn switching_to_the_static_encoder_re_embeds_everything_and_still_finds_by_meaning() {
    let Some(model) = model_dir() else { return };
    let mut w = TestWorker::start(&[("MEMD_EMBED_MODEL_DIR", &model)]);
    let target = seed(&w);
    let embedded = |w: &TestWorker, model: &str| {
        let v = &w.status()["vectors"];
        v["state"] == "ok" && v["model"] == model && v["backfill"]["done"] == 13
    };
    assert!(wait_until(Duration::from_secs(120), || embedded(&w, "all-MiniLM-L6-v2")));
    let docs = w.count("SELECT count(*) FROM vectors");
    assert_eq!(w.count("SELECT count(*) FROM vectors WHERE model = 'all-MiniLM-L6-v2'"), docs);
    w.stop();
    w.env.push(("MEMD_EMBED_ENCODER".into(), "static".into()));
    w.spawn();
    assert!(
        wait_until(Duration::from_secs(300), || embedded(&w, "all-MiniLM-L6-v2-static")),
        "{}",
        w.status()["vectors"]
    );
    assert_eq!(
        w.count("SELECT count(*) FROM vectors WHERE model = 'all-MiniLM-L6-v2-static'"),
        docs
    );
    assert_eq!(
        w.count("SELECT count(*) FROM vectors"),
        docs,
        "nothing left of the transformer's vectors"
    );
    assert_found_in_top_three(&w, target);
}

/// The query sharing no word with the target finds it among the first three, undegraded.
fn assert_found_in_top_three(w: &TestWorker, target: i64) {
    let res = search(w, "how do we stop the daemon cleanly");
    assert_eq!(res["degraded"], json!([]));
    let ids: Vec<i64> = res["observations"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| o["id"].as_i64())
        .collect();
    let pos = ids.iter().position(|id| *id == target);
    assert!(pos.is_some_and(|p| p < 3), "target #{target} at {pos:?} in {ids:?}");
}
