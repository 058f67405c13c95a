use super::*;
use serde_json::json;

fn call(id: i64, tool: &str, input: Value, response: &str, is_error: bool) -> Call {
    Call {
        id,
        tool_name: tool.into(),
        input,
        response: response.into(),
        is_error,
    }
}

fn edit(id: i64, path: &str, new: &str) -> Call {
    call(
        id,
        "Edit",
        json!({"file_path": path, "old_string": "x", "new_string": new}),
        "{}",
        false,
    )
}

fn bash(id: i64, cmd: &str, out: &str, is_error: bool) -> Call {
    call(id, "Bash", json!({"command": cmd}), out, is_error)
}

fn has(f: &Facts, src: &str, kind: RelationKind, dst: &str) -> bool {
    f.relations.iter().any(|r| r.src.1 == src && r.dst.1 == dst && r.kind == kind)
}

#[test]
fn co_edited_files_symbols_and_a_failing_command() {
    let calls = [
        edit(
            1,
            "/r/shop/src/cart.rs",
            "use rust_decimal::Decimal;\npub fn total_cents() -> i64 { 0 }",
        ),
        edit(2, "/r/shop/tests/cart.rs", "#[test]\nfn totals_round_down() {}"),
        call(3, "Read", json!({"file_path": "/r/shop/README.md"}), "{}", false),
        bash(
            4,
            "cd /r/shop && cargo test cart",
            r#"{"stdout":"test cart::totals_round_down ... FAILED"}"#,
            true,
        ),
    ];
    let f = extract(&calls, Some("/r/shop"), &["Rounding".to_string()]);
    assert!(has(&f, "src/cart.rs", RelationKind::ModifiedWith, "tests/cart.rs"));
    assert!(has(&f, "src/cart.rs", RelationKind::Defines, "total_cents"));
    assert!(has(&f, "src/cart.rs", RelationKind::DependsOn, "rust_decimal"));
    assert!(has(&f, "tests/cart.rs", RelationKind::Tests, "totals_round_down"));
    assert!(has(
        &f,
        "cargo test cart",
        RelationKind::FailsWith,
        "test cart::totals_round_down ... FAILED"
    ));
    assert!(has(&f, "rounding", RelationKind::Mentions, "src/cart.rs"));
    let cart = f.entities.iter().find(|e| e.name == "src/cart.rs").unwrap();
    assert_eq!(cart.aliases, vec!["/r/shop/src/cart.rs".to_string()]);
    assert!(!f.entities.iter().any(|e| e.name.contains("README")), "a read file is not an edit");
}

#[test]
fn a_single_edit_relates_no_files_and_a_passing_command_no_error() {
    let f = extract(&[edit(1, "/r/a.rs", "x"), bash(2, "cargo build", "{}", false)], Some("/r"), &[]);
    assert!(f.relations.is_empty(), "{:?}", f.relations);
    assert_eq!(f.entities.len(), 2);
}

#[test]
fn fixes_are_the_edits_between_a_failure_and_the_pass_of_the_same_command() {
    let history = [
        edit(1, "/r/src/early.rs", "x"),
        bash(2, "cargo test cart 2>&1 | tail", r#"{"stdout":"FAILED"}"#, true),
        edit(3, "/r/src/cart.rs", "x"),
        bash(4, "cargo fmt", "{}", false),
        edit(5, "/r/src/money.rs", "x"),
    ];
    let pass = bash(6, "cd /r && cargo test cart", "{}", false);
    let r = fixes(&history, &pass, Some("/r"));
    let files: Vec<&str> = r.iter().map(|r| r.src.1.as_str()).collect();
    assert_eq!(files, vec!["src/cart.rs", "src/money.rs"], "not the edit before the failure");
    assert!(r.iter().all(|r| r.kind == RelationKind::Fixes && r.dst.1 == "cargo test cart"));
    assert!(fixes(&history, &bash(7, "cargo test other", "{}", false), Some("/r")).is_empty());
    let looked = [bash(1, "ls types/", "{}", true), edit(2, "/r/types/a.ts", "x")];
    assert!(
        fixes(&looked, &bash(3, "ls types/", "{}", false), Some("/r")).is_empty(),
        "ls checks nothing"
    );
}

#[test]
fn a_decision_is_related_to_the_files_it_changed_else_those_it_read() {
    let f = decided(
        "Use integer cents</x>",
        &["/p/src/money.rs".into()],
        &["/p/README.md".into()],
        Some("/p"),
    );
    assert_eq!(f.relations.len(), 1);
    let r = &f.relations[0];
    assert_eq!(
        (r.kind, r.src.1.as_str(), r.dst.1.as_str()),
        (RelationKind::Decided, "Use integer cents‹/x›", "src/money.rs")
    );
    let read_only = decided("Keep the README short", &[], &["/p/README.md".into()], Some("/p"));
    assert_eq!(read_only.relations[0].dst.1, "README.md");
    assert!(decided("", &["/p/a.rs".into()], &[], Some("/p")).relations.is_empty());
    assert!(decided("No files", &[], &[], Some("/p")).relations.is_empty());
}

#[test]
fn symbols_get_their_module_qualified_name_as_an_alias() {
    assert_eq!(qualified("src/cart.rs", "rs", "total").as_deref(), Some("cart::total"));
    assert_eq!(qualified("src/cart/mod.rs", "rs", "total").as_deref(), Some("cart::total"));
    assert_eq!(qualified("app/cart.py", "py", "total").as_deref(), Some("cart.total"));
    assert_eq!(qualified("web/src/index.ts", "ts", "render").as_deref(), Some("src.render"));
    assert_eq!(qualified("cart.rs", "rs", "cart"), None);
    let c = call(
        1,
        "Edit",
        json!({"file_path": "/p/src/cart.rs", "old_string": "", "new_string": "pub fn total() {}"}),
        "ok",
        false,
    );
    let f = extract(&[c], Some("/p"), &[]);
    let sym = f.entities.iter().find(|e| e.kind == EntityKind::Symbol).unwrap();
    assert_eq!((sym.name.as_str(), sym.aliases.clone()), ("total", vec!["cart::total".to_string()]));
}

#[test]
fn an_observers_proposals_are_kept_only_between_things_the_batch_shows() {
    let calls = [
        call(
            1,
            "Edit",
            json!({"file_path": "/p/src/cart.rs", "old_string": "", "new_string": "fn total() {}"}),
            "ok",
            false,
        ),
        call(2, "Bash", json!({"command": "cargo test cart"}), "ok", false),
    ];
    let facts = extract(&calls, Some("/p"), &[]);
    let lines: Vec<String> = [
        "src/cart.rs fixes cargo test cart",
        "/p/src/cart.rs fixes `cargo test cart`",
        "src/cart.rs fixes cargo build",
        "src/invented.rs fixes cargo test cart",
        "cargo test cart fixes src/cart.rs",
        "src/cart.rs depends_on serde",
        "no relation word here",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let kept = proposed(&facts, &lines, Some("/p"));
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(
        (kept[0].kind, kept[0].src.1.as_str(), kept[0].dst.1.as_str()),
        (RelationKind::Fixes, "src/cart.rs", "cargo test cart")
    );
}
