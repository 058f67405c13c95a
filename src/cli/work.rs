//! `memd work`: show and edit the work state of this project and git branch (issue 39) through
//! `GET/POST /api/work-state` — the same state the agent writes with `work_state_write` and
//! SessionStart injects.

use std::collections::HashMap;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};
use serde_json::{Value, json};

use super::client_context::{CliContext, call_json};
use crate::mcp::link::{WorkerLink, with_query};
use crate::protocol::paths;

#[derive(Debug, Args)]
pub struct WorkArgs {
    #[command(subcommand)]
    pub command: Option<WorkCommand>,
    /// The project (default: this directory's).
    #[arg(long, global = true)]
    pub project: Option<String>,
    /// The git branch (default: the one this directory is on; "" for none).
    #[arg(long, global = true)]
    pub branch: Option<String>,
    /// Print the state as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum WorkCommand {
    /// Set the task ("" clears it).
    Task {
        /// The task you are on.
        text: String,
    },
    /// Set the notes ("" clears them).
    Notes {
        /// Free notes for the next session.
        text: String,
    },
    /// Add an item, or replace the item of that key.
    Add {
        /// A short stable name; adding the same key again replaces the item.
        key: String,
        /// What the item is.
        text: String,
        /// todo, doing, done or blocked.
        #[arg(long, default_value = "todo")]
        status: String,
    },
    /// Mark an item done.
    Done {
        /// The item's key.
        key: String,
    },
    /// Change an item's status (todo, doing, done, blocked).
    Status {
        /// The item's key.
        key: String,
        /// todo, doing, done or blocked.
        status: String,
    },
    /// Remove an item.
    Remove {
        /// The item's key.
        key: String,
    },
}

struct Target {
    link: WorkerLink,
    project: String,
    branch: String,
}

impl Target {
    fn get(&self) -> anyhow::Result<Value> {
        let q = [("project", self.project.clone()), ("branch", self.branch.clone())];
        call_json(&self.link, "GET", &with_query(paths::WORK_STATE, &q), None)
    }

    fn post(&self, mut body: Value) -> anyhow::Result<Value> {
        body["project"] = json!(self.project);
        body["branch"] = json!(self.branch);
        call_json(&self.link, "POST", paths::WORK_STATE, Some(&body))
    }

    /// The text of the item `key`, or an error naming it.
    fn item_text(&self, key: &str) -> anyhow::Result<String> {
        let v = self.get()?;
        let items = v["state"]["items"].as_array().cloned().unwrap_or_default();
        items
            .iter()
            .find(|i| i["key"] == key)
            .and_then(|i| i["text"].as_str().map(String::from))
            .with_context(|| format!("no item {key} in the work state of {}", self.project))
    }
}

pub fn run(env: &HashMap<String, String>, args: WorkArgs) -> anyhow::Result<ExitCode> {
    let ctx = CliContext::load(env, None);
    let cwd = std::env::current_dir().unwrap_or_default();
    let t = Target {
        link: ctx.link(),
        project: args.project.unwrap_or_else(|| ctx.identity().primary),
        branch: args.branch.unwrap_or_else(|| crate::freshness::git::branch_of(&cwd)),
    };
    let item = |key: &str, text: String, status: &str| json!({"items": [{"key": key, "text": text, "status": status}]});
    match args.command {
        None => return show(&t, args.json),
        Some(WorkCommand::Task { text }) => t.post(json!({"task": text}))?,
        Some(WorkCommand::Notes { text }) => t.post(json!({"notes": text}))?,
        Some(WorkCommand::Add { key, text, status }) => t.post(item(&key, text, &status))?,
        Some(WorkCommand::Done { key }) => t.post(item(&key, t.item_text(&key)?, "done"))?,
        Some(WorkCommand::Status { key, status }) => t.post(item(&key, t.item_text(&key)?, &status))?,
        Some(WorkCommand::Remove { key }) => {
            t.item_text(&key)?;
            t.post(json!({"remove": [key]}))?
        }
    };
    show(&t, false)
}

fn show(t: &Target, as_json: bool) -> anyhow::Result<ExitCode> {
    let v = t.get()?;
    if as_json {
        say_json!(&v);
        return Ok(ExitCode::SUCCESS);
    }
    match v["section"].as_str() {
        Some(section) => say!("{section}"),
        None if v["state"].is_null() => say!(
            "No work state for {} yet. Add an item with `memd work add <key> <text>`.",
            crate::text::sink::inline(&t.project)
        ),
        None => say!("The work state of {} is empty.", crate::text::sink::inline(&t.project)),
    }
    Ok(ExitCode::SUCCESS)
}
