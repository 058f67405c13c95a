//! `memd quarantine`: the records memd stored but will not inject because they read as
//! instructions to an agent (issue 36), newest first — kind, id, provenance, reason, title.
//! `memd quarantine release 12` trusts observation #12 again; `memd forget 12` removes it.
//! `memd doctor` lists the newest of them too ([`doctor_lines`], read from the database file).

use crate::protocol::paths;
use std::collections::HashMap;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};
use rusqlite::{Connection, OpenFlags};

use super::client_context::CliContext;
use crate::text::sink::inline;

#[derive(Debug, Args)]
pub struct QuarantineArgs {
    #[command(subcommand)]
    pub action: Option<QuarantineAction>,
    /// Print the list as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum QuarantineAction {
    /// Trust a quarantined observation (12 or #12): it is injected again.
    Release {
        /// The observation to trust again (12 or #12).
        id: String,
    },
}

pub fn run(env: &HashMap<String, String>, a: QuarantineArgs) -> anyhow::Result<ExitCode> {
    let ctx = CliContext::load(env, None);
    if let Some(QuarantineAction::Release { id }) = a.action {
        let n: i64 = id.trim_start_matches('#').parse().context("an observation id: 12 or #12")?;
        let ans = ctx
            .link()
            .call("POST", &paths::with_id(paths::OBSERVATION_RELEASE, n), Some(&serde_json::json!({})))
            .context("releasing the observation")?;
        if ans.status != 200 {
            say_err!("memd: {}", ans.detail());
            return Ok(ExitCode::from(1));
        }
        say!("Released #{n}: it is injected again.");
        return Ok(ExitCode::SUCCESS);
    }
    let ans = ctx.link().call("GET", paths::QUARANTINE, None).context("reading the quarantine")?;
    if ans.status != 200 {
        say_err!("memd: {}", ans.detail());
        return Ok(ExitCode::from(1));
    }
    let v = ans.json().unwrap_or_default();
    if a.json {
        say_json!(&v);
        return Ok(ExitCode::SUCCESS);
    }
    let items = v["items"].as_array().cloned().unwrap_or_default();
    if items.is_empty() {
        say!("Nothing is quarantined.");
        return Ok(ExitCode::SUCCESS);
    }
    say!("{} quarantined (not injected; still searchable):", v["total"].as_i64().unwrap_or(0));
    for i in &items {
        say!("  {}", line(i));
    }
    say!("Release one with `memd quarantine release <id>`, or remove it with `memd forget <id>`.");
    Ok(ExitCode::SUCCESS)
}

/// `#12 [tool] override: <title>` (summaries `S3`), safe for a terminal.
fn line(i: &serde_json::Value) -> String {
    let id = i["id"].as_i64().unwrap_or(0);
    let label = if i["kind"] == "summary" {
        format!("S{id}")
    } else {
        format!("#{id}")
    };
    format!(
        "{label} [{}] {}: {}",
        inline(i["provenance"].as_str().unwrap_or("")),
        inline(i["reason"].as_str().unwrap_or("")),
        inline(i["title"].as_str().unwrap_or(""))
    )
}

/// What `memd doctor` says of the quarantine of the database at `db` (read-only; nothing when
/// the file cannot be read or nothing is quarantined).
pub fn doctor_lines(db: &Path) -> Vec<String> {
    let Ok(conn) = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY) else {
        return Vec::new();
    };
    let Ok((items, total)) = crate::store::quarantine::list(&conn, 5) else {
        return Vec::new();
    };
    if total == 0 {
        return Vec::new();
    }
    let mut out = vec![format!(
        "{total} record(s) read as instructions to an agent and are not injected; review them with `memd quarantine`"
    )];
    out.extend(
        items.iter().map(|q| {
            line(&serde_json::json!({"kind": q.kind, "id": q.id, "provenance": q.provenance, "reason": q.reason, "title": q.title}))
        }),
    );
    out
}
