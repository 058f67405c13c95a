//! Issue 34, schema upgrades: a database as each older schema version left it
//! (`tests/fixtures/schema/v<N>.db`, written by `make.py` from the migrations as memd applies them)
//! opens in today's worker with every row, after a private copy of it is kept; and a worker killed
//! (SIGKILL) at several points of its start — while it copies and migrates a large v1 store —
//! leaves a whole store at some schema version, which the next start migrates to the exact same
//! rows.

use std::path::{Path, PathBuf};
use std::time::Instant;

use rusqlite::Connection;

use crate::support::TestWorker;
use crate::support::seed::{Obs, Seed};

const LATEST: i64 = 14;
const KILL_AT: [f64; 3] = [0.2, 0.5, 0.8];

fn fixture(version: i64) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/schema/v{version}.db"))
}

fn worker_over(db: &Path) -> TestWorker {
    let w = TestWorker::prepared(&[("MEMD_BACKUP_INTERVAL_HOURS", "24")]);
    std::fs::copy(db, w.db_path()).unwrap();
    w
}

fn user_version(db: &Path) -> i64 {
    Connection::open(db)
        .unwrap()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap()
}

fn backups(w: &TestWorker) -> Vec<PathBuf> {
    let dir = w.data_dir().join("backups");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn issue_34_every_older_schema_opens_with_every_row_after_a_private_copy() {
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        memd::store::migrations::latest_version(),
        LATEST,
        "a new migration: add its fixture (make.py)"
    );
    for v in 1..LATEST {
        let mut w = worker_over(&fixture(v));
        // Each call is the source of the observation with its id (the raw index holds only calls
        // an observation came from).
        rusqlite::Connection::open(w.db_path())
            .unwrap()
            .execute(
                "INSERT OR IGNORE INTO observation_sources(observation_id, tool_use_row_id)
                 SELECT o.id, t.id FROM observations o JOIN tool_uses t ON t.id = o.id",
                [],
            )
            .unwrap();
        w.spawn();
        assert_eq!(w.status()["integrity"]["state"], "ok", "v{v}");
        let counts = [
            ("observations", 5),
            ("tool_uses", 5),
            ("user_prompts", 3),
            ("session_summaries", 1),
            ("sdk_sessions", 1),
        ];
        for (table, n) in counts {
            assert_eq!(w.count(&format!("SELECT count(*) FROM {table}")), n, "v{v} {table}");
        }
        // Calls stored before v5 were indexed for search after the migration (issue 35).
        let indexed = w.count("SELECT count(*) FROM tool_uses_fts WHERE tool_uses_fts MATCH 'round_half_even'");
        assert_eq!(indexed, 5, "v{v}: the older calls are in the raw index");
        let found = w.get("/api/search?query=rounding&project=legacy-shop&format=json");
        assert_eq!(found.status, 200, "v{v}");
        assert!(found.text().contains("Checkout rounding fix"), "v{v}: {}", found.text());
        assert_eq!(w.stop().code(), Some(0));
        assert_eq!(user_version(&w.db_path()), LATEST, "v{v}");
        let copies = backups(&w);
        let copy = copies
            .iter()
            .find(|p| p.file_name().unwrap().to_string_lossy().starts_with(&format!("memd-v{v}-")))
            .unwrap_or_else(|| panic!("v{v}: a copy before migrating: {copies:?}"));
        assert_eq!(std::fs::metadata(copy).unwrap().permissions().mode() & 0o777, 0o600, "v{v}");
        assert_eq!(user_version(copy), v, "the copy is the database as it was");
    }
}

/// A v1 store with `n` more observations.
fn large_v1(n: i64) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("memd.db");
    std::fs::copy(fixture(1), &db).unwrap();
    let seed = Seed::open(&db);
    seed.conn.execute_batch("BEGIN").unwrap();
    for i in 0..n {
        seed.obs(Obs {
            session: "big",
            project: "legacy-shop",
            platform: "claude",
            ty: "change",
            title: &format!("Change {i}"),
            narrative: &format!("step {i} {}", "detail ".repeat(30)),
            concepts: &[],
            files_read: &[],
            files_modified: &[],
            at: i,
        });
    }
    seed.conn.execute_batch("COMMIT").unwrap();
    dir
}

#[test]
fn issue_34_a_worker_killed_while_it_migrates_leaves_a_store_the_next_start_finishes() {
    const MORE: i64 = 20_000;
    let template = large_v1(MORE);
    let db = template.path().join("memd.db");
    let expected = 5 + MORE;

    let mut reference = worker_over(&db);
    let t = Instant::now();
    reference.spawn();
    let took = t.elapsed();
    assert_eq!(reference.count("SELECT count(*) FROM observations"), expected);
    assert_eq!(reference.stop().code(), Some(0));
    eprintln!("a start that migrates {expected} observations from v1 took {took:?}");

    for at in KILL_AT {
        let mut w = worker_over(&db);
        let mut child = w.command().arg("serve").spawn().unwrap();
        std::thread::sleep(took.mul_f64(at));
        let _ = child.kill();
        let _ = child.wait();
        let v = user_version(&w.db_path());
        // Each migration is its own transaction: a kill leaves the file at some version between
        // the old and the latest, never half a migration (user_version moves with the commit).
        assert!((1..=LATEST).contains(&v), "killed at {at}: version {v}");
        let c = Connection::open(w.db_path()).unwrap();
        let check: String = c.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
        assert_eq!(check, "ok", "killed at {at} (version {v})");
        drop(c);
        w.spawn();
        assert_eq!(w.status()["integrity"]["state"], "ok", "killed at {at}");
        assert_eq!(
            w.count("SELECT count(*) FROM observations"),
            expected,
            "killed at {at}: exact count"
        );
        let leftovers: Vec<_> = backups(&w).into_iter().filter(|p| !p.to_string_lossy().ends_with(".db")).collect();
        assert!(leftovers.is_empty(), "killed at {at}: {leftovers:?}");
        assert_eq!(w.stop().code(), Some(0));
        assert_eq!(user_version(&w.db_path()), LATEST, "killed at {at}");
    }
}
