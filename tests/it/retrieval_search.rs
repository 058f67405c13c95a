//! Search, timeline and records by id against a real `memd serve` with rows seeded into its
//! database (docs/spec/retrieval.md §4–§6; conformance Q1–Q4, Q7, Q8, L1–L3, G1; storage S4).

use crate::support::TestWorker;
use crate::support::seed::{HOUR, Obs, Seed, T0, enc};
use serde_json::{Value, json};

struct Ids {
    cjk: i64,
    cache: i64,
    upload: i64,
    decision: i64,
    summary: i64,
    prompt: i64,
}

/// Starts a worker, stops it, seeds rows, starts it again.
fn seeded() -> (TestWorker, Ids) {
    let mut w = TestWorker::start_in_process(&[]);
    w.stop();
    let s = Seed::open(&w.db_path());
    let cjk = s.obs(Obs {
        title: "缓存修复",
        narrative: "修复了缓存失效的问题",
        at: T0 + HOUR,
        ..Obs::default()
    });
    let cache = s.obs(Obs {
        title: "Cache fix",
        narrative: "Fixed cache invalidation",
        ty: "bugfix",
        concepts: &["gotcha"],
        files_modified: &["/src/cache.rs"],
        at: T0 + 2 * HOUR,
        ..Obs::default()
    });
    let upload = s.obs(Obs {
        title: "Upload retries with exponential backoff",
        narrative: "The flaky S3 upload now retries three times before failing the job.",
        ty: "decision",
        concepts: &["trade-off"],
        files_modified: &["/src/upload.rs"],
        at: T0 + 3 * HOUR,
        ..Obs::default()
    });
    let decision = s.obs(Obs {
        title: "Decided to keep tabs in the Makefile",
        narrative: "We decided what the indentation is about.",
        ty: "decision",
        at: T0 + 4 * HOUR,
        ..Obs::default()
    });
    for i in 0..30 {
        let title = format!("Routine change number {i} to the upload page layout");
        s.obs(Obs {
            title: &title,
            narrative: "Adjusted spacing and colours; nothing about failures.",
            ty: "change",
            project: if i % 2 == 0 { "acme" } else { "other" },
            at: T0 + 5 * HOUR + i * 60_000,
            ..Obs::default()
        });
    }
    s.obs(Obs {
        title: "Codex-side cache note",
        narrative: "cache seen from codex",
        platform: "codex",
        session: "cx",
        at: T0 + 6 * HOUR,
        ..Obs::default()
    });
    let summary = s.summary(
        "s1",
        "acme",
        "Add rate limiting to login endpoint",
        "Limiter keyed on client IP",
        T0 + 3 * HOUR + 60_000,
    );
    let prompt = s.prompt("s1", "acme", "please add rate limiting to the login endpoint", T0 + 30 * 60_000);
    drop(s);
    w.spawn_in_process();
    (
        w,
        Ids {
            cjk,
            cache,
            upload,
            decision,
            summary,
            prompt,
        },
    )
}

fn search(w: &TestWorker, q: &str, extra: &str) -> Value {
    let r = w.get(&format!("/api/search?query={}&format=json{extra}", enc(q)));
    assert_eq!(r.status, 200, "{q}: {}", String::from_utf8_lossy(&r.body));
    r.json().expect("json")
}

fn obs_ids(v: &Value) -> Vec<i64> {
    v["observations"]
        .as_array()
        .map(|a| a.iter().filter_map(|o| o["id"].as_i64()).collect())
        .unwrap_or_default()
}

#[test]
fn words_phrases_prefixes_cjk_and_malformed_queries() {
    let (w, ids) = seeded();
    // Q4 / S4: trigram, LIKE (2 chars), unicode61, prefix, and AND across routes.
    assert_eq!(obs_ids(&search(&w, "缓存失效", "")), vec![ids.cjk]);
    assert_eq!(obs_ids(&search(&w, "缓存", "")), vec![ids.cjk]);
    assert!(obs_ids(&search(&w, "cache", "&platformSource=claude")).contains(&ids.cache));
    assert!(!obs_ids(&search(&w, "cache", "&platformSource=claude")).contains(&ids.cjk));
    assert_eq!(obs_ids(&search(&w, "invalid*", "")), vec![ids.cache]);
    // No record holds both terms (the AND tier is empty); the natural fill still offers `cache`.
    let mixed = obs_ids(&search(&w, "缓存 cache", "&platformSource=claude"));
    assert!(!mixed.contains(&ids.cjk) && mixed.contains(&ids.cache), "{mixed:?}");
    // Phrase: exact word order.
    assert_eq!(obs_ids(&search(&w, "\"exponential backoff\"", "")), vec![ids.upload]);
    assert!(!obs_ids(&search(&w, "\"backoff exponential\"", "&type=observations")).contains(&ids.cache));
    // Summaries and prompts are searched too.
    let v = search(&w, "rate limiting", "");
    assert_eq!(v["sessions"][0]["id"].as_i64(), Some(ids.summary));
    assert_eq!(v["prompts"][0]["id"].as_i64(), Some(ids.prompt));
    assert_eq!(v["degraded"], json!([]));
    // Malformed input: never a 500.
    for q in [
        "foo AND (",
        "\"unbalanced",
        "cache OR (",
        "NEAR(a b)",
        "^*:-+",
        "\"",
        "*",
        "a\"b\"\"c",
        "cache:*",
        "))) \"\" (((",
    ] {
        for fmt in ["", "&format=json"] {
            let r = w.get(&format!("/api/search?query={}{fmt}", enc(q)));
            assert_eq!(r.status, 200, "{q}: {}", String::from_utf8_lossy(&r.body));
        }
    }
    assert!(obs_ids(&search(&w, "cache OR (", "")).contains(&ids.cache));
    // Text index.
    let r = w.get(&format!("/api/search?query={}", enc("invalidation")));
    let text = String::from_utf8_lossy(&r.body).to_string();
    assert!(
        text.starts_with("Found 1 results for \"invalidation\" (1 observations, 0 summaries, 0 prompts); showing 1–1, by relevance"),
        "{text}"
    );
    assert!(text.contains(&format!("| #{} | 2026-08-18 ", ids.cache)), "{text}");
    let r = w.get(&format!("/api/search?query={}", enc("zzzqqq")));
    assert_eq!(String::from_utf8_lossy(&r.body), "No results found matching \"zzzqqq\"");
}

#[test]
fn sentence_question_filters_paging_and_errors() {
    let (w, ids) = seeded();
    let v = search(&w, "what did we decide about retrying the flaky upload?", "&project=acme");
    let top: Vec<i64> = obs_ids(&v).into_iter().take(5).collect();
    assert!(top.contains(&ids.upload), "top 5 {top:?} lacks {}", ids.upload);
    assert_eq!(top.first(), Some(&ids.upload), "the retry/upload record ranks first");
    // Q7: obs_type filter with a query → decisions only, no summaries or prompts.
    let v = search(&w, "decided upload", "&obs_type=decision");
    let got = obs_ids(&v);
    assert!(got.contains(&ids.decision) && got.contains(&ids.upload), "{got:?}");
    assert_eq!(v["sessions"], json!([]));
    assert_eq!(v["prompts"], json!([]));
    // Filters combine: type + concept + file substring + project + dates.
    let v = search(
        &w,
        "",
        &format!(
            "&obs_type=decision&concepts=trade-off&files=upload.rs&project=acme&dateStart={}&dateEnd=2026-08-18",
            T0
        ),
    );
    assert_eq!(obs_ids(&v), vec![ids.upload]);
    let v = search(&w, "", "&obs_type=decision&concepts=gotcha");
    assert!(obs_ids(&v).is_empty());
    let v = search(&w, "cache", "&platformSource=codex");
    assert_eq!(obs_ids(&v).len(), 1);
    // Q8: filter-only listing, newest first, paging.
    let r = w.get("/api/search?project=acme&type=observations");
    let text = String::from_utf8_lossy(&r.body).to_string();
    assert!(
        text.starts_with("Found 20 items (20 observations, 0 summaries, 0 prompts); showing 1–20, newest first"),
        "{text}"
    );
    assert!(!text.contains("More: "), "{text}");
    let r = w.get("/api/search?project=acme&type=observations&limit=15");
    let text = String::from_utf8_lossy(&r.body).to_string();
    assert!(text.ends_with("More: offset=15"), "{text}");
    let r = w.get("/api/search?project=acme&type=observations&offset=15&limit=15&format=json");
    assert_eq!(r.json().map(|v| obs_ids(&v).len()), Some(5));
    // Errors.
    assert_eq!(w.get("/api/search").status, 400);
    assert_eq!(w.get("/api/search?query=x&limit=0").status, 400);
    assert_eq!(w.get("/api/search?query=x&orderBy=best").status, 400);
    assert_eq!(w.get("/api/search?query=x&dateStart=yesterday").status, 400);
}

#[test]
fn timeline_batch_and_single_records() {
    let (w, ids) = seeded();
    // L1: window around an observation.
    let r = w.get(&format!("/api/timeline?anchor=%23{}&depth_before=2&depth_after=2", ids.upload));
    assert_eq!(r.status, 200);
    let text = String::from_utf8_lossy(&r.body).to_string();
    assert!(
        text.starts_with(&format!("Timeline around #{} — acme (2 before, 2 after)", ids.upload)),
        "{text}"
    );
    assert!(text.contains(" <- anchor"));
    // L2: summary anchor; anchor and query both → 400.
    let r = w.get(&format!("/api/timeline?anchor=S{}&format=json", ids.summary));
    let v = r.json().expect("json");
    assert_eq!(v["anchor"], json!({"kind": "summary", "id": ids.summary}));
    assert_eq!(w.get("/api/timeline?anchor=1&query=x").status, 400);
    assert_eq!(w.get("/api/timeline").status, 400);
    // L3: ISO anchor after every item → the last item; depth out of range → 400.
    let r = w.get("/api/timeline?anchor=2030-01-01T00:00:00Z&depth_after=0&format=json");
    let v = r.json().expect("json");
    assert_eq!(v["items"].as_array().map(Vec::len), Some(6));
    assert_eq!(w.get("/api/timeline?anchor=1&depth_before=50").status, 400);
    // Query anchor; unknown anchor → 404 with the sentence.
    let r = w.get("/api/timeline?query=invalidation&format=json");
    assert_eq!(r.json().expect("json")["anchor"]["id"].as_i64(), Some(ids.cache));
    let r = w.get("/api/timeline?anchor=%2399999");
    assert_eq!(r.status, 404);
    assert_eq!(r.json().expect("json")["detail"], "Observation #99999 not found");
    // G1 over HTTP: mixed ids; missing ones left out.
    let r = w.post(
        "/api/observations/batch",
        &json!({"ids": [format!("#{}", ids.cache), format!("S{}", ids.summary), format!("P{}", ids.prompt), 99999]}),
    );
    assert_eq!(r.status, 200);
    let rows = r.json().expect("json");
    let kinds: Vec<&str> = rows.as_array().expect("array").iter().filter_map(|r| r["kind"].as_str()).collect();
    assert_eq!(kinds.len(), 3);
    assert!(kinds.contains(&"summary") && kinds.contains(&"prompt") && kinds.contains(&"observation"));
    assert_eq!(w.post("/api/observations/batch", &json!({"ids": ["x1"]})).status, 400);
    assert_eq!(w.post("/api/observations/batch", &json!({"ids": []})).json(), Some(json!([])));
    // Single observation.
    let r = w.get(&format!("/api/observation/{}", ids.cjk));
    assert_eq!(r.json().expect("json")["narrative"], "修复了缓存失效的问题");
    assert_eq!(w.get("/api/observation/abc").status, 400);
    assert_eq!(w.get("/api/observation/99999").status, 404);
    assert_eq!(w.get(&format!("/api/observation/{}?project=other", ids.cjk)).status, 404);
}
