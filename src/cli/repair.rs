//! `memd backup [--to FILE]` — an online copy of the database (safe while the worker runs) into
//! `<data>/backups/` (the newest `MEMD_BACKUP_KEEP` are kept) or FILE.
//!
//! `memd repair [--salvage]` — with the worker stopped: when `memd.db` fails `integrity_check`, a
//! replacement is built aside from the newest backup that passes the check, or (`--salvage`, or no
//! good backup) from every row that can still be read; once complete and checked it takes
//! `memd.db`'s place and the damaged file is kept as `memd.db.damaged-<stamp>` ([`replace`]). A
//! kill at any point leaves either the damaged file or the complete copy in place, never a
//! partial one; a rerun finishes or starts over.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};

use crate::clock::now_ms;
use crate::config::{Settings, data_dir_from_env};
use crate::data_dir::DataDir;
use crate::store::integrity::{self, Integrity};
use crate::store::{migrations, open, replace, salvage};

pub fn backup(env: &HashMap<String, String>, to: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let dir = DataDir::new(data_dir_from_env(env));
    let db = dir.db();
    if !db.is_file() {
        bail!("no database at {}", db.display());
    }
    let keep = Settings::load(dir.root.clone(), env).retention.backup_keep as usize;
    let backups = dir.backups();
    if to.is_none() {
        dir.ensure_subdir(&backups)?;
    }
    integrity::remove_stale_temps(&backups);
    let dest = to.unwrap_or_else(|| integrity::backup_name(&backups, now_ms()));
    let bytes = integrity::backup(&db, &dest, keep).context("backing up")?;
    say!("backed up {} to {} ({bytes} bytes)", db.display(), dest.display());
    Ok(ExitCode::SUCCESS)
}

fn stamp() -> String {
    let iso = crate::clock::iso(now_ms());
    format!("{}Z", iso[..19].replace(['-', ':'], ""))
}

/// Points at what earlier repairs kept aside (the only copies of anything a salvage lost).
fn mention_damaged(db: &Path) {
    for p in replace::damaged_copies(db) {
        say!(
            "  a damaged copy kept by an earlier repair: {} (delete it once you no longer need it)",
            p.display()
        );
    }
}

/// Builds the replacement at `memd.db.repair-building` from the newest good backup or from the
/// readable rows of `db`, then marks it ready. `db` itself is not touched.
fn build_replacement(dir: &DataDir, db: &Path, force_salvage: bool) -> anyhow::Result<()> {
    let good = (!force_salvage)
        .then(|| integrity::newest_good_backup(&dir.root.join("backups")))
        .flatten();
    let building = replace::start_building(db)?;
    match good {
        Some(backup) => {
            let src = rusqlite::Connection::open_with_flags(&backup, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
                .with_context(|| format!("opening {}", backup.display()))?;
            src.backup(rusqlite::MAIN_DB, &building, None::<fn(rusqlite::backup::Progress)>)
                .with_context(|| format!("restoring {}", backup.display()))?;
            say!(
                "restored the newest good backup {} (changes after it are only in the damaged file; `memd repair --salvage` recovers them instead)",
                backup.display()
            );
        }
        None => {
            let mut fresh = open::open_writer(&building, true).context("creating the new database")?;
            migrations::migrate(&mut fresh, now_ms()).context("creating the schema")?;
            let report = salvage::salvage(db, &mut fresh).context("copying the readable rows")?;
            // One self-contained file: the copy's WAL folded in before it is renamed.
            fresh
                .pragma_update(None, "journal_mode", "DELETE")
                .context("finishing the new database")?;
            drop(fresh);
            print_report(&report);
        }
    }
    match integrity::check_file(&building, true, Duration::ZERO) {
        Integrity::Ok => {
            replace::mark_ready(db)?;
            Ok(())
        }
        other => bail!("the rebuilt copy fails integrity_check ({other:?}); {} is unchanged", db.display()),
    }
}

fn print_report(report: &salvage::SalvageReport) {
    let copied: u64 = report.copied.values().sum();
    let lost: u64 = report.unreadable.values().sum();
    say!(
        "salvaged {copied} rows ({lost} unreadable; {} rows of lost parents dropped)",
        report.orphans_dropped
    );
    for (table, n) in &report.copied {
        let bad = report.unreadable.get(table).copied().unwrap_or(0);
        say!(
            "  {table}: {n} copied{}",
            if bad > 0 { format!(", {bad} unreadable") } else { String::new() }
        );
    }
}

pub fn repair(env: &HashMap<String, String>, force_salvage: bool) -> anyhow::Result<ExitCode> {
    use std::os::unix::fs::PermissionsExt;
    let dir = DataDir::new(data_dir_from_env(env));
    let _lock = dir
        .lock()
        .context("repair needs the worker stopped (`memd` holds the data-dir lock)")?;
    let db = dir.db();
    let ready = replace::ready(&db);
    let interrupted = ready.is_file() && integrity::check_file(&ready, true, Duration::ZERO) == Integrity::Ok;
    if interrupted {
        say!("finishing an interrupted repair: {} is complete and checked", ready.display());
    } else {
        if !db.is_file() {
            bail!("no database at {}", db.display());
        }
        say!("checking {} (integrity_check) …", db.display());
        match integrity::check_file(&db, true, Duration::ZERO) {
            Integrity::Ok => {
                let _ = std::fs::remove_file(replace::building(&db));
                say!("the database passes integrity_check: nothing to repair");
                mention_damaged(&db);
                return Ok(ExitCode::SUCCESS);
            }
            other => say!("found: {other:?}"),
        }
        build_replacement(&dir, &db, force_salvage)?;
    }
    let aside = replace::swap_in(&db, &stamp())?;
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o600))?;
    say!("kept the damaged file as {}", aside.display());
    match integrity::check_file(&db, true, Duration::ZERO) {
        Integrity::Ok => {
            say!("the repaired database passes integrity_check");
            Ok(ExitCode::SUCCESS)
        }
        other => {
            say_err!("memd: the repaired database still fails integrity_check: {other:?}");
            Ok(ExitCode::from(1))
        }
    }
}
