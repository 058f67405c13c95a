//! Issue 34, crash-safe maintenance: a maintenance command killed (SIGKILL) at several points of
//! its run leaves the store either as it was or complete — never a partial store where the worker
//! looks — and a rerun reaches the exact state of an uninterrupted run.
//!
//! The kill points are fractions of the time an uninterrupted run took on the same machine, so
//! each run stops somewhere else in the command; whatever the point, the property must hold.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags};

use crate::support::claude_mem::{SECRET, build};
use crate::support::hook::bare_command;
use crate::support::seed::{Obs, Seed};
use crate::worker_integrity::damage_the_middle;

const OBSERVATIONS: i64 = 12_000;
const KILL_AT: [f64; 3] = [0.2, 0.5, 0.8];

fn memd(dir: &Path) -> Command {
    let mut cmd = bare_command(dir, &[]);
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd
}

/// A data dir whose database holds one session and `OBSERVATIONS` observations (no WAL).
fn filled() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("memd.db");
    let mut c = memd::store::open::open_writer(&db, false).unwrap();
    memd::store::migrations::migrate(&mut c, 0).unwrap();
    drop(c);
    let seed = Seed::open(&db);
    seed.conn.execute_batch("BEGIN").unwrap();
    for i in 0..OBSERVATIONS {
        // Every tenth row holds a key a redaction rescan must remove.
        let secret = if i % 10 == 0 { SECRET } else { "" };
        let narrative = format!(
            "step {i} edited src/module_{}.rs {secret} and ran the tests; {}",
            i % 97,
            "detail ".repeat(20)
        );
        seed.obs(Obs {
            session: "s",
            project: "shop",
            platform: "claude",
            ty: "change",
            title: &format!("Change number {i}"),
            narrative: &narrative,
            concepts: &[],
            files_read: &[],
            files_modified: &[],
            at: i,
        });
    }
    seed.conn.execute_batch("COMMIT; PRAGMA journal_mode=DELETE").unwrap();
    dir
}

fn copy_of(template: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(template).unwrap().flatten() {
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), dir.path().join(e.file_name())).unwrap();
        }
    }
    dir
}

fn integrity(db: &Path) -> String {
    let Ok(c) = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY) else {
        return "cannot open".into();
    };
    c.query_row("PRAGMA integrity_check(1)", [], |r| r.get(0))
        .unwrap_or_else(|e| e.to_string())
}

fn count(db: &Path, sql: &str) -> i64 {
    let c = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    c.query_row(sql, [], |r| r.get(0)).unwrap()
}

fn run(dir: &Path, args: &[&str]) -> Duration {
    let t = Instant::now();
    let out = memd(dir).args(args).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "memd {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    t.elapsed()
}

/// Starts `memd args` and kills it (SIGKILL) after `after`.
fn killed(dir: &Path, args: &[&str], after: Duration) {
    let mut child = memd(dir).args(args).spawn().unwrap();
    std::thread::sleep(after);
    let _ = child.kill();
    let _ = child.wait();
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn damaged_copies(dir: &Path) -> Vec<PathBuf> {
    names(dir)
        .into_iter()
        .filter(|n| n.starts_with("memd.db.damaged-") && !n.ends_with("-wal") && !n.ends_with("-shm"))
        .map(|n| dir.join(n))
        .collect()
}

#[test]
fn issue_34_a_killed_salvage_leaves_the_damaged_file_or_the_whole_copy_and_a_rerun_finishes() {
    let template = filled();
    damage_the_middle(&template.path().join("memd.db"));
    let damaged = std::fs::read(template.path().join("memd.db")).unwrap();

    let reference = copy_of(template.path());
    let took = run(reference.path(), &["repair", "--salvage"]);
    let db = reference.path().join("memd.db");
    assert_eq!(integrity(&db), "ok");
    let expected = count(&db, "SELECT count(*) FROM observations");
    assert!(expected > OBSERVATIONS / 2, "most rows survive 8 KiB of damage: {expected}");
    eprintln!("an uninterrupted salvage took {took:?} and kept {expected} observations");

    for at in KILL_AT {
        let d = copy_of(template.path());
        let db = d.path().join("memd.db");
        killed(d.path(), &["repair", "--salvage"], took.mul_f64(at));
        let now = std::fs::read(&db).unwrap();
        let whole = now != damaged && integrity(&db) == "ok" && count(&db, "SELECT count(*) FROM observations") == expected;
        assert!(
            now == damaged || whole,
            "killed at {at}: memd.db is neither the damaged file nor the whole copy"
        );

        // A repair run after the kill: it finishes or starts over, and says nothing is left to do only when done.
        run(d.path(), &["repair", "--salvage"]);
        assert_eq!(integrity(&db), "ok", "killed at {at}");
        assert_eq!(
            count(&db, "SELECT count(*) FROM observations"),
            expected,
            "killed at {at}: exact count"
        );
        let kept = damaged_copies(d.path());
        assert_eq!(kept.len(), 1, "killed at {at}: one damaged copy kept: {:?}", names(d.path()));
        assert_eq!(std::fs::read(&kept[0]).unwrap(), damaged, "killed at {at}");
        let leftovers: Vec<String> = names(d.path()).into_iter().filter(|n| n.contains(".repair-")).collect();
        assert!(leftovers.is_empty(), "killed at {at}: {leftovers:?}");
        let again = memd(d.path()).args(["repair"]).output().unwrap();
        let said = String::from_utf8_lossy(&again.stdout);
        assert!(said.contains("nothing to repair") && said.contains("damaged copy"), "{said}");
        let doctor = memd(d.path()).arg("doctor").output().unwrap();
        let said = String::from_utf8_lossy(&doctor.stdout);
        assert!(said.contains(&format!("{} is a damaged copy", kept[0].display())), "{said}");
    }
}

#[test]
fn issue_34_a_killed_backup_leaves_no_partial_copy_and_nothing_readable_by_others() {
    use std::os::unix::fs::PermissionsExt;
    let template = filled();
    let reference = copy_of(template.path());
    let took = run(reference.path(), &["backup"]);
    eprintln!("an uninterrupted backup took {took:?}");
    // A backup killed before it made `backups/` leaves no directory at all: nothing behind either.
    let backups = |d: &Path| match d.join("backups").is_dir() {
        true => names(&d.join("backups")),
        false => Vec::new(),
    };
    for at in KILL_AT {
        let d = copy_of(template.path());
        killed(d.path(), &["backup"], took.mul_f64(at));
        let dir = d.path().join("backups");
        for n in backups(d.path()) {
            let p = dir.join(&n);
            let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "killed at {at}: {n} is {mode:o}");
            if n.ends_with(".db") {
                assert_eq!(integrity(&p), "ok", "killed at {at}: a finished copy is whole");
                assert_eq!(count(&p, "SELECT count(*) FROM observations"), OBSERVATIONS);
            }
        }
        run(d.path(), &["backup"]);
        let after = backups(d.path());
        assert!(
            after.iter().all(|n| n.ends_with(".db")),
            "killed at {at}: temp files cleaned: {after:?}"
        );
        for n in &after {
            assert_eq!(count(&dir.join(n), "SELECT count(*) FROM observations"), OBSERVATIONS);
        }
    }
    // `--to` outside the data dir: private from the first byte too.
    let out = tempfile::tempdir().unwrap();
    let to = out.path().join("copy.db");
    run(reference.path(), &["backup", "--to", to.to_str().unwrap()]);
    assert_eq!(std::fs::metadata(&to).unwrap().permissions().mode() & 0o777, 0o600);
}

/// Runs `args` to completion on a copy of `template` (the reference), then on fresh copies killed
/// at each of [`KILL_AT`], each followed by a complete rerun: every rerun must pass
/// `integrity_check` and reach the reference's `state`.
fn killed_then_rerun(template: &Path, args: &[&str], state: impl Fn(&Path) -> Vec<i64>) -> Vec<i64> {
    let reference = copy_of(template);
    let took = run(reference.path(), args);
    let expected = state(&reference.path().join("memd.db"));
    eprintln!("memd {args:?} took {took:?}: {expected:?}");
    for at in KILL_AT {
        let d = copy_of(template);
        killed(d.path(), args, took.mul_f64(at));
        run(d.path(), args);
        let db = d.path().join("memd.db");
        assert_eq!(integrity(&db), "ok", "memd {args:?} killed at {at}");
        assert_eq!(state(&db), expected, "memd {args:?} killed at {at}: exact state after the rerun");
    }
    expected
}

fn table_counts(db: &Path) -> Vec<i64> {
    ["sdk_sessions", "user_prompts", "observations", "session_summaries", "tool_uses"]
        .iter()
        .map(|t| count(db, &format!("SELECT count(*) FROM {t}")))
        .collect()
}

#[test]
fn issue_34_a_killed_import_gc_or_rescan_is_finished_exactly_by_a_rerun() {
    // The claude-mem import: 40 sessions of 300 observations, imported once whatever the kills.
    let src_dir = tempfile::tempdir().unwrap();
    let src = src_dir.path().join("claude-mem.db");
    build(&src, false, 40, 300);
    let empty = tempfile::tempdir().unwrap();
    let imported = killed_then_rerun(empty.path(), &["import-claude-mem", src.to_str().unwrap()], table_counts);
    assert_eq!(imported[2], 12_000, "every observation imported: {imported:?}");

    // Retention and VACUUM over the filled store.
    let template = filled();
    killed_then_rerun(template.path(), &["gc", "--vacuum"], table_counts);

    // The redaction rescan: afterwards no row holds the planted key, and nothing was lost.
    let with_secret = format!("SELECT count(*) FROM observations WHERE narrative LIKE '%{SECRET}%'");
    assert!(count(&template.path().join("memd.db"), &with_secret) > 0, "the key is planted");
    let rescanned = killed_then_rerun(template.path(), &["redact", "--rescan"], |db| {
        let mut v = table_counts(db);
        v.push(count(db, &with_secret));
        v
    });
    assert_eq!(rescanned[5], 0, "the rescan removed every planted key");
    assert_eq!(rescanned[2], OBSERVATIONS);
}
