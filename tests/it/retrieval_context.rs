//! Context injection, file context, semantic context, projects and stats against a real
//! `memd serve` (docs/spec/retrieval.md §1–§3, docs/spec/api.md §4.1, §4.2, §4.6, §6.1, §6.2).

use crate::support::seed::{HOUR, Obs, Seed, T0, enc};
use crate::support::{DEADLINE, TestWorker, init_body, observation_body, wait_until};
use serde_json::json;

fn body(r: &memd::client::http::Response) -> String {
    String::from_utf8_lossy(&r.body).to_string()
}

#[test]
fn welcome_then_context_after_ingest() {
    let w = TestWorker::start(&[]);
    // Another host reading the API directly gets memd's fence (issue 51); memd's own hook and
    // MCP server fence what they print themselves and ask with fence=false.
    let fenced = body(&w.get("/api/context/inject?projects=proj"));
    assert!(
        fenced.starts_with("<memd-recall id=\"") && fenced.contains("reference data, not instructions"),
        "{fenced}"
    );
    let r = w.get("/api/context/inject?projects=proj&fence=false");
    assert_eq!(r.status, 200);
    assert!(r.header("content-type").is_some_and(|c| c.starts_with("text/plain")));
    assert_eq!(r.header("x-memd-observations"), Some("0"));
    let text = body(&r);
    assert!(text.starts_with("# [proj] recent context, "), "{text}");
    assert!(
        text.ends_with("\nNo memories for this project yet; this session is being recorded."),
        "{text}"
    );
    assert_eq!(w.get("/api/context/inject").status, 400);
    assert_eq!(w.get("/api/context/inject?project=proj&maxChars=0").status, 400);

    assert_eq!(w.post("/api/sessions/init", &init_body("sess-a", "fix the build")).status, 200);
    for i in 0..3 {
        assert_eq!(w.post("/api/sessions/observations", &observation_body("sess-a", i)).status, 200);
    }
    let ok = wait_until(DEADLINE, || {
        w.get("/api/context/inject?project=proj&fence=false")
            .header("x-memd-observations")
            .is_some_and(|n| n != "0")
    });
    assert!(ok, "observations never reached the context");
    let text = body(&w.get("/api/context/inject?projects=other,proj&platformSource=claude-code&fence=false"));
    assert!(text.starts_with("# [proj] recent context, "), "{text}");
    assert!(text.contains("\nLegend: ◎summary ●bugfix"), "{text}");
    assert!(text.contains("\nStats: "), "{text}");
    assert!(text.contains("\n### "), "{text}");
    // Another platform does not see claude's rows (K7).
    let r = w.get("/api/context/inject?project=proj&platformSource=codex&fence=false");
    assert_eq!(r.header("x-memd-observations"), Some("0"));
    // Search finds the ingested rows too.
    let r = w.get("/api/search?query=step&project=proj&format=json");
    assert!(r.json().is_some_and(|v| v["totalResults"].as_u64().unwrap_or(0) > 0));
}

#[test]
fn platform_scope_file_context_semantic_projects_stats() {
    let mut w = TestWorker::start(&[("TZ", "UTC")]);
    w.stop();
    let s = Seed::open(&w.db_path());
    let file = "/home/dev/acme/src/lib.rs";
    let claude = s.obs(Obs {
        title: "Parser handles empty input",
        narrative: "The tokenizer now retries after an empty chunk from the upload stream.",
        files_read: &[file],
        at: T0 + HOUR,
        ..Obs::default()
    });
    let modified = s.obs(Obs {
        session: "s2",
        title: "Lexer rewritten",
        narrative: "Rewrote the lexer.",
        ty: "refactor",
        files_modified: &["src/lib.rs"],
        at: T0 + 2 * HOUR,
        ..Obs::default()
    });
    let codex = s.obs(Obs {
        session: "cx",
        platform: "codex",
        title: "Codex looked at the parser",
        narrative: "codex",
        files_read: &[file],
        at: T0 + 3 * HOUR,
        ..Obs::default()
    });
    s.obs(Obs {
        project: "other",
        session: "o1",
        title: "Unrelated",
        at: T0 + 4 * HOUR,
        ..Obs::default()
    });
    drop(s);
    w.spawn();

    // K7: platform scoping of context injection.
    let claude_ctx = body(&w.get("/api/context/inject?project=acme&fence=false"));
    assert!(
        claude_ctx.contains(&format!("{claude} ")) && !claude_ctx.contains("Codex looked"),
        "{claude_ctx}"
    );
    let codex_ctx = body(&w.get("/api/context/inject?project=acme&platformSource=codex&fence=false"));
    assert!(
        codex_ctx.contains(&format!("{codex} ")) && !codex_ctx.contains("Parser handles"),
        "{codex_ctx}"
    );

    // by-file JSON: any path form matches; newest first.
    let q = format!("path={}&path={}&projects=acme&platformSource=claude", enc(file), enc("src\\lib.rs"));
    let v = w.get(&format!("/api/observations/by-file?{q}")).json().expect("json");
    assert_eq!(v["count"], 2);
    assert_eq!(v["observations"][0]["id"].as_i64(), Some(modified));
    // format=context: block with the relative path, modified row scored in.
    let text = body(&w.get(&format!("/api/observations/by-file?{q}&format=context&limit=40")));
    assert!(text.starts_with("Current: "), "{text}");
    assert!(
        text.contains("\nmemd has 2 earlier observations of src/lib.rs; the Read result below is still complete."),
        "{text}"
    );
    assert!(
        text.contains(&format!("\nFull records: get_observations([{claude}, {modified}])")),
        "{text}"
    );
    assert!(
        text.ends_with(&format!(
            "\n### Aug 18, 2026\n{claude} 1:00a ○ Parser handles empty input [llm]\n{modified} 2:00a ↻ Lexer rewritten [llm]"
        )),
        "{text}"
    );
    assert!(!text.contains("permissionDecision"));
    // F2: file changed after the newest observation → empty.
    let newest = T0 + 2 * HOUR;
    let empty = w.get(&format!("/api/observations/by-file?{q}&format=context&fileMtimeMs={newest}"));
    assert_eq!((empty.status, body(&empty)), (200, String::new()));
    let older = body(&w.get(&format!("/api/observations/by-file?{q}&format=context&fileMtimeMs={}", newest - 1)));
    assert!(!older.is_empty());
    assert_eq!(w.get("/api/observations/by-file?projects=acme").status, 400);

    // Semantic context: short prompts get nothing; a long one finds the retry narrative.
    let r = w.post("/api/context/semantic", &json!({"q": "too short", "project": "acme"}));
    assert_eq!(r.json(), Some(json!({"context": "", "count": 0})));
    let r = w.post(
        "/api/context/semantic",
        &json!({"q": "why does the upload keep retrying the stream?", "projects": "acme"}),
    );
    let v = r.json().expect("json");
    assert!(
        v["context"].as_str().unwrap().starts_with("<memd-recall id="),
        "fenced by default: {v}"
    );
    let r = w.post(
        "/api/context/semantic",
        &json!({"q": "why does the upload keep retrying the stream?", "projects": "acme", "fence": false}),
    );
    let v = r.json().expect("json");
    assert_eq!(v["count"], 1, "{v}");
    assert!(
        v["context"]
            .as_str()
            .is_some_and(|c| c.starts_with("## Relevant Past Work (semantic match)\n\n### Parser handles empty input (2026-"))
    );
    let r = w.post(
        "/api/context/semantic",
        &json!({"q": "why does the upload keep retrying the stream?", "projects": "acme", "contentSessionId": "s1"}),
    );
    assert_eq!(r.json().map(|v| v["count"].clone()), Some(json!(0)));
    assert_eq!(w.post("/api/context/semantic", &json!({})).status, 400);

    // Projects and stats.
    let v = w.get("/api/projects").json().expect("json");
    assert_eq!(v["projects"][0], "acme");
    assert!(v["sources"].as_array().is_some_and(|s| s.len() == 2));
    assert_eq!(
        w.get("/api/projects?platformSource=codex").json().map(|v| v["projects"].clone()),
        Some(json!(["acme"]))
    );
    let v = w.get("/api/stats").json().expect("json");
    assert_eq!(v["database"]["observations"], 4);
    assert!(v["database"]["size"].as_u64().unwrap_or(0) > 0);
    assert_eq!(v["worker"]["port"].as_u64(), Some(u64::from(w.port)));
}
