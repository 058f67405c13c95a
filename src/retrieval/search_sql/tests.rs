//! The FTS5-only fast paths agree with the joined queries, ties at the boundary included.

use rusqlite::{Connection, params};

use super::*;

/// Observations whose scores tie in groups: the same title length and word counts, newest last
/// for some groups and first for others so the time tie-break matters.
fn database() -> Connection {
    let mut conn = Connection::open_in_memory().expect("open");
    crate::store::migrations::migrate(&mut conn, 0).expect("migrate");
    conn.execute(
        "INSERT INTO sdk_sessions (content_session_id, memory_session_id, platform_source, project, started_at, started_at_epoch, last_event_epoch)
         VALUES ('c', 'm', 'claude', 'p', '', 0, 0)",
        [],
    )
    .expect("session");
    for i in 0..300i64 {
        let title = match i % 3 {
            0 => "deadlock in the worker pool",
            1 => "worker deadlock again here",
            _ => "unrelated words only here",
        };
        let narrative = if i % 7 == 0 {
            "a deadlock deadlock story"
        } else {
            "plain story text"
        };
        // Times out of id order, with duplicates, so `created_at DESC, id DESC` decides.
        let at = (i * 37) % 101;
        conn.execute(
            "INSERT INTO observations (memory_session_id, project, platform_source, type, title, narrative, content_hash, origin, created_at, created_at_epoch)
             VALUES ('m', 'p', 'claude', 'bugfix', ?1, ?2, ?3, 'observer', '', ?4)",
            params![title, narrative, format!("h{i}"), at],
        )
        .expect("observation");
    }
    conn
}

fn words(expr: &str) -> MatchSpec {
    MatchSpec {
        words: Some(expr.into()),
        ..MatchSpec::default()
    }
}

#[test]
fn ranked_in_fts_matches_the_joined_query() {
    let conn = database();
    let f = Filters::default();
    for expr in [
        "\"deadlock\"",
        "\"worker\"",
        "\"deadlock\" OR \"story\"",
        "\"dead\"*",
        "\"nothing\"",
    ] {
        let m = words(expr);
        assert!(fts_only(Kind::Observation, &m, &f).is_some());
        for limit in [0, 1, 5, 33, 100, 250, 400] {
            let fast = candidates(&conn, Kind::Observation, &m, &f, limit).expect("fast");
            let joined = joined_candidates(&conn, Kind::Observation, &m, &f, limit).expect("joined");
            assert_eq!(fast, joined, "{expr} limit {limit}");
        }
    }
}

#[test]
fn fts_only_counts_match_the_joined_counts() {
    let conn = database();
    let (a, b) = (words("\"pool\""), words("\"deadlock deadlock\""));
    let fast = count(&conn, Kind::Observation, &[&a, &b], &Filters::default()).expect("fast");
    let scoped = Filters {
        scope: Scope::new(Some(vec!["p".into()]), None),
        ..Filters::default()
    };
    assert!(fts_only(Kind::Observation, &a, &scoped).is_none());
    let joined = count(&conn, Kind::Observation, &[&a, &b], &scoped).expect("joined");
    let expected: i64 = conn
        .query_row(
            "SELECT count(*) FROM observations WHERE title LIKE '%pool%' OR narrative LIKE '%deadlock deadlock%'",
            [],
            |r| r.get(0),
        )
        .expect("expected");
    assert!(expected > 100 && expected < 300, "{expected}");
    assert_eq!((fast, joined), (expected as usize, expected as usize));
}

#[test]
fn tiers_of_one_index_count_as_one_expression_and_agree_with_the_joined_count() {
    let conn = database();
    let exact = words("\"deadlock\" AND \"pool\"");
    let fill = words("\"story\"* OR \"again\"");
    let tri = MatchSpec {
        trigrams: Some("\"unrel\"".into()),
        ..MatchSpec::default()
    };
    let scoped = Filters {
        scope: Scope::new(Some(vec!["p".into()]), None),
        ..Filters::default()
    };
    let fast = count(&conn, Kind::Observation, &[&exact, &fill, &tri], &Filters::default()).expect("fast");
    let joined = count(&conn, Kind::Observation, &[&exact, &fill, &tri], &scoped).expect("joined");
    // Every row has "story" in its narrative: all 300 count, once each.
    assert_eq!((fast, joined), (300, 300));
    let fast = count(&conn, Kind::Observation, &[&exact, &words("\"again\"")], &Filters::default()).expect("fast");
    let joined = count(&conn, Kind::Observation, &[&exact, &words("\"again\"")], &scoped).expect("joined");
    assert_eq!(fast, joined);
    assert!(fast > 100 && fast < 300, "{fast}");
}

#[test]
fn origin_keeps_to_this_machines_rows_or_the_teams() {
    let conn = database();
    conn.execute("UPDATE observations SET imported_from = 'team:alice@laptop' WHERE id % 10 = 0", [])
        .expect("mark");
    let with = |o| Filters {
        origin: Some(o),
        ..Filters::default()
    };
    let all = words("\"story\"");
    let mine = count(&conn, Kind::Observation, &[&all], &with(OriginFilter::Mine)).expect("mine");
    let team = count(&conn, Kind::Observation, &[&all], &with(OriginFilter::Team)).expect("team");
    assert_eq!((mine, team), (270, 30));
    assert!(matches!(OriginFilter::parse("all"), Ok(None)));
    assert!(OriginFilter::parse("everyone").is_err());
}
