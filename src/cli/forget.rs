//! `memd forget <id>… | --session <id> | --project <name> [--before <date>]` (docs/spec/api.md §5.2–§5.3).

use crate::protocol::paths;
use std::collections::HashMap;
use std::process::ExitCode;

use anyhow::{Context, bail};
use serde_json::json;

use super::client_context::CliContext;
use crate::mcp::link::with_query;
use crate::store::forget::RecordRef;

#[derive(Debug, clap::Args)]
pub struct ForgetArgs {
    /// Ids to forget: 123, #123, S12 (summary), P7 (prompt).
    pub ids: Vec<String>,
    /// Forget every record of this host session (contentSessionId).
    #[arg(long, conflicts_with_all = ["ids", "project"])]
    pub session: Option<String>,
    /// Forget every record of this project…
    #[arg(long, conflicts_with = "ids")]
    pub project: Option<String>,
    /// …older than this ISO date or epoch ms.
    #[arg(long, requires = "project")]
    pub before: Option<String>,
    /// With --project: only records of this provenance (user, agent, observer, tool_output, import).
    #[arg(long, requires = "project")]
    pub provenance: Option<String>,
    /// Count only; forget nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Logged with the deletion.
    #[arg(long)]
    pub reason: Option<String>,
}

pub fn run(env: &HashMap<String, String>, a: ForgetArgs) -> anyhow::Result<ExitCode> {
    let ctx = CliContext::load(env, None);
    let link = ctx.link();
    let reason = a.reason.clone().unwrap_or_default();
    if !a.ids.is_empty() && !a.dry_run {
        let mut failed = false;
        for raw in &a.ids {
            let Some(r) = RecordRef::parse(raw) else {
                bail!("malformed id {raw:?}")
            };
            let path = with_query(&paths::with_id(r.kind.path(), r.id), &[("reason", reason.clone())]);
            let ans = link.call("DELETE", &path, None).context("forgetting")?;
            match ans.status {
                200 => say!("Forgot {}.", r.kind.label(r.id)),
                _ => {
                    failed = true;
                    say_err!("memd: {}", ans.detail());
                }
            }
        }
        return Ok(if failed { ExitCode::from(1) } else { ExitCode::SUCCESS });
    }
    let mut body = json!({"dryRun": a.dry_run, "reason": reason});
    match (&a.session, &a.project) {
        (Some(s), _) => body["contentSessionId"] = json!(s),
        (None, Some(p)) => {
            body["project"] = json!(p);
            if let Some(v) = &a.provenance {
                body["provenance"] = json!(v);
            }
            if let Some(b) = &a.before {
                body["before"] = b.parse::<i64>().map_or_else(|_| json!(b), |n| json!(n));
            }
        }
        (None, None) if !a.ids.is_empty() => body["ids"] = json!(a.ids),
        (None, None) => bail!("give ids, --session or --project"),
    }
    let ans = link.call("POST", paths::FORGET, Some(&body)).context("forgetting")?;
    if ans.status != 200 {
        say_err!("memd: {}", ans.detail());
        return Ok(ExitCode::from(1));
    }
    let v = ans.json().unwrap_or_default();
    let n = |k: &str| v[k].as_u64().unwrap_or(0);
    let verb = if a.dry_run { "Would forget" } else { "Forgot" };
    say!(
        "{verb} {} observations, {} summaries, {} prompts.",
        n("observations"),
        n("summaries"),
        n("prompts")
    );
    Ok(ExitCode::SUCCESS)
}
