//! `memd retry [--session <contentSessionId>]`: failed pending rows back to `pending` and their
//! sessions un-parked (`POST /api/pending/retry`, docs/spec/api.md §6.4).

use crate::protocol::paths;
use std::collections::HashMap;
use std::process::ExitCode;

use anyhow::Context;
use serde_json::json;

use super::client_context::CliContext;

pub fn run(env: &HashMap<String, String>, session: Option<String>) -> anyhow::Result<ExitCode> {
    let ctx = CliContext::load(env, None);
    let body = match session {
        Some(s) => json!({"contentSessionId": s}),
        None => json!({}),
    };
    let ans = ctx
        .link()
        .call("POST", paths::PENDING_RETRY, Some(&body))
        .context("asking the worker to retry")?;
    if ans.status != 200 {
        say_err!("memd: {}", ans.detail());
        return Ok(ExitCode::from(1));
    }
    let v = ans.json().unwrap_or_default();
    say!("Requeued {} rows of {} sessions.", v["requeued"], v["sessions"]);
    Ok(ExitCode::SUCCESS)
}
