//! Team memory (issue 40): a worker killed with SIGKILL in the middle of a push neither
//! duplicates nor loses a row. Two windows, each held open deterministically: (1) rows inserted on
//! the server but not committed (a test trigger waits on an advisory lock the test holds) — the
//! server rolls them back and the restarted worker pushes them; (2) committed on the server but
//! not yet marked here (the test holds SQLite's write lock) — the restarted worker pushes them
//! again and the server's `ON CONFLICT (gid) DO NOTHING` keeps one copy. Afterwards the server
//! holds each memory once and the other worker has each once.

use std::time::Duration;

use memd::client::http::{self, Request};
use serde_json::json;

use crate::support::postgres::Postgres;
use crate::support::{TestWorker, wait_until};

const PAUSE_KEY: i64 = 4242;

fn worker(pg: &Postgres, role: &str, sync_ms: &str) -> TestWorker {
    let url = pg.url(role);
    TestWorker::start(&[
        ("MEMD_TEAM_DATABASE_URL", url.as_str()),
        ("MEMD_TEAM_PROJECTS", "shop"),
        ("MEMD_TEAM_ORIGIN", &format!("{role}@box")),
        ("MEMD_TEAM_SYNC_MS", sync_ms),
        ("MEMD_EMBEDDINGS", "none"),
    ])
}

fn save(w: &TestWorker, text: &str) {
    let r = w.post("/api/memory/save", &json!({"text": text, "project": "shop"}));
    assert_eq!(r.status, 200, "{}", r.text());
}

/// `POST /api/team/sync` on a thread: it never answers when the worker is killed under it.
fn sync_in_background(w: &TestWorker) {
    let (addr, token) = (w.addr(), w.token.clone());
    std::thread::spawn(move || {
        let req = Request {
            method: "POST",
            path: "/api/team/sync",
            token: Some(&token),
            body: Some(b"{}"),
            ..Default::default()
        };
        let _ = http::send(addr, &req, Duration::from_secs(60));
    });
}

fn on_server(pg: &Postgres, prefix: &str) -> i64 {
    let sql = format!("SELECT count(*) FROM memd.rows WHERE NOT deleted AND body->>'narrative' LIKE '{prefix}%'");
    pg.sql("memd", &sql).trim().parse().unwrap()
}

fn copies(w: &TestWorker, prefix: &str) -> i64 {
    w.db()
        .query_row("SELECT count(*) FROM observations WHERE narrative LIKE ?1 || '%'", [prefix], |r| {
            r.get(0)
        })
        .unwrap()
}

#[test]
fn a_worker_killed_mid_push_neither_duplicates_nor_loses() {
    let Some(pg) = Postgres::start() else { return };
    pg.sql("memd", "CREATE ROLE alice LOGIN; CREATE ROLE bob LOGIN;");
    let mut a = worker(&pg, "alice", "600000");
    let out = a.command().args(["team", "init", &pg.url("postgres")]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    pg.sql("memd", "GRANT memd_member TO alice, bob;");
    let b = worker(&pg, "bob", "300");
    save(&a, "Baseline: the cart rounds half to even.");
    assert_eq!(a.post("/api/team/sync", &json!({})).status, 200);

    // Window 1: killed with the rows inserted on the server, not committed.
    pg.sql(
        "memd",
        &format!(
            "CREATE FUNCTION memd.test_pause() RETURNS trigger LANGUAGE plpgsql AS $$
               BEGIN PERFORM pg_advisory_lock_shared({PAUSE_KEY}); PERFORM pg_advisory_unlock_shared({PAUSE_KEY}); RETURN NULL; END $$;
             CREATE TRIGGER test_pause AFTER INSERT ON memd.rows FOR EACH STATEMENT EXECUTE FUNCTION memd.test_pause();"
        ),
    );
    let mut holder = pg.session("memd", &format!("SELECT pg_advisory_lock({PAUSE_KEY});"));
    let held = format!("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = {PAUSE_KEY} AND granted");
    assert!(wait_until(Duration::from_secs(10), || pg.sql("memd", &held).trim() == "1"));
    for i in 0..3 {
        save(&a, &format!("Window one {i}: invoices keep their year."));
    }
    sync_in_background(&a);
    let waiting = "SELECT count(*) FROM pg_stat_activity WHERE usename = 'alice' AND wait_event = 'advisory'";
    assert!(
        wait_until(Duration::from_secs(20), || pg.sql("memd", waiting).trim() == "1"),
        "the push never reached the paused insert"
    );
    a.kill9();
    let _ = holder.kill();
    let _ = holder.wait();
    pg.sql("memd", "DROP TRIGGER test_pause ON memd.rows; DROP FUNCTION memd.test_pause();");
    assert_eq!(on_server(&pg, "Window one"), 0, "an uncommitted push became visible");

    // The restart pushes them (its first pass).
    a.spawn();
    assert!(
        wait_until(Duration::from_secs(20), || on_server(&pg, "Window one") == 3),
        "after the restart the server has {} of 3",
        on_server(&pg, "Window one")
    );

    // Window 2: killed after the server's commit, before the push is marked here.
    for i in 0..3 {
        save(&a, &format!("Window two {i}: refunds go to the original card."));
    }
    let lock = rusqlite::Connection::open(a.db_path()).unwrap();
    lock.execute_batch("BEGIN IMMEDIATE").unwrap();
    sync_in_background(&a);
    assert!(
        wait_until(Duration::from_secs(20), || on_server(&pg, "Window two") == 3),
        "the push did not commit on the server"
    );
    a.kill9();
    let marked: i64 = lock
        .query_row(
            "SELECT count(*) FROM team_rows t JOIN observations o ON o.id = t.observation_id WHERE o.narrative LIKE 'Window two%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(marked, 0, "the local mark landed before the kill: this window was not tested");
    lock.execute_batch("ROLLBACK").unwrap();
    drop(lock);
    a.spawn();
    let again = a.post("/api/team/sync", &json!({}));
    assert_eq!(again.status, 200, "{}", again.text());
    assert_eq!(again.json().unwrap()["pushed"], 0, "the server already had them: nothing new");
    assert_eq!(a.get("/api/team").json().unwrap()["local"]["queue"], 0);

    // No duplicate on the server, no loss, each once on B.
    assert_eq!(pg.sql("memd", "SELECT count(*) FROM memd.rows").trim(), "7");
    let dupes = pg.sql("memd", "SELECT count(*) - count(DISTINCT content_hash) FROM memd.rows");
    assert_eq!(dupes.trim(), "0");
    let all_once = wait_until(Duration::from_secs(20), || {
        copies(&b, "Baseline") == 1 && copies(&b, "Window one") == 3 && copies(&b, "Window two") == 3
    });
    assert!(
        all_once,
        "B has {} baseline, {} window one, {} window two",
        copies(&b, "Baseline"),
        copies(&b, "Window one"),
        copies(&b, "Window two")
    );
}
