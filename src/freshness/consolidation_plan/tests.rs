use super::*;
use crate::store::memory::{ManualMemory, save_memory};

fn remember(conn: &Connection, title: &str, text: &str, at: i64) -> i64 {
    save_memory(conn, &ManualMemory::by_user("shop", title, text), at).unwrap().id
}

fn live(conn: &Connection) -> i64 {
    conn.query_row("SELECT count(*) FROM observations WHERE superseded_by IS NULL", [], |r| r.get(0))
        .unwrap()
}

// 2026-12-04T10:00:00Z
const T: i64 = 1_796_378_400_000;
const DAY: i64 = 86_400_000;

#[test]
fn a_pass_merges_duplicates_dates_and_chains_then_a_second_changes_nothing() {
    let conn = crate::store::test_conn();
    let a = remember(&conn, "Prices are cents", "Use integer cents.", T - 3 * DAY);
    let b = remember(&conn, "prices are  cents", "use integer cents", T - DAY);
    let c = remember(&conn, "Deploys", "We deployed yesterday to the staging host", T);
    let other = remember(&conn, "Prices are cents", "Totals round half-even at the end", T);
    let (x, y, z) = (
        remember(&conn, "Queue", "The queue is Redis", T),
        remember(&conn, "Queue v2", "The queue is SQS", T),
        remember(&conn, "Queue v3", "The queue is NATS", T),
    );
    crate::store::supersession::supersede(&conn, x, y, "explicit").unwrap();
    crate::store::supersession::supersede(&conn, y, z, "explicit").unwrap();
    let total: i64 = conn.query_row("SELECT count(*) FROM observations", [], |r| r.get(0)).unwrap();

    let changes = plan(&conn).unwrap();
    assert!(
        changes.contains(&Change::Merge {
            duplicate: a,
            survivor: b,
            reason: "same text".into()
        }),
        "{changes:?}"
    );
    assert!(
        changes.iter().any(
            |c2| matches!(c2, Change::AbsoluteDate { id, field: "narrative", after, .. } if *id == c && after.contains("on 2026-12-03"))
        )
    );
    assert!(changes.contains(&Change::FoldChain { id: x, from: y, to: z }));
    assert_eq!(
        changes.len(),
        3,
        "the different text under the same title is not a duplicate: {changes:?}"
    );

    apply(&conn, &changes, "run-1", T).unwrap();
    let (count, days): (i64, String) = conn
        .query_row(
            "SELECT occurrence_count, reinforcement_dates FROM observations WHERE id = ?1",
            [b],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(count, 2, "the survivor keeps the duplicate's count");
    assert!(days.contains("2026-12-01") && days.contains("2026-12-03"), "and its dates: {days}");
    let after: i64 = conn.query_row("SELECT count(*) FROM observations", [], |r| r.get(0)).unwrap();
    assert_eq!(after, total, "no row is deleted");
    assert_eq!(live(&conn), total - 3, "only the duplicate and the chain's two left the live set");
    let sup: Option<i64> = conn
        .query_row("SELECT superseded_by FROM observations WHERE id = ?1", [other], |r| r.get(0))
        .unwrap();
    assert_eq!(sup, None);
    assert_eq!(log(&conn, 10).unwrap().len(), 3);

    assert_eq!(plan(&conn).unwrap(), Vec::new(), "a second pass changes nothing");
}
