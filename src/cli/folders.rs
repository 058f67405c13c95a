//! `memd folders [--dry-run] [--json]`: one pass of the folder context files (issue 39) through
//! `POST /api/admin/folders`; `--dry-run` shows each file and the section it would get, writing
//! nothing (it works while `MEMD_FOLDER_CONTEXT` is off).

use std::collections::HashMap;
use std::process::ExitCode;

use anyhow::Context;
use serde_json::{Value, json};

use super::client_context::CliContext;
use crate::protocol::paths;

pub fn run(env: &HashMap<String, String>, dry_run: bool, as_json: bool) -> anyhow::Result<ExitCode> {
    let link = CliContext::load(env, None).link();
    let ans = link
        .call("POST", paths::FOLDERS, Some(&json!({"dryRun": dry_run})))
        .context("asking the worker")?;
    if ans.status != 200 {
        say_err!("memd: {}", ans.detail());
        return Ok(ExitCode::from(1));
    }
    let v = ans.json().unwrap_or(Value::Null);
    if as_json {
        say_json!(&v);
        return Ok(ExitCode::SUCCESS);
    }
    let changes = v["changes"].as_array().cloned().unwrap_or_default();
    if changes.is_empty() {
        say!("No folder has recent observations of its files.");
    }
    let verb = if dry_run { "would" } else { "did" };
    for c in &changes {
        let action = c["action"].as_str().unwrap_or("?");
        let file = c["file"].as_str().unwrap_or("?");
        match c["reason"].as_str() {
            Some(reason) => say!("{action:>9}  {file}  ({reason})"),
            None => say!("{action:>9}  {file}"),
        }
        if dry_run && let Some(section) = c["section"].as_str() {
            for line in section.lines() {
                say!("           | {line}");
            }
        }
    }
    if dry_run {
        let off = if v["enabled"] == true {
            ""
        } else {
            " (MEMD_FOLDER_CONTEXT is off: nothing is written until it is on)"
        };
        say!("Dry run: memd {verb} write the sections above between its markers{off}.");
    }
    Ok(ExitCode::SUCCESS)
}
