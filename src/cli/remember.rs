//! `memd remember "text"`: an explicit memory through `POST /api/memory/save` (the worker is
//! started when needed) — the user's own words, or an agent's note when an agent host's markers
//! are in the environment ([`provenance`]).

use crate::protocol::paths;
use std::collections::HashMap;
use std::process::ExitCode;

use anyhow::Context;
use serde_json::json;

use super::client_context::CliContext;

/// The optional flags of `memd remember`.
pub struct Extra {
    pub title: Option<String>,
    pub project: Option<String>,
    pub obs_type: Option<String>,
    pub supersedes: Option<i64>,
}

/// Variables an agent host sets in the environment of the commands its agent runs (Claude Code's
/// Bash tool, Codex's shell, Gemini CLI's shell tool): a `memd remember` under one of them was
/// typed by the agent, not the user.
pub const AGENT_MARKERS: [&str; 6] = [
    "CLAUDECODE",
    "CLAUDE_CODE_ENTRYPOINT",
    "CODEX_SANDBOX",
    "CODEX_SANDBOX_NETWORK_DISABLED",
    "CODEX_THREAD_ID",
    "GEMINI_CLI",
];

/// Who is speaking (issue 51): the user at their own prompt, or an agent through its shell tool.
pub fn provenance(env: &HashMap<String, String>) -> &'static str {
    match AGENT_MARKERS.iter().any(|k| env.get(*k).is_some_and(|v| !v.is_empty())) {
        true => "agent",
        false => "user",
    }
}

pub fn run(env: &HashMap<String, String>, text: &str, x: Extra) -> anyhow::Result<ExitCode> {
    let ctx = CliContext::load(env, None);
    let project = x.project.unwrap_or_else(|| ctx.identity().primary);
    let mut body = json!({"text": text, "project": project, "provenance": provenance(env)});
    if let Some(t) = x.title {
        body["title"] = json!(t);
    }
    if let Some(t) = x.obs_type {
        body["type"] = json!(t);
    }
    if let Some(id) = x.supersedes {
        body["supersedes"] = json!(id);
    }
    let ans = ctx
        .link()
        .call("POST", paths::MEMORY_SAVE, Some(&body))
        .context("saving the memory")?;
    if ans.status != 200 {
        say_err!("memd: {}", ans.detail());
        return Ok(ExitCode::from(1));
    }
    let v = ans.json().unwrap_or_default();
    let id = v["id"].as_i64().unwrap_or(0);
    if v["reinforced"].as_bool() == Some(true) {
        say!(
            "Already remembered as #{id} (seen {} times).",
            v["occurrenceCount"].as_i64().unwrap_or(2)
        );
    } else {
        say!("Saved memory #{id} in {}.", v["project"].as_str().unwrap_or(""));
        if let Some(old) = v["supersedes"].as_i64() {
            say!("#{old} is marked superseded by #{id}.");
        }
    }
    Ok(ExitCode::SUCCESS)
}
