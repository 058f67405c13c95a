//! Issue 14, store integrity: a database damaged in the middle of the file is found at start,
//! reported in readiness, status and doctor, written to by nobody (the hook spools), and mended by
//! `memd repair` — from the newest good backup, or by salvaging the readable rows.

use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use crate::support::hook::{POST_TOOL, run_hook, spool_files};
use crate::support::{DEADLINE, TestWorker, observation_body, wait_until};

const EVENTS: usize = 1_200;

/// A worker whose database holds `EVENTS` observed tool uses, stopped (WAL checkpointed).
fn filled_then_stopped() -> TestWorker {
    let mut w = TestWorker::start(&[("MEMD_SPOOL_SCAN_MS", "200"), ("MEMD_BACKUP_INTERVAL_HOURS", "0")]);
    for i in 0..EVENTS {
        let r = w.post("/api/sessions/observations", &observation_body(&format!("s{}", i % 12), i));
        assert_eq!(r.status, 200, "event {i}");
    }
    assert!(
        wait_until(DEADLINE * 4, || w.count("SELECT count(*) FROM pending_messages") == 0),
        "observed"
    );
    assert_eq!(w.stop().code(), Some(0));
    let c = rusqlite::Connection::open(w.db_path()).unwrap();
    c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())).unwrap();
    drop(c);
    w
}

/// Overwrites 8 KiB in the middle of the file with (seeded) random bytes, page-aligned — of row
/// data: the two pages are moved past any page of the schema table. (A damaged schema page makes
/// every table unreadable, which no row-by-row salvage can mend; the schema grew with the raw
/// index and the provenance columns, and its pages may lie anywhere once a later table is added.)
pub(crate) fn damage_the_middle(db: &Path) {
    let len = std::fs::metadata(db).unwrap().len();
    assert!(len > 64 * 1024, "the database is large enough to have a middle ({len} bytes)");
    // Pages in use (a b-tree's, not the schema's): a free page in the middle (dropped tables leave
    // some) is damage no check can see.
    let (schema, used): (Vec<u64>, Vec<u64>) = {
        let c = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
        let mut st = c.prepare("SELECT name, pageno FROM dbstat ORDER BY pageno").unwrap();
        let rows: Vec<(String, u64)> = st
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64)))
            .unwrap()
            .map(|p| p.unwrap())
            .collect();
        let schema = rows.iter().filter(|(n, _)| n == "sqlite_schema").map(|r| r.1).collect();
        let used = rows.iter().filter(|(n, _)| n != "sqlite_schema").map(|r| r.1).collect();
        (schema, used)
    };
    assert!(schema.contains(&1), "dbstat lists the schema's pages: {schema:?}");
    let middle = used
        .iter()
        .copied()
        .filter(|p| !schema.contains(p) && !schema.contains(&(p + 1)) && *p * 4096 >= len / 2)
        .find(|p| used.contains(&(p + 1)))
        .expect("two pages in use past the middle");
    let at = (middle - 1) * 4096;
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let noise: Vec<u8> = (0..8192)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    let mut f = std::fs::OpenOptions::new().write(true).open(db).unwrap();
    f.seek(SeekFrom::Start(at)).unwrap();
    f.write_all(&noise).unwrap();
    f.sync_all().unwrap();
}

fn integrity_check(db: &Path) -> String {
    let c = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let rows: Result<Vec<String>, _> = c
        .prepare("PRAGMA integrity_check")
        .and_then(|mut st| st.query_map([], |r| r.get(0))?.collect());
    rows.map_or_else(|e| e.to_string(), |rows| rows.join("; "))
}

fn wal_len(db: &Path) -> u64 {
    std::fs::metadata(format!("{}-wal", db.display())).map_or(0, |m| m.len())
}

#[test]
fn issue_14_a_damaged_database_is_reported_written_by_nobody_and_repair_salvages_it() {
    let mut w = filled_then_stopped();
    let db = w.db_path();
    damage_the_middle(&db);
    assert_ne!(integrity_check(&db), "ok", "the damage is real");
    let damaged_bytes = std::fs::read(&db).unwrap();

    w.spawn_until("/api/health");
    let opened = || !w.get("/api/readiness").text().contains("initializing");
    assert!(wait_until(DEADLINE, opened), "the store opens");
    let ready = w.get("/api/readiness");
    assert_eq!(ready.status, 503, "readiness refuses a damaged store");
    assert!(ready.text().contains("damaged"), "{}", ready.text());
    let status = w.status();
    assert_eq!(status["integrity"]["state"], "damaged", "{}", status["integrity"]);
    assert!(status["warnings"].to_string().contains("memd repair"), "{}", status["warnings"]);

    let r = w.post("/api/sessions/observations", &observation_body("after", 0));
    assert_eq!(r.status, 503, "{}", r.text());
    assert_eq!(r.json().unwrap()["error"], "damaged");
    // The hook treats the refusal like a worker that is down: it spools, exit 0.
    let out = run_hook(w.command(), "observation", POST_TOOL);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(spool_files(w.data_dir()).len(), 1, "the hook's event waits in the spool");

    let doctor = w.command().arg("doctor").output().unwrap();
    let said = String::from_utf8_lossy(&doctor.stdout);
    assert_eq!(doctor.status.code(), Some(1), "{said}");
    assert!(said.contains("damaged") && said.contains("memd repair"), "{said}");

    assert_eq!(w.stop().code(), Some(0));
    assert_eq!(std::fs::read(&db).unwrap(), damaged_bytes, "no write reached the damaged file");
    assert_eq!(wal_len(&db), 0, "nor its WAL");

    let out = w.command().arg("repair").output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{said}{}", String::from_utf8_lossy(&out.stderr));
    assert!(said.contains("salvaged"), "no backup: the readable rows are salvaged\n{said}");
    eprintln!("{said}");
    assert_eq!(integrity_check(&db), "ok");
    let c = rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let orphans = c
        .prepare("PRAGMA foreign_key_check")
        .unwrap()
        .query_map([], |_| Ok(()))
        .unwrap()
        .count();
    assert_eq!(orphans, 0, "no row points at a lost one");
    drop(c);
    let kept: Vec<_> = std::fs::read_dir(w.data_dir())
        .unwrap()
        .flatten()
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.starts_with("memd.db.damaged-") && !n.ends_with("-wal") && !n.ends_with("-shm")
        })
        .collect();
    assert_eq!(kept.len(), 1, "the damaged file is kept beside");
    assert_eq!(std::fs::read(kept[0].path()).unwrap(), damaged_bytes);

    w.spawn();
    assert_eq!(w.status()["integrity"]["state"], "ok");
    assert!(wait_until(DEADLINE, || spool_files(w.data_dir()).is_empty()), "the spool drains");
    let hook_event = w.count("SELECT count(*) FROM tool_uses WHERE tool_use_id = 'toolu_01Qm4'");
    assert_eq!(hook_event, 1, "the event refused while damaged is stored after the repair");
    let salvaged = w.count("SELECT count(*) FROM tool_uses");
    assert!(salvaged > (EVENTS as i64) / 2, "most rows survive 8 KiB of damage: {salvaged}");
    let r = w.post("/api/sessions/observations", &observation_body("after", 1));
    assert_eq!(r.status, 200);
    let found = w.get("/api/search?query=step");
    assert_eq!(found.status, 200, "{}", found.text());
}

#[test]
fn issue_14_repair_restores_the_newest_good_backup() {
    let mut w = filled_then_stopped();
    w.spawn();
    let out = w.command().arg("backup").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let backups = w.status()["backups"].clone();
    assert_eq!(backups["count"], 1, "{backups}");
    assert!(backups["newest_bytes"].as_u64().unwrap() > 64 * 1024, "{backups}");
    assert_eq!(w.stop().code(), Some(0));

    // A newer copy that is damaged must be passed over for the good one.
    let dir = w.data_dir().join("backups");
    let good = std::fs::read_dir(&dir).unwrap().flatten().next().unwrap().path();
    let newer = dir.join("memd-29990101T000000Z.db");
    std::fs::copy(&good, &newer).unwrap();
    damage_the_middle(&newer);
    let c = rusqlite::Connection::open(w.db_path()).unwrap();
    c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())).unwrap();
    drop(c);
    damage_the_middle(&w.db_path());

    let busy = {
        let mut other = w.command();
        other.arg("repair");
        w.spawn_until("/api/health");
        let out = other.output().unwrap();
        assert_ne!(out.status.code(), Some(0), "repair refuses while the worker runs");
        w.stop()
    };
    assert_eq!(busy.code(), Some(0));

    let out = w.command().arg("repair").output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{said}{}", String::from_utf8_lossy(&out.stderr));
    assert!(said.contains("restored") && said.contains(&good.display().to_string()), "{said}");
    assert_eq!(integrity_check(&w.db_path()), "ok");
    w.spawn();
    assert_eq!(
        w.count("SELECT count(*) FROM tool_uses"),
        EVENTS as i64,
        "the backup held every event"
    );
}
