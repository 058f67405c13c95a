use super::*;
use crate::observer::types::{BatchMeta, BatchOutput, ObservationDraft};
use crate::retrieval::related::{RelatedRequest, related};
use crate::store::batch::store_batch;
use crate::store::tool_events::{ingest_tool_event, sample_event};
use serde_json::json;

const T0: i64 = 1_787_011_200_000;

/// Stores one tool call of session `s1` (project `shop`, root `/r`); returns its row id.
fn call(conn: &Connection, n: usize, tool: &str, input: serde_json::Value, response: &str, is_error: bool) -> i64 {
    let mut e = sample_event("s1", Some(&format!("t{n}")));
    (e.tool_name, e.tool_input, e.tool_response, e.is_error) = (tool.into(), input.to_string(), response.into(), is_error);
    (e.now, e.occurred_at) = (T0 + n as i64, T0 + n as i64);
    ingest_tool_event(conn, &e).unwrap();
    conn.query_row("SELECT max(id) FROM tool_uses", [], |r| r.get(0)).unwrap()
}

/// One batch of those calls becoming one observation; returns its id.
fn batch(conn: &Connection, rows: Vec<i64>, title: &str, concepts: &[&str]) -> i64 {
    let (session, memory): (i64, String) = conn
        .query_row(
            "SELECT id, memory_session_id FROM sdk_sessions WHERE content_session_id = 's1'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let meta = BatchMeta::first_prompt((session, &memory, "s1"), "shop", "/r", T0);
    let o = ObservationDraft {
        obs_type: "change".into(),
        title: Some(title.into()),
        narrative: Some(title.into()),
        concepts: concepts.iter().map(|c| c.to_string()).collect(),
        ..Default::default()
    };
    store_batch(conn, &meta, &BatchOutput::extractive(vec![o], None, rows), T0)
        .unwrap()
        .observation_ids[0]
}

fn ask(conn: &Connection, entity: &str) -> crate::retrieval::related::Related {
    let req = RelatedRequest {
        entity: entity.into(),
        project: Some("shop".into()),
        kinds: vec![],
        limit: 20,
    };
    related(conn, &req).unwrap()
}

fn edge<'a>(r: &'a crate::retrieval::related::Related, entity: &str, relation: &str) -> Option<&'a crate::retrieval::related::Neighbour> {
    r.related.iter().find(|n| n.entity == entity && n.relation == relation)
}

#[test]
fn a_failing_then_passing_test_relates_the_fix_with_its_evidence() {
    let conn = crate::store::test_conn();
    let a = batch(
        &conn,
        vec![
            call(
                &conn,
                1,
                "Edit",
                json!({"file_path": "/r/src/cart.rs", "new_string": "pub fn total_cents() {}"}),
                "{}",
                false,
            ),
            call(
                &conn,
                2,
                "Edit",
                json!({"file_path": "/r/tests/cart.rs", "new_string": "#[test]\nfn rounds() {}"}),
                "{}",
                false,
            ),
            call(
                &conn,
                3,
                "Bash",
                json!({"command": "cargo test cart"}),
                r#"{"stdout":"test cart::rounds ... FAILED"}"#,
                true,
            ),
        ],
        "Cart totals in cents; the rounding test fails",
        &["rounding"],
    );
    let b = batch(
        &conn,
        vec![
            call(
                &conn,
                4,
                "Edit",
                json!({"file_path": "/r/src/money.rs", "new_string": "x"}),
                "{}",
                false,
            ),
            call(
                &conn,
                5,
                "Bash",
                json!({"command": "cd /r && cargo test cart 2>&1"}),
                r#"{"stdout":"test result: ok"}"#,
                false,
            ),
        ],
        "Money rounds half-even; the cart test passes",
        &[],
    );
    let money = ask(&conn, "src/money.rs");
    let fix = edge(&money, "cargo test cart", "fixes").expect("the fix");
    assert_eq!((fix.direction, fix.evidence.clone(), fix.stale), ("out", vec![b], false));
    let test = ask(&conn, "cargo test cart");
    assert!(edge(&test, "src/money.rs", "fixes").is_some_and(|n| n.direction == "in"));
    assert!(
        edge(&test, "src/cart.rs", "fixes").is_none(),
        "edited before the failure: not the fix"
    );
    assert!(edge(&test, "test cart::rounds ... FAILED", "fails_with").is_some());
    // By its absolute path (an alias) and by the end of its path.
    let cart = ask(&conn, "/r/src/cart.rs");
    assert_eq!(
        edge(&cart, "tests/cart.rs", "modified_with").map(|n| n.evidence.clone()),
        Some(vec![a])
    );
    assert!(edge(&cart, "total_cents", "defines").is_some());
    assert!(edge(&cart, "rounding", "mentions").is_some());
    assert_eq!(ask(&conn, "cart.rs").matched.len(), 2, "src/cart.rs and tests/cart.rs");
    assert!(edge(&ask(&conn, "tests/cart.rs"), "rounds", "tests").is_some());

    // A quarantined observation is no evidence; a forgotten one takes its relations with it.
    conn.execute("UPDATE observations SET quarantined = 1 WHERE id = ?1", [b]).unwrap();
    assert!(edge(&ask(&conn, "src/money.rs"), "cargo test cart", "fixes").is_none());
    conn.execute("DELETE FROM observations WHERE id = ?1", [a]).unwrap();
    assert!(edge(&ask(&conn, "src/cart.rs"), "tests/cart.rs", "modified_with").is_none());
}

#[test]
fn stale_evidence_marks_the_edge_and_the_backfill_rebuilds_a_graph() {
    let conn = crate::store::test_conn();
    let rows = vec![
        call(&conn, 1, "Edit", json!({"file_path": "/r/a.rs", "new_string": "x"}), "{}", false),
        call(
            &conn,
            2,
            "Write",
            json!({"file_path": "/r/b.rs", "content": "fn beta() {}"}),
            "{}",
            false,
        ),
    ];
    let id = batch(&conn, rows, "a and b together", &[]);
    conn.execute("UPDATE observations SET stale_at_epoch = 1 WHERE id = ?1", [id])
        .unwrap();
    assert!(edge(&ask(&conn, "a.rs"), "b.rs", "modified_with").is_some_and(|n| n.stale));
    // A store from before the graph: no graph rows, then the backfill.
    conn.execute_batch("DELETE FROM relations; DELETE FROM entities;").unwrap();
    assert_eq!(backfill_chunk(&conn, 100, T0).unwrap(), 0, "nothing before the graph existed");
    conn.execute("UPDATE meta SET value = ?1 WHERE key = 'graph_backfill_until'", [id.to_string()])
        .unwrap();
    assert!(ask(&conn, "a.rs").related.is_empty());
    assert_eq!(backfill_chunk(&conn, 100, T0).unwrap(), 1);
    assert_eq!(backfill_chunk(&conn, 100, T0).unwrap(), 0, "the cursor moved on");
    assert_eq!(
        edge(&ask(&conn, "a.rs"), "b.rs", "modified_with").map(|n| n.evidence.clone()),
        Some(vec![id])
    );
}

#[test]
fn a_decision_is_related_to_its_files_with_only_itself_as_evidence() {
    let conn = crate::store::test_conn();
    let row = call(
        &conn,
        1,
        "Edit",
        json!({"file_path": "/r/src/money.rs", "old_string": "f64", "new_string": "i64"}),
        "ok",
        false,
    );
    let (session, memory): (i64, String) = conn
        .query_row(
            "SELECT id, memory_session_id FROM sdk_sessions WHERE content_session_id = 's1'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let meta = BatchMeta::first_prompt((session, &memory, "s1"), "shop", "/r", T0);
    let draft = |t: &str, title: &str| ObservationDraft {
        obs_type: t.into(),
        title: Some(title.into()),
        // An observer's list may name a file no call of the batch touched: not evidence.
        files_modified: vec!["/r/src/money.rs".into(), "/r/src/invented.rs".into()],
        ..Default::default()
    };
    let out = BatchOutput::extractive(
        vec![draft("change", "money in i64"), draft("decision", "Store money as integer cents")],
        None,
        vec![row],
    );
    let ids = store_batch(&conn, &meta, &out, T0).unwrap().observation_ids;
    let r = ask(&conn, "src/money.rs");
    let d = edge(&r, "Store money as integer cents", "decided").expect("the decision");
    assert_eq!((d.kind.as_str(), d.direction, d.evidence.clone()), ("decision", "in", vec![ids[1]]));
    let back = ask(&conn, "Store money as integer cents");
    assert!(edge(&back, "src/money.rs", "decided").is_some());
    assert_eq!(back.related.len(), 1, "the invented file is not related: {:?}", back.related);
}

#[test]
fn a_symbol_in_a_query_leads_to_the_edit_that_wrote_it_unless_two_files_define_it() {
    let conn = crate::store::test_conn();
    let edit = |n: usize, text: &str| {
        let input = json!({"file_path": "/r/src/cart.rs", "old_string": "x", "new_string": text});
        call(&conn, n, "Edit", input, "ok", false)
    };
    let defined = batch(
        &conn,
        vec![edit(1, "pub fn apply_discount(c: &mut Cart) {}")],
        "cart discounts",
        &[],
    );
    let later = batch(&conn, vec![edit(2, "pub fn total(c: &Cart) -> i64 { 0 }")], "cart totals", &[]);
    let scope = crate::retrieval::Scope::new(Some(vec!["shop".into()]), None);
    let ids = crate::retrieval::graph_expand::expand(&conn, "Where did we change apply_discount?", &scope).unwrap();
    assert_eq!(ids, [defined], "the edit that wrote the symbol");
    assert!(!ids.contains(&later), "a later change of the file that did not write it");
    batch(
        &conn,
        vec![call(
            &conn,
            3,
            "Edit",
            json!({"file_path": "/r/src/shelf.rs", "old_string": "x", "new_string": "fn apply_discount() {}"}),
            "ok",
            false,
        )],
        "shelf",
        &[],
    );
    let ambiguous = crate::retrieval::graph_expand::expand(&conn, "apply_discount", &scope).unwrap();
    assert!(ambiguous.is_empty(), "defined in two files: no expansion");
    let wrote = batch(
        &conn,
        vec![call(
            &conn,
            4,
            "Edit",
            json!({"file_path": "/r/src/order.rs", "old_string": "x", "new_string": "fn order_total() {}"}),
            "ok",
            false,
        )],
        "order",
        &[],
    );
    let run = call(&conn, 5, "Bash", json!({"command": "cargo test order_total"}), "ok", false);
    batch(&conn, vec![run], "tests ran", &[]);
    let expand = |q: &str| crate::retrieval::graph_expand::expand(&conn, q, &scope).unwrap();
    assert_eq!(expand("Where did we change order_total?"), [wrote]);
    assert!(
        expand("How did we run cargo test order_total?").is_empty(),
        "a question about a command is not expanded"
    );
    let elsewhere = crate::retrieval::Scope::new(Some(vec!["other".into()]), None);
    assert!(
        crate::retrieval::graph_expand::expand(&conn, "apply_discount", &elsewhere)
            .unwrap()
            .is_empty()
    );
    assert!(
        crate::retrieval::graph_expand::expand(&conn, "where is the cart", &scope)
            .unwrap()
            .is_empty()
    );
}
