//! Totals and first pages of [`search`] against plain SQL over the same rows: counted totals,
//! totals known from complete candidate lists, the natural fill, short CJK terms, filter-only.

use rusqlite::{Connection, params};

use super::*;
use crate::retrieval::record_kind::Record;
use crate::retrieval::scope::Scope;

/// 400 observations in two projects; `deadlock` in 3 of 4, `zebra` in 1 of 10, `限流` in 1 of 3.
fn database() -> Connection {
    let mut conn = Connection::open_in_memory().expect("open");
    crate::store::migrations::migrate(&mut conn, 0).expect("migrate");
    conn.execute(
        "INSERT INTO sdk_sessions (content_session_id, memory_session_id, platform_source, project, started_at, started_at_epoch, last_event_epoch)
         VALUES ('c', 'm', 'claude', 'p', '', 0, 0)",
        [],
    )
    .expect("session");
    for i in 0..400i64 {
        let title = if i % 4 == 0 { "pool worker" } else { "deadlock in the pool" };
        let narrative = match (i % 10, i % 3) {
            (0, _) => "a zebra crossing".to_string(),
            (_, 0) => format!("登录限流 note {i}"),
            _ => format!("plain text {i}"),
        };
        conn.execute(
            "INSERT INTO observations (memory_session_id, project, platform_source, type, title, narrative, content_hash, origin, created_at, created_at_epoch)
             VALUES ('m', ?1, 'claude', 'bugfix', ?2, ?3, ?4, 'observer', '', ?5)",
            params![if i % 2 == 0 { "p" } else { "q" }, title, narrative, format!("h{i}"), (i * 7919) % 1000],
        )
        .expect("observation");
    }
    conn
}

fn request(query: &str, project: Option<&str>) -> SearchRequest {
    SearchRequest::new(query, Scope::new(project.map(|p| vec![p.to_string()]), None))
}

fn sql_count(conn: &Connection, condition: &str) -> usize {
    let n: i64 = conn
        .query_row(&format!("SELECT count(*) FROM observations WHERE {condition}"), [], |r| r.get(0))
        .expect("count");
    n as usize
}

#[test]
fn totals_agree_with_plain_sql() {
    let conn = database();
    let cases = [
        // more matches than candidates: counted
        ("deadlock", None, "title LIKE '%deadlock%'"),
        ("deadlock", Some("p"), "title LIKE '%deadlock%' AND project = 'p'"),
        // fewer: the candidate list is complete
        ("zebra", None, "narrative LIKE '%zebra%'"),
        ("zebra", Some("q"), "0"),
        // AND tier empty, natural fill: both words OR-ed
        (
            "zebra crossing deadlocks",
            None,
            "narrative LIKE '%zebra%' OR title LIKE '%deadlock%'",
        ),
        ("zebra nothinghere", Some("p"), "narrative LIKE '%zebra%' AND project = 'p'"),
        // short CJK term: LIKE scan, newest first
        ("限流", None, "narrative LIKE '%限流%'"),
        ("限流", Some("p"), "narrative LIKE '%限流%' AND project = 'p'"),
        // filter only
        ("", Some("q"), "project = 'q'"),
    ];
    for (query, project, condition) in cases {
        let r = search(&conn, &request(query, project)).expect("search");
        assert_eq!(r.totals, [sql_count(&conn, condition), 0, 0], "{query:?} {project:?}");
        assert_eq!(r.records.len(), r.total().min(20), "{query:?} {project:?}");
    }
}

#[test]
fn short_cjk_terms_list_newest_first() {
    let conn = database();
    let r = search(&conn, &request("限流", None)).expect("search");
    let mut expected: Vec<(i64, i64)> = conn
        .prepare("SELECT created_at_epoch, id FROM observations WHERE narrative LIKE '%限流%'")
        .expect("prepare")
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    expected.sort_by(|a, b| b.cmp(a));
    let got: Vec<i64> = r
        .records
        .iter()
        .map(|rec| match rec {
            Record::Observation(o) => o.id,
            _ => -1,
        })
        .collect();
    assert_eq!(got, expected.iter().take(20).map(|(_, id)| *id).collect::<Vec<_>>());
}
