//! The raw archive in search: an identifier only a tool call holds finds the observation made from
//! that call, marked with the call; words in many calls are not asked; filters hold; forgetting the
//! observation takes its call out of the index.

use rusqlite::{Connection, params};

use super::*;
use crate::retrieval::scope::Scope;
use crate::retrieval::search::{SearchRequest, search};
use crate::store::tool_events::{ingest_tool_event, sample_event};

/// Calls in two projects, each with one observation made from it; in every call a busy
/// identifier (`common_word`) and a busy plain word (`rollout`).
fn database() -> Connection {
    let conn = crate::store::test_conn();
    let calls = [
        (
            "p",
            "src/tokenizer.js",
            "function debouncedUpdateTokens() { renderTokenAndText(); }",
        ),
        ("p", "src/render.py", "def get_library_version():\n    return VERSION"),
        ("q", "src/other.js", "function debouncedUpdateTokens() {}"),
        ("q", "src/more.js", "function helperOne() {}"),
    ];
    for (i, (project, file, text)) in calls.iter().enumerate() {
        let mut e = sample_event(&format!("s-{project}"), Some(&format!("t{i}")));
        e.seed.project = project.to_string();
        e.tool_name = "Edit".into();
        e.tool_input =
            serde_json::json!({"file_path": file, "old_string": "", "new_string": format!("{text} common_word rollout")}).to_string();
        ingest_tool_event(&conn, &e).unwrap();
        let call: i64 = conn.query_row("SELECT max(id) FROM tool_uses", [], |r| r.get(0)).unwrap();
        crate::store::raw_index::index_call(&conn, call, &e.tool_name, &e.tool_input, &e.tool_response).unwrap();
        let msid: String = conn
            .query_row("SELECT memory_session_id FROM sdk_sessions WHERE project = ?1", [project], |r| {
                r.get(0)
            })
            .unwrap();
        conn.execute(
            "INSERT INTO observations (memory_session_id, project, platform_source, type, title, files_modified, content_hash, origin, created_at, created_at_epoch)
             VALUES (?1, ?2, 'claude', 'change', ?3, ?4, ?5, 'extractive', '', ?6)",
            params![msid, project, format!("Edited {file}"), format!("[\"{file}\"]"), format!("h{i}"), i as i64],
        )
        .unwrap();
        let obs = conn.last_insert_rowid();
        conn.execute("INSERT INTO observation_sources VALUES (?1, ?2)", [obs, call])
            .unwrap();
    }
    conn
}

fn ask(conn: &Connection, query: &str, project: &str) -> crate::retrieval::search::SearchResult {
    search(conn, &SearchRequest::new(query, Scope::new(Some(vec![project.to_string()]), None))).unwrap()
}

fn titles(r: &crate::retrieval::search::SearchResult) -> Vec<String> {
    r.records
        .iter()
        .map(|rec| match rec {
            crate::retrieval::record_kind::Record::Observation(o) => o.title.clone().unwrap_or_default(),
            _ => String::new(),
        })
        .collect()
}

#[test]
fn an_identifier_only_a_call_holds_finds_the_observation_made_from_it() {
    let conn = database();
    for q in [
        "debouncedUpdateTokens",
        "where did we change renderTokenAndText?",
        "get_library_version",
    ] {
        let r = ask(&conn, q, "p");
        assert!(!r.records.is_empty(), "{q}: nothing found");
        assert!(r.matched_calls[0].is_some(), "{q}: marked as a raw match");
        let want = if q.contains("library") {
            "Edited src/render.py"
        } else {
            "Edited src/tokenizer.js"
        };
        assert_eq!(titles(&r)[0], want, "{q}");
        assert_eq!(r.records.len(), 1, "{q}: the other project's call stays out");
    }
    // Identifier parts match too.
    assert_eq!(titles(&ask(&conn, "library version", "p")), ["Edited src/render.py"]);
}

#[test]
fn the_json_names_the_matched_call() {
    let conn = database();
    let req = SearchRequest::new("debouncedUpdateTokens", Scope::new(Some(vec!["p".into()]), None));
    let res = search(&conn, &req).unwrap();
    let v = crate::retrieval::search_render::render_json(&req, &res);
    assert_eq!(v["ranked"][0]["matched"], "tool_use");
    assert_eq!(v["observations"][0]["matched"], "tool_use");
    assert!(v["ranked"][0]["tool_use_id"].as_i64().is_some());
}

#[test]
fn a_word_in_many_calls_is_not_asked_and_an_unknown_word_finds_nothing() {
    let conn = database();
    assert_eq!(selective_max(3), 64);
    assert_eq!(selective_max(100_000), 2_000);
    assert!(
        raw_hits(&conn, "nonexistentidentifier", &Filters::default(), 10)
            .unwrap()
            .is_empty()
    );
    // Every call holds both: the identifier (4 calls, limit 64) is asked and finds all four
    // observations; so does the plain word as the query's rarest (4 calls, limit 256), though a
    // plain word beside it in more than 3 calls is not asked.
    assert_eq!(raw_hits(&conn, "common_word", &Filters::default(), 10).unwrap().len(), 4);
    let held: i64 = conn
        .query_row("SELECT doc FROM tool_uses_vocab WHERE term = 'rollout'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(held, 4);
    assert_eq!(raw_hits(&conn, "rollout", &Filters::default(), 10).unwrap().len(), 4);
    let asked = asked_words(&conn, "where did we change rollout tokenizer").unwrap();
    assert_eq!(asked.selective, ["tokenizer"], "{asked:?}");
}

#[test]
fn forgetting_an_observation_takes_its_calls_out_of_the_index() {
    let conn = database();
    assert_eq!(ask(&conn, "renderTokenAndText", "p").records.len(), 1);
    let obs: i64 = conn
        .query_row("SELECT id FROM observations WHERE title = 'Edited src/tokenizer.js'", [], |r| {
            r.get(0)
        })
        .unwrap();
    let r = crate::store::forget::RecordRef {
        kind: crate::store::forget::RecordKind::Observation,
        id: obs,
    };
    assert!(crate::store::forget::forget_one(&conn, r, None, 1).unwrap());
    let left: i64 = conn
        .query_row(
            "SELECT count(*) FROM tool_uses_fts WHERE tool_uses_fts MATCH 'renderTokenAndText'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(left, 0);
    assert!(ask(&conn, "renderTokenAndText", "p").records.is_empty());
}

/// One call in project `s` with its own observation (`title`, `modified`).
fn call(conn: &Connection, n: usize, tool: &str, input: serde_json::Value, response: serde_json::Value, title: &str, modified: &str) {
    let mut e = sample_event("s-s", Some(&format!("u{n}")));
    e.seed.project = "s".into();
    e.tool_name = tool.into();
    e.tool_input = input.to_string();
    e.tool_response = response.to_string();
    ingest_tool_event(conn, &e).unwrap();
    let call: i64 = conn.query_row("SELECT max(id) FROM tool_uses", [], |r| r.get(0)).unwrap();
    crate::store::raw_index::index_call(conn, call, tool, &e.tool_input, &e.tool_response).unwrap();
    let msid: String = conn
        .query_row("SELECT memory_session_id FROM sdk_sessions WHERE project = 's'", [], |r| r.get(0))
        .unwrap();
    conn.execute(
        "INSERT INTO observations (memory_session_id, project, platform_source, type, title, files_modified, content_hash, origin, created_at, created_at_epoch)
         VALUES (?1, 's', 'claude', 'change', ?2, ?3, ?4, 'extractive', '', ?5)",
        params![msid, title, modified, format!("hs{n}"), n as i64],
    )
    .unwrap();
    let obs = conn.last_insert_rowid();
    conn.execute("INSERT INTO observation_sources VALUES (?1, ?2)", [obs, call])
        .unwrap();
}

#[test]
fn the_edit_that_wrote_a_word_outranks_a_read_a_test_log_and_a_neighbour_that_showed_it() {
    let conn = crate::store::test_conn();
    let css = ".card { color: red; }\n.menu { transition: opacity 0.2s ease; }";
    // Newest last: the calls that only showed the word come after the edit that wrote it.
    call(
        &conn,
        1,
        "Edit",
        serde_json::json!({"file_path": "web/style.css", "old_string": ".menu { }", "new_string": ".menu { transition: opacity 0.2s ease; }"}),
        serde_json::json!({"filePath": "web/style.css"}),
        "Edited web/style.css",
        "[\"web/style.css\"]",
    );
    call(
        &conn,
        2,
        "Read",
        serde_json::json!({"file_path": "web/style.css"}),
        serde_json::json!({"file": {"content": css}}),
        "Read web/style.css",
        "[]",
    );
    call(
        &conn,
        3,
        "Bash",
        serde_json::json!({"command": "npm test"}),
        serde_json::json!({"stdout": "PASS menu.test.js\n  ✓ menu has a transition (3 ms)"}),
        "Ran npm test",
        "[]",
    );
    call(
        &conn,
        4,
        "Edit",
        serde_json::json!({"file_path": "web/menu.test.js", "old_string": "it('menu has a transition')", "new_string": "it('menu fades')"}),
        serde_json::json!({"filePath": "web/menu.test.js"}),
        "Edited web/menu.test.js",
        "[\"web/menu.test.js\"]",
    );
    for q in ["transition", "where did we change transition?"] {
        let r = ask(&conn, q, "s");
        let t = titles(&r);
        assert_eq!(t.first().map(String::as_str), Some("Edited web/style.css"), "{q}: {t:?}");
        assert!(r.matched_calls[0].is_some(), "{q}: the explanation names the call");
        assert!(t.len() >= 2, "{q}: the calls that showed it are still found: {t:?}");
    }
}

#[test]
fn a_single_plain_word_a_stored_call_holds_is_never_empty() {
    let conn = crate::store::test_conn();
    // A word in 300 calls' output (more than any selective limit) and one only a read showed.
    for n in 0..300 {
        call(
            &conn,
            n,
            "Bash",
            serde_json::json!({"command": format!("ls dir{n}")}),
            serde_json::json!({"stdout": format!("templates{n} elements navigation")}),
            &format!("Listed dir{n}"),
            "[]",
        );
    }
    call(
        &conn,
        300,
        "Read",
        serde_json::json!({"file_path": "app/main.py"}),
        serde_json::json!({"file": {"content": "application = create_app()"}}),
        "Read app/main.py",
        "[]",
    );
    for q in ["navigation", "elements", "application"] {
        let r = search(&conn, &SearchRequest::new(q, Scope::new(None, None))).unwrap();
        assert!(!r.records.is_empty(), "{q}: empty although stored calls hold it");
    }
}

#[test]
fn a_written_json_file_is_words_and_a_batch_neighbour_is_not_the_change() {
    let conn = crate::store::test_conn();
    call(
        &conn,
        1,
        "Write",
        serde_json::json!({"file_path": "/r/tsconfig.json", "content": "{\"compilerOptions\": {\"strictNullChecks\": true}}"}),
        serde_json::json!({"type": "create"}),
        "Wrote tsconfig.json",
        "[\"tsconfig.json\"]",
    );
    // Another observation of the same batch (an LLM observer links every observation of a batch
    // to every call in it), about another file.
    let msid: String = conn
        .query_row("SELECT memory_session_id FROM sdk_sessions WHERE project = 's'", [], |r| r.get(0))
        .unwrap();
    conn.execute(
        "INSERT INTO observations (memory_session_id, project, platform_source, type, title, files_modified, content_hash, origin, created_at, created_at_epoch)
         VALUES (?1, 's', 'claude', 'change', 'Edited src/api.rs', '[\"src/api.rs\"]', 'hx', 'extractive', '', 99)",
        [msid],
    )
    .unwrap();
    let other = conn.last_insert_rowid();
    let first_call: i64 = conn.query_row("SELECT min(id) FROM tool_uses", [], |r| r.get(0)).unwrap();
    conn.execute("INSERT INTO observation_sources VALUES (?1, ?2)", [other, first_call])
        .unwrap();
    let r = ask(&conn, "strictNullChecks", "s");
    let t = titles(&r);
    assert_eq!(t.first().map(String::as_str), Some("Wrote tsconfig.json"), "{t:?}");
}
