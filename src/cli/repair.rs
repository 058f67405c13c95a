//! `memd backup [--to FILE]` — an online copy of the database (safe while the worker runs) into
//! `<data>/backups/` (the newest `MEMD_BACKUP_KEEP` are kept) or FILE.
//!
//! `memd repair [--salvage]` — with the worker stopped: when `memd.db` fails `integrity_check`, it
//! moves beside as `memd.db.damaged-<stamp>` and is replaced by the newest backup that passes the
//! check, or (`--salvage`, or no good backup) by a fresh file holding every row that can still be
//! read. The new file is checked before the command reports.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};

use crate::clock::now_ms;
use crate::config::{Settings, data_dir_from_env};
use crate::data_dir::DataDir;
use crate::store::integrity::{self, Integrity};
use crate::store::{migrations, open, salvage};

pub fn backup(env: &HashMap<String, String>, to: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let dir = DataDir::new(data_dir_from_env(env));
    let db = dir.db();
    if !db.is_file() {
        bail!("no database at {}", db.display());
    }
    let keep = Settings::load(dir.root.clone(), env).retention.backup_keep as usize;
    let dest = to.unwrap_or_else(|| integrity::backup_name(&dir.root.join("backups"), now_ms()));
    let bytes = integrity::backup(&db, &dest, keep).context("backing up")?;
    println!("backed up {} to {} ({bytes} bytes)", db.display(), dest.display());
    Ok(ExitCode::SUCCESS)
}

fn stamp() -> String {
    let iso = crate::clock::iso(now_ms());
    format!("{}Z", iso[..19].replace(['-', ':'], ""))
}

/// Moves `memd.db` and its `-wal`/`-shm` to `memd.db.damaged-<stamp>` (SQLite still finds the WAL).
fn set_aside(db: &std::path::Path) -> anyhow::Result<PathBuf> {
    let aside = PathBuf::from(format!("{}.damaged-{}", db.display(), stamp()));
    std::fs::rename(db, &aside).with_context(|| format!("moving {} aside", db.display()))?;
    for suffix in ["-wal", "-shm"] {
        let from = PathBuf::from(format!("{}{suffix}", db.display()));
        if from.exists() {
            std::fs::rename(&from, format!("{}{suffix}", aside.display())).with_context(|| format!("moving {} aside", from.display()))?;
        }
    }
    Ok(aside)
}

pub fn repair(env: &HashMap<String, String>, force_salvage: bool) -> anyhow::Result<ExitCode> {
    use std::os::unix::fs::PermissionsExt;
    let dir = DataDir::new(data_dir_from_env(env));
    let _lock = dir
        .lock()
        .context("repair needs the worker stopped (`memd` holds the data-dir lock)")?;
    let db = dir.db();
    if !db.is_file() {
        bail!("no database at {}", db.display());
    }
    println!("checking {} (integrity_check) …", db.display());
    match integrity::check_file(&db, true, Duration::ZERO) {
        Integrity::Ok => {
            println!("the database passes integrity_check: nothing to repair");
            return Ok(ExitCode::SUCCESS);
        }
        other => println!("found: {other:?}"),
    }
    let aside = set_aside(&db)?;
    println!("kept the damaged file as {}", aside.display());
    let good = (!force_salvage)
        .then(|| integrity::newest_good_backup(&dir.root.join("backups")))
        .flatten();
    match good {
        Some(backup) => {
            std::fs::copy(&backup, &db).with_context(|| format!("restoring {}", backup.display()))?;
            std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o600))?;
            println!(
                "restored the newest good backup {} (changes after it are only in the damaged file; `memd repair --salvage` on it recovers them instead)",
                backup.display()
            );
        }
        None => {
            let mut fresh = open::open_writer(&db, true).context("creating the new database")?;
            migrations::migrate(&mut fresh, now_ms()).context("creating the schema")?;
            let report = salvage::salvage(&aside, &mut fresh).context("copying the readable rows")?;
            drop(fresh);
            let copied: u64 = report.copied.values().sum();
            let lost: u64 = report.unreadable.values().sum();
            println!(
                "salvaged {copied} rows into a new {} ({lost} unreadable; {} rows of lost parents dropped)",
                db.display(),
                report.orphans_dropped
            );
            for (table, n) in &report.copied {
                let bad = report.unreadable.get(table).copied().unwrap_or(0);
                println!(
                    "  {table}: {n} copied{}",
                    if bad > 0 { format!(", {bad} unreadable") } else { String::new() }
                );
            }
        }
    }
    match integrity::check_file(&db, true, Duration::ZERO) {
        Integrity::Ok => {
            println!("the repaired database passes integrity_check");
            Ok(ExitCode::SUCCESS)
        }
        other => {
            eprintln!("memd: the repaired database still fails integrity_check: {other:?}");
            Ok(ExitCode::from(1))
        }
    }
}
