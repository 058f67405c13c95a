//! Pruned rankings equal the full ones (the bound is exact), on a reader opened as the worker's are.

use rusqlite::{Connection, params};

use super::*;
use crate::retrieval::query::natural;
use crate::retrieval::record_kind::Kind;
use crate::retrieval::search_sql::{Filters, MatchSpec, candidates, spec};

/// 3,000 observations of filler words in which `upload`, `retry` and `flaky` each appear in about
/// a tenth of the texts and `deadlock` in a few: many rows match one query word, fewer two.
fn reader() -> (tempfile::TempDir, Connection) {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("memd.db");
    let mut w = crate::store::open::open_writer(&path, false).expect("writer");
    crate::store::migrations::migrate(&mut w, 0).expect("migrate");
    w.execute(
        "INSERT INTO sdk_sessions (content_session_id, memory_session_id, platform_source, project, started_at, started_at_epoch, last_event_epoch)
         VALUES ('c', 'm', 'claude', 'p', '', 0, 0)",
        [],
    )
    .expect("session");
    let filler = ["kato", "miran", "selvu", "dorpi", "lengra", "stoque", "brinza", "folnek"];
    let planted = ["upload", "retrying", "flaky", "uploads", "retried"];
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let tx = w.transaction().expect("tx");
    for i in 0..3000i64 {
        let mut text = |n: usize| {
            let mut words: Vec<&str> = (0..n).map(|_| filler[(next() % 8) as usize]).collect();
            if next() % 4 == 0 {
                words.push(planted[(next() % 5) as usize]);
            }
            if next() % 200 == 0 {
                words.push("deadlock");
            }
            words.join(" ")
        };
        let (title, narrative) = (text(5), text(30));
        tx.execute(
            "INSERT INTO observations (memory_session_id, project, platform_source, type, title, narrative, content_hash, origin, created_at, created_at_epoch)
             VALUES ('m', 'p', 'claude', 'bugfix', ?1, ?2, ?3, 'observer', '', ?4)",
            params![title, narrative, format!("h{i}"), (i * 37) % 1001],
        )
        .expect("observation");
    }
    tx.commit().expect("commit");
    drop(w);
    (dir, crate::store::open::open_reader(&path).expect("reader"))
}

#[test]
fn a_pruned_ranking_equals_the_full_ranking() {
    let (_dir, conn) = reader();
    let mut pruned = 0;
    for q in [
        "what did we decide about retrying the flaky upload?",
        "flaky upload",
        "retrying uploads",
        "deadlock upload flaky",
        "deadlock only",
        "kato miran deadlock flaky upload",
        "nothing matches here",
    ] {
        let nat = natural(q);
        let with = MatchSpec {
            words: nat.words.clone(),
            groups: nat.groups.clone(),
            ..MatchSpec::default()
        };
        let without = MatchSpec {
            groups: Vec::new(),
            ..with.clone()
        };
        for limit in [1, 5, 20, 100, 400] {
            let a = candidates(&conn, Kind::Observation, &with, &Filters::default(), limit).expect("pruned");
            let b = candidates(&conn, Kind::Observation, &without, &Filters::default(), limit).expect("full");
            assert_eq!(a, b, "{q} limit {limit}");
            let Some(expr) = nat.words.as_deref() else { continue };
            let s = spec(Kind::Observation);
            pruned += usize::from(
                ranked_pruned(&conn, s.fts, s.weights, expr, &nat.groups, limit)
                    .expect("prune")
                    .is_some(),
            );
        }
    }
    assert!(pruned >= 5, "the bound proved {pruned} rankings: the test must exercise pruning");
}

#[test]
fn the_bound_refuses_what_it_cannot_prove() {
    let (_dir, conn) = reader();
    let (fts, w) = (spec(Kind::Observation).fts, spec(Kind::Observation).weights);
    // One word with hits: nothing matches two words, so nothing is pruned.
    let nat = natural("upload nothingelse");
    let expr = nat.words.clone().expect("words");
    assert_eq!(ranked_pruned(&conn, fts, w, &expr, &nat.groups, 10).expect("ok"), None);
    // More rows asked than match two words: the one-word rows are needed.
    let nat = natural("deadlock upload");
    let expr = nat.words.clone().expect("words");
    assert_eq!(ranked_pruned(&conn, fts, w, &expr, &nat.groups, 2000).expect("ok"), None);
    // A form repeated across groups: the expression's phrases are not the groups' forms.
    let dup = vec![nat.groups[0].clone(), nat.groups[0].clone()];
    assert_eq!(ranked_pruned(&conn, fts, w, &expr, &dup, 1).expect("ok"), None);
}

#[test]
fn varints_read_as_sqlite_writes_them() {
    assert_eq!(varint(&[0x05]), Some(5));
    assert_eq!(varint(&[0x86, 0x8D, 0x20]), Some(100_000));
    assert_eq!(varint(&[0x81]), None);
    assert!((idf(100, 100) - 1e-6).abs() < 1e-12, "a phrase in every row is floored");
}

/// bm25 of every row of `expr`, by rowid.
fn scores(conn: &Connection, expr: &str) -> std::collections::BTreeMap<i64, f64> {
    let s = spec(Kind::Observation);
    let sql = format!("SELECT rowid, bm25({0}, {1}) FROM {0} WHERE {0} MATCH ?1", s.fts, s.weights);
    let mut stmt = conn.prepare(&sql).expect("prepare");
    stmt.query_map([expr], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows")
}

#[test]
fn the_disjoint_cases_score_each_row_as_the_or_of_the_forms_does() {
    let (_dir, conn) = reader();
    for q in [
        "retrying the flaky upload",
        "deadlock upload flaky",
        "flaky upload",
        "deadlock retried flaky uploads",
    ] {
        let nat = natural(q);
        let groups: Vec<&Vec<Form>> = nat.groups.iter().collect();
        let full = scores(&conn, nat.words.as_deref().expect("words"));
        let cases = scores(&conn, &disjoint(&groups));
        let quorum = scores(&conn, &pairs(&groups));
        assert!(cases.len() > 10, "{q}: {} rows match two words", cases.len());
        assert_eq!(
            cases.keys().collect::<Vec<_>>(),
            quorum.keys().collect::<Vec<_>>(),
            "{q}: the rows of two words or more"
        );
        for (row, score) in &cases {
            assert_eq!(Some(score), full.get(row), "{q}: row {row}");
        }
    }
}
