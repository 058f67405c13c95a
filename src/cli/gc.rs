//! `memd gc [--dry-run] [--vacuum]`: retention now (docs/spec/storage.md §6). Through the worker
//! (`POST /api/admin/gc`) when one runs, else in-process holding the data-dir lock.

use crate::protocol::paths;
use std::collections::HashMap;
use std::process::ExitCode;

use anyhow::Context;
use serde_json::{Value, json};

use super::client_context::CliContext;
use crate::clock::now_ms;
use crate::store::{migrations, open, retention, stats};

pub fn run(env: &HashMap<String, String>, dry_run: bool, vacuum: bool) -> anyhow::Result<ExitCode> {
    let ctx = CliContext::load(env, None);
    let doc = if ctx.worker_running() {
        let ans = ctx
            .link()
            .call_with_timeout(
                "POST",
                paths::GC,
                Some(&json!({"dryRun": dry_run, "vacuum": vacuum})),
                std::time::Duration::from_secs(3600),
            )
            .context("asking the worker to run gc")?;
        if ans.status != 200 {
            say_err!("memd: {}", ans.detail());
            return Ok(ExitCode::from(1));
        }
        ans.json().unwrap_or_default()
    } else {
        in_process(&ctx, dry_run, vacuum)?
    };
    let verb = if dry_run { "would delete" } else { "deleted" };
    for (rule, n) in doc["rules"].as_object().into_iter().flatten() {
        say!("{rule:>16}: {verb} {n}");
    }
    // Sizes as a person reads them (issue 55: raw byte counts before).
    let size = |k: &str| doc[k].as_u64().map(super::status::human_bytes).unwrap_or_else(|| "?".into());
    say!(
        "total {} rows; database {} → {}{}",
        doc["total"],
        size("dbBytesBefore"),
        size("dbBytesAfter"),
        if doc["vacuumed"] == json!(true) { " (vacuumed)" } else { "" }
    );
    Ok(ExitCode::SUCCESS)
}

fn in_process(ctx: &CliContext, dry_run: bool, vacuum: bool) -> anyhow::Result<Value> {
    let _lock = ctx.dir.lock().context("taking the data-dir lock")?;
    let path = ctx.dir.db();
    let before = stats::file_size(&path);
    let mut conn = open::open_writer(&path, true).context("opening the database")?;
    migrations::migrate(&mut conn, now_ms()).context("migrating the database")?;
    let rules = ctx.settings.retention;
    let now = now_ms();
    let report = if dry_run {
        retention::dry_run(&conn, &rules, now)?
    } else {
        let mut total = retention::RetentionReport::default();
        loop {
            let tx = conn.transaction()?;
            let chunk = retention::run_chunk(&tx, &rules, now)?;
            tx.commit()?;
            total.merge(&chunk);
            if chunk.total() == 0 {
                break;
            }
        }
        retention::finish(&conn, now)?;
        total
    };
    let vacuumed = vacuum && !dry_run;
    if vacuumed {
        conn.execute_batch("VACUUM")?;
        retention::record_vacuum(&conn, now)?;
    }
    let _ = conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);");
    drop(conn);
    Ok(json!({
        "rules": report.as_map(), "total": report.total(), "vacuumed": vacuumed,
        "dbBytesBefore": before, "dbBytesAfter": stats::file_size(&path),
    }))
}
