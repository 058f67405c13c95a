//! `memd team init|status|share|unshare|sync --now` (issue 40, `docs/spec/team.md`). `init` talks to
//! the server directly with the owner's URL (once per team); the others go through the worker,
//! except `share`/`unshare`, which edit `MEMD_TEAM_PROJECTS` in `<data>/settings.json`.

use std::collections::HashMap;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, Subcommand};
use serde_json::Value;

use super::client_context::CliContext;
use crate::config::data_dir_from_env;
use crate::protocol::paths;

#[derive(Debug, Args)]
pub struct TeamArgs {
    #[command(subcommand)]
    pub command: TeamCommand,
}

#[derive(Debug, Subcommand)]
pub enum TeamCommand {
    /// Create (or upgrade) the team schema, its row-level security and the memd_member role, with the owner's connection URL.
    Init {
        /// postgres://owner@host/db (the owner of the database; run once per team).
        url: String,
        /// PEM file of extra root certificates for the server's TLS.
        #[arg(long)]
        ca_file: Option<std::path::PathBuf>,
    },
    /// The team sync: server, shared projects, last push and pull, lag, errors.
    Status {
        /// Print the worker's answer as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Share a project's memories with the team (adds it to MEMD_TEAM_PROJECTS in settings.json).
    Share {
        /// The project.
        project: String,
    },
    /// Stop sharing a project (what was shared stays on the server).
    Unshare {
        /// The project.
        project: String,
    },
    /// Keep a project to some members: only the roles granted a project (and admins) read or write its rows. Run by an admin or the owner.
    Grant {
        /// The project.
        project: String,
        /// The PostgreSQL role (a member) granted it.
        role: String,
        /// Take the grant back (a project with no grant left is the whole team's again).
        #[arg(long)]
        revoke: bool,
        /// Connect with this URL (the owner's) instead of MEMD_TEAM_DATABASE_URL.
        #[arg(long)]
        url: Option<String>,
    },
    /// Push and pull now and wait for it.
    Sync {
        /// Required: run the pass now.
        #[arg(long)]
        now: bool,
    },
}

fn call(ctx: &CliContext, method: &str, path: &str) -> anyhow::Result<Value> {
    let ans = ctx
        .link()
        .call_with_timeout(method, path, None, Duration::from_secs(150))
        .context("asking the worker")?;
    if ans.status != 200 {
        anyhow::bail!("{}", ans.detail());
    }
    ans.json().context("the worker's answer is not JSON")
}

fn edit_projects(env: &HashMap<String, String>, project: &str, share: bool) -> anyhow::Result<Vec<String>> {
    let path = data_dir_from_env(env).join("settings.json");
    let mut doc: serde_json::Map<String, Value> = match std::fs::read_to_string(&path) {
        Ok(s) => serde_json::from_str(&s).with_context(|| format!("{} is not a JSON object", path.display()))?,
        Err(_) => serde_json::Map::new(),
    };
    let current = doc.get("MEMD_TEAM_PROJECTS").and_then(Value::as_str).unwrap_or("");
    let mut projects: Vec<String> = current
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(String::from)
        .collect();
    projects.retain(|p| p != project);
    if share {
        projects.push(project.to_string());
    }
    doc.insert("MEMD_TEAM_PROJECTS".into(), Value::String(projects.join(",")));
    let bytes = serde_json::to_vec_pretty(&Value::Object(doc))?;
    crate::data_dir::write_private(&path, &bytes)?;
    Ok(projects)
}

pub fn run(env: &HashMap<String, String>, args: TeamArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        TeamCommand::Init { url, ca_file } => {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            let (before, after) = rt.block_on(async {
                let client = crate::team::server::connect(&url, ca_file.as_deref()).await?;
                crate::team::server::init(&client).await
            })?;
            match before == after {
                true => say!("The team schema is at version {after}; nothing to do."),
                false => {
                    say!("Team schema version {before} → {after}: table memd.rows, row-level security, roles memd_member and memd_admin.")
                }
            }
            say!(
                "Make a developer a member: GRANT memd_member TO <role>; (an admin who may forget anyone's rows: GRANT memd_admin TO <role>;)"
            );
        }
        TeamCommand::Status { json } => {
            let v = call(&CliContext::load(env, None), "GET", paths::TEAM)?;
            if json {
                say_json!(&v);
            } else {
                let (s, l) = (&v["status"], &v["local"]);
                say!(
                    "team sync: {} as {}",
                    s["state"].as_str().unwrap_or("?"),
                    s["origin"].as_str().unwrap_or("?")
                );
                say!(
                    "shared projects: {}",
                    s["projects"]
                        .as_array()
                        .map(|p| p.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", "))
                        .unwrap_or_default()
                );
                say!(
                    "pushed {} · pulled {} · queue {} · lag {} · last pull {}",
                    l["pushed"],
                    l["pulled"],
                    l["queue"],
                    s["lag"],
                    s["last_pull_at"].as_str().unwrap_or("never")
                );
                if let Some(e) = s["last_error"].as_str() {
                    say!("last error: {e}");
                }
                print_team_work(&v["work"]);
            }
        }
        TeamCommand::Grant {
            project,
            role,
            revoke,
            url,
        } => {
            let settings = crate::config::Settings::load(data_dir_from_env(env), env);
            let url = match (url, settings.team.as_ref()) {
                (Some(u), _) => u,
                (None, Some(t)) => t.url.expose().to_string(),
                (None, None) => anyhow::bail!("no team server: set MEMD_TEAM_DATABASE_URL or pass --url"),
            };
            let ca = settings.team.as_ref().and_then(|t| t.ca_file.clone());
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            let changed = rt.block_on(async {
                let client = crate::team::server::connect(&url, ca.as_deref()).await?;
                crate::team::server::check_schema(&client).await?;
                crate::team::server::grant(&client, &project, &role, revoke).await
            })?;
            match (revoke, changed) {
                (false, 0) => say!("{role} already had {project}."),
                (false, _) => say!("{project} is now kept to the roles granted it (and admins); {role} is one."),
                (true, 0) => say!("{role} had no grant on {project}."),
                (true, _) => say!("{role}'s grant on {project} is gone (a project with no grant left is the whole team's)."),
            }
        }
        TeamCommand::Share { project } => {
            let settings = crate::config::Settings::load(data_dir_from_env(env), env);
            if settings.team.is_none() {
                anyhow::bail!("no team server is set: set MEMD_TEAM_DATABASE_URL (docs/spec/team.md) before sharing a project");
            }
            let now = edit_projects(env, &project, true)?;
            say!(
                "Sharing {}. The worker applies it at its next start (memd restart).",
                now.join(", ")
            );
        }
        TeamCommand::Unshare { project } => {
            let now = edit_projects(env, &project, false)?;
            say!(
                "Shared now: {}. What {project} shared stays on the server. memd restart applies it.",
                if now.is_empty() { "none".to_string() } else { now.join(", ") }
            );
        }
        TeamCommand::Sync { now } => {
            if !now {
                anyhow::bail!("memd team sync needs --now (the worker syncs by itself every MEMD_TEAM_SYNC_MS)");
            }
            let v = call(&CliContext::load(env, None), "POST", paths::TEAM_SYNC)?;
            say!(
                "pushed {} · pulled {} · removed {} · lag {}",
                v["pushed"],
                v["pulled"],
                v["removed"],
                v["lag"]
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Teammates' work: each origin's task and open items.
fn print_team_work(work: &Value) {
    for w in work.as_array().into_iter().flatten() {
        let open: Vec<String> = w["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|i| i["status"] != "done")
            .map(|i| {
                format!(
                    "{} [{}] {}",
                    i["key"].as_str().unwrap_or(""),
                    i["status"].as_str().unwrap_or(""),
                    i["text"].as_str().unwrap_or("")
                )
            })
            .collect();
        say!(
            "{} on {}{}: {}",
            w["origin"].as_str().unwrap_or("?"),
            w["project"].as_str().unwrap_or("?"),
            w["branch"]
                .as_str()
                .filter(|b| !b.is_empty())
                .map(|b| format!(" ({b})"))
                .unwrap_or_default(),
            w["task"].as_str().unwrap_or("no task")
        );
        for item in open {
            say!("  {item}");
        }
    }
}
