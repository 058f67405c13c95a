//! Memory management routes against a real worker: save_memory, forget (single, bulk), pending
//! retry, gc (docs/spec/api.md §5, §6.4).

use crate::support::TestWorker;
use serde_json::json;

#[test]
fn save_memory_answers_and_reinforces() {
    let w = TestWorker::start_in_process(&[]);
    let body = json!({"text": "Prices are integer cents in the shop", "project": "shop", "concepts": ["gotcha"]});
    let a = w.post("/api/memory/save", &body);
    assert_eq!(a.status, 200, "{}", a.text());
    let a = a.json().unwrap();
    assert_eq!(a["success"], true);
    assert_eq!(a["project"], "shop");
    assert_eq!(a["title"], "Prices are integer cents in the shop");
    assert_eq!(a["reinforced"], false);
    assert_eq!(a["occurrenceCount"], 1);
    let id = a["id"].as_i64().unwrap();
    assert_eq!(a["message"], format!("Memory saved as observation #{id}"));

    let b = w.post("/api/memory/save", &body).json().unwrap();
    assert_eq!(
        (b["id"].as_i64(), b["reinforced"].as_bool(), b["occurrenceCount"].as_i64()),
        (Some(id), Some(true), Some(2))
    );

    let db = w.db();
    let (msid, subtitle, origin): (String, String, String) = db
        .query_row(
            "SELECT memory_session_id, subtitle, origin FROM observations WHERE id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!(
        (msid.as_str(), subtitle.as_str(), origin.as_str()),
        ("manual-shop", "Manual memory", "manual")
    );
    let content: String = db
        .query_row(
            "SELECT content_session_id FROM sdk_sessions WHERE memory_session_id = 'manual-shop'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(content, "manual-content-shop");
}

#[test]
fn save_memory_validation_and_privacy() {
    let w = TestWorker::start_in_process(&[]);
    for (body, needle) in [
        (json!({"text": "x", "bogus": 1}), "unknown field"),
        (json!({"text": "   "}), "empty"),
        (json!({"text": "<private>only secret</private>"}), "privacy"),
        (json!({"text": "x", "type": "nonsense"}), "type"),
        (json!({"title": "no text"}), "text"),
    ] {
        let r = w.post("/api/memory/save", &body);
        assert_eq!(r.status, 400, "{body}");
        assert!(r.text().contains(needle), "{body}: {}", r.text());
    }
    let long = "word ".repeat(20);
    let r = w
        .post(
            "/api/memory/save",
            &json!({"text": format!("{long} key AKIAIOSFODNN7EXAMPLE"), "metadata": {"project": "meta-proj"}}),
        )
        .json()
        .unwrap();
    assert_eq!(r["project"], "meta-proj");
    assert!(r["title"].as_str().unwrap().ends_with("..."));
    let narrative: String = w
        .db()
        .query_row(
            "SELECT narrative FROM observations WHERE id = ?1",
            [r["id"].as_i64().unwrap()],
            |x| x.get(0),
        )
        .unwrap();
    assert!(narrative.contains("<redacted type='aws_access_key'/>"), "{narrative}");
    assert_eq!(w.count("SELECT count(*) FROM observations"), 1, "failed requests store nothing");
}

#[test]
fn delete_observation_leaves_tombstone_and_no_index() {
    let w = TestWorker::start_in_process(&[]);
    let id = w
        .post(
            "/api/memory/save",
            &json!({"text": "flaky upload retried three times", "project": "p"}),
        )
        .json()
        .unwrap()["id"]
        .as_i64()
        .unwrap();
    let r = w.request("DELETE", &format!("/api/observation/{id}?reason=wrong"), None);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(
        r.json().unwrap(),
        json!({"success": true, "id": id, "kind": "observation", "vectors": "none"})
    );
    let again = w.request("DELETE", &format!("/api/observation/{id}"), None);
    assert_eq!(again.status, 404);
    assert_eq!(again.json().unwrap()["detail"], format!("Observation #{id} not found"));
    assert_eq!(w.request("DELETE", "/api/observation/abc", None).status, 400);
    assert_eq!(w.request("DELETE", "/api/summary/999", None).status, 404);
    assert_eq!(
        w.count("SELECT count(*) FROM observations_fts WHERE observations_fts MATCH 'flaky'"),
        0
    );
    assert_eq!(
        w.count("SELECT count(*) FROM observations_tri WHERE observations_tri MATCH 'flaky'"),
        0
    );
    assert_eq!(w.count("SELECT count(*) FROM tombstones WHERE reason = 'wrong'"), 1);
    // The same memory saved explicitly again is stored anew (a new id; ids are never reused).
    let again = w.post(
        "/api/memory/save",
        &json!({"text": "flaky upload retried three times", "project": "p"}),
    );
    assert!(again.json().unwrap()["id"].as_i64().unwrap() > id);
}

#[test]
fn bulk_forget_selectors_and_dry_run() {
    let w = TestWorker::start_in_process(&[]);
    for i in 0..3 {
        assert_eq!(
            w.post("/api/memory/save", &json!({"text": format!("note {i}"), "project": "bulk"}))
                .status,
            200
        );
    }
    assert_eq!(
        w.post("/api/memory/save", &json!({"text": "keep me", "project": "other"})).status,
        200
    );
    assert_eq!(w.post("/api/forget", &json!({})).status, 400);
    assert_eq!(w.post("/api/forget", &json!({"project": "bulk", "ids": [1]})).status, 400);
    let dry = w.post("/api/forget", &json!({"project": "bulk", "dryRun": true})).json().unwrap();
    assert_eq!(
        dry,
        json!({"success": true, "dryRun": true, "observations": 3, "summaries": 0, "prompts": 0})
    );
    assert_eq!(w.count("SELECT count(*) FROM observations"), 4);
    let past = w
        .post("/api/forget", &json!({"project": "bulk", "before": "2000-01-01"}))
        .json()
        .unwrap();
    assert_eq!(past["observations"], 0);
    let done = w.post("/api/forget", &json!({"project": "bulk"})).json().unwrap();
    assert_eq!(done["observations"], 3);
    let by_session = w
        .post("/api/forget", &json!({"contentSessionId": "manual-content-other"}))
        .json()
        .unwrap();
    assert_eq!(by_session["observations"], 1);
    assert_eq!(w.count("SELECT count(*) FROM observations"), 0);
}

#[test]
fn pending_retry_requeues_failed_rows() {
    let w = TestWorker::start_in_process(&[]);
    assert_eq!(
        w.post("/api/pending/retry", &json!({})).json().unwrap(),
        json!({"requeued": 0, "sessions": 0})
    );
    assert_eq!(w.post("/api/pending/retry", &json!({"ids": "x"})).status, 400);
    {
        let db = rusqlite::Connection::open(w.db_path()).unwrap();
        db.busy_timeout(std::time::Duration::from_secs(5)).unwrap();
        db.execute_batch(
            "INSERT INTO sdk_sessions(content_session_id, memory_session_id, project, status, started_at, started_at_epoch, last_event_epoch)
               VALUES ('s-failed', 'memd-claude-s-failed', 'p', 'failed', '', 0, 0);
             INSERT INTO pending_messages(session_db_id, content_session_id, message_type, status, attempts, last_assistant_message, created_at_epoch)
               SELECT id, 's-failed', 'summarize', 'failed', 3, 'done', 0 FROM sdk_sessions WHERE content_session_id = 's-failed';",
        )
        .unwrap();
    }
    let r = w
        .post("/api/pending/retry", &json!({"contentSessionId": "s-failed"}))
        .json()
        .unwrap();
    assert_eq!(r, json!({"requeued": 1, "sessions": 1}));
    assert_eq!(w.count("SELECT count(*) FROM pending_messages WHERE status = 'failed'"), 0);
    assert_eq!(w.count("SELECT count(*) FROM sdk_sessions WHERE status = 'failed'"), 0);
}

#[test]
fn gc_through_the_worker() {
    let w = TestWorker::start_in_process(&[]);
    let dry = w.post("/api/admin/gc", &json!({"dryRun": true})).json().unwrap();
    assert_eq!(dry["dryRun"], true);
    assert_eq!(dry["total"], 0);
    let run = w.post("/api/admin/gc", &json!({"vacuum": true})).json().unwrap();
    assert_eq!(run["vacuumed"], true);
    assert_eq!(
        w.count("SELECT count(*) FROM meta WHERE key IN ('last_retention_epoch', 'last_vacuum_epoch')"),
        2
    );
    // The worker still writes after VACUUM.
    assert_eq!(w.post("/api/memory/save", &json!({"text": "after vacuum"})).status, 200);
}
