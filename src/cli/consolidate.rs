//! `memd consolidate [--dry-run]`: the consolidation pass now (issue 38) — near-duplicates
//! merged, relative dates made absolute, chains of superseded memories folded — each change
//! printed. Through the worker (`POST /api/admin/consolidate`) when one runs, else in-process
//! holding the data-dir lock.

use std::collections::HashMap;
use std::process::ExitCode;

use anyhow::Context;
use serde_json::{Value, json};

use super::client_context::CliContext;
use crate::clock::now_ms;
use crate::freshness::consolidation_plan as consolidation;
use crate::protocol::paths;
use crate::store::{migrations, open};

pub fn run(env: &HashMap<String, String>, dry_run: bool) -> anyhow::Result<ExitCode> {
    let ctx = CliContext::load(env, None);
    let changes = if ctx.worker_running() {
        let ans = ctx
            .link()
            .call_with_timeout(
                "POST",
                paths::CONSOLIDATE,
                Some(&json!({"dryRun": dry_run})),
                std::time::Duration::from_secs(3600),
            )
            .context("asking the worker to consolidate")?;
        if ans.status != 200 {
            say_err!("memd: {}", ans.detail());
            return Ok(ExitCode::from(1));
        }
        ans.json().unwrap_or_default()["changes"].clone()
    } else {
        in_process(&ctx, dry_run)?
    };
    let changes = changes.as_array().cloned().unwrap_or_default();
    for c in &changes {
        say!("{}", describe(c));
    }
    match (changes.len(), dry_run) {
        (0, _) => say!("Nothing to consolidate."),
        (n, true) => say!("{n} change(s) would be made (dry run; nothing written)."),
        (n, false) => say!("{n} change(s) made; the viewer's Freshness page keeps the log."),
    }
    Ok(ExitCode::SUCCESS)
}

/// One line per change.
fn describe(c: &Value) -> String {
    let id = |k: &str| c[k].as_i64().map_or("?".to_string(), |n| format!("#{n}"));
    match c["action"].as_str().unwrap_or("") {
        "merge" => format!(
            "merge     {} into {} ({})",
            id("duplicate"),
            id("survivor"),
            c["reason"].as_str().unwrap_or("")
        ),
        "absolute_date" => format!(
            "date      {} {}: {:?} → {:?}",
            id("id"),
            c["field"].as_str().unwrap_or(""),
            c["before"].as_str().unwrap_or(""),
            c["after"].as_str().unwrap_or("")
        ),
        "fold_chain" => format!("fold      {}: superseded by {} → {}", id("id"), id("from"), id("to")),
        other => format!("{other} {c}"),
    }
}

fn in_process(ctx: &CliContext, dry_run: bool) -> anyhow::Result<Value> {
    let _lock = ctx.dir.lock().context("taking the data-dir lock")?;
    let mut conn = open::open_writer(&ctx.dir.db(), true).context("opening the database")?;
    migrations::migrate(&mut conn, now_ms()).context("migrating the database")?;
    let tx = conn.transaction()?;
    let changes = consolidation::plan(&tx)?;
    if !dry_run && !changes.is_empty() {
        let now = now_ms();
        consolidation::apply(&tx, &changes, &format!("run-{now}"), now)?;
        tx.commit()?;
    }
    Ok(serde_json::to_value(&changes)?)
}
