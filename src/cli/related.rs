//! `memd related <entity>` (issue 41): what the graph connects to a file, symbol, command, error or
//! concept, with the observations that show it — the `related` tool's list for a person, whose
//! last line names `memd show` instead of a tool call.

use std::collections::HashMap;
use std::process::ExitCode;

use clap::Args;

use super::client_context::{CliContext, call_json};
use crate::mcp::link::with_query;
use crate::protocol::paths;

#[derive(Debug, Args)]
pub struct RelatedArgs {
    /// A file (relative to the project root, absolute, or the end of its path), a symbol, a command, an error line or a concept.
    pub entity: String,
    /// The project (default: this directory's; * for all).
    #[arg(long)]
    pub project: Option<String>,
    /// Relations (fixes, modified_with, fails_with, defines, tests, depends_on, decided, mentions) or entity kinds (file, symbol, command, error, concept, dependency, decision) to keep, comma-separated.
    #[arg(long)]
    pub kinds: Option<String>,
    /// At most this many neighbours (1-100).
    #[arg(long, default_value_t = 20)]
    pub limit: u32,
    /// Print the answer as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(env: &HashMap<String, String>, args: RelatedArgs) -> anyhow::Result<ExitCode> {
    let ctx = CliContext::load(env, None);
    let project = match args.project.as_deref() {
        Some("*") => String::new(),
        Some(p) => p.to_string(),
        None => ctx.identity().chain.last().cloned().unwrap_or_default(),
    };
    let q = [
        ("entity", args.entity.clone()),
        ("project", project),
        ("kinds", args.kinds.clone().unwrap_or_default()),
        ("limit", args.limit.to_string()),
    ];
    let v = call_json(&ctx.link(), "GET", &with_query(paths::RELATED, &q), None)?;
    if args.json {
        say_json!(&v);
        return Ok(ExitCode::SUCCESS);
    }
    let text = crate::mcp::related::render(&v);
    let shown: Vec<String> = text
        .lines()
        .map(|l| match l.strip_prefix("Next: get_observations([") {
            Some(ids) => format!(
                "Next: memd show {}",
                ids.trim_end_matches("]) for the evidence.").replace(", ", " ")
            ),
            None => l.to_string(),
        })
        .collect();
    say!("{}", shown.join("\n"));
    Ok(ExitCode::SUCCESS)
}
