use super::*;
use crate::store::memory::{ManualMemory, save_memory};

fn remember(conn: &Connection, text: &str, supersedes: Option<i64>, at: i64) -> i64 {
    let m = ManualMemory {
        supersedes,
        ..ManualMemory::by_user("shop", text, text)
    };
    save_memory(conn, &m, at).unwrap().id
}

fn successor(conn: &Connection, id: i64) -> (Option<i64>, Option<String>) {
    conn.query_row(
        "SELECT superseded_by, supersede_reason FROM observations WHERE id = ?1",
        [id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .unwrap()
}

#[test]
fn an_explicit_supersedes_links_and_a_cycle_is_refused() {
    let conn = crate::store::test_conn();
    let old = remember(&conn, "we pin tokio to 1.38", None, 1);
    let new = remember(&conn, "tokio is at 1.40 now", Some(old), 2);
    assert_eq!(successor(&conn, old), (Some(new), Some("explicit".into())));
    assert_eq!(chain(&conn, old).unwrap(), vec![new]);
    assert_eq!(supersede(&conn, new, old, "explicit").unwrap(), Linked::Cycle);
    assert_eq!(supersede(&conn, 999, old, "explicit").unwrap(), Linked::Missing);
}

#[test]
fn the_rules_link_an_update_and_flag_a_contradiction() {
    let conn = crate::store::test_conn();
    let old = remember(&conn, "we pin tokio to 1.38", None, 1);
    let new = remember(&conn, "we moved from tokio 1.38 to 1.40", None, 2);
    assert_eq!(successor(&conn, old), (Some(new), Some("updated".into())));
    let other = remember(&conn, "serde is pinned at 1.0.200", None, 3);
    let clash = remember(&conn, "the lockfile has serde 1.0.210", None, 4);
    assert_eq!(successor(&conn, other).0, None, "a disagreement is not silently resolved");
    let open = contradictions(&conn, false, 10).unwrap();
    assert_eq!(open.len(), 1);
    assert_eq!((open[0].older_id, open[0].newer_id), (other, clash));
    assert_eq!(
        resolve(&conn, open[0].id, Resolution::Keep(999), 5).unwrap(),
        None,
        "not one of the two"
    );
    assert_eq!(
        resolve(&conn, open[0].id, Resolution::Keep(clash), 5).unwrap(),
        Some((other, clash))
    );
    assert_eq!(successor(&conn, other), (Some(clash), Some("resolved".into())));
    assert!(contradictions(&conn, false, 10).unwrap().is_empty());
    assert_eq!(
        contradictions(&conn, true, 10).unwrap()[0].resolution.as_deref(),
        Some(&*format!("keep {clash}"))
    );
}
