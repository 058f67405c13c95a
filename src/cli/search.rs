//! `memd search "query"`: `GET /api/search`, printing the same index the MCP tool returns; `--json`
//! prints the JSON answer with its list columns as real arrays.

use crate::protocol::paths;
use std::collections::HashMap;
use std::process::ExitCode;

use anyhow::Context;

use super::client_context::CliContext;
use crate::mcp::link::with_pairs;
use crate::protocol::params::{Bounded, Words, to_pairs};
use crate::protocol::search::{Answer, OrderBy, SearchParams};

fn order_by(s: &str) -> Result<OrderBy, String> {
    OrderBy::parse(s).ok_or_else(|| "one of relevance, date_desc, date_asc".to_string())
}

#[derive(Debug, clap::Args)]
pub struct SearchArgs {
    /// Words, "phrases", prefix*.
    pub query: Vec<String>,
    /// Project or comma list; default: this directory's project chain; `*` = all.
    #[arg(long)]
    pub project: Option<String>,
    /// observations | sessions | prompts, or an observation type.
    #[arg(long = "type")]
    pub kind: Option<String>,
    /// Rows per page (1–100, default 20).
    #[arg(long)]
    pub limit: Option<u32>,
    /// Rows to skip (the next page).
    #[arg(long)]
    pub offset: Option<u32>,
    /// relevance | date_desc | date_asc.
    #[arg(long, value_parser = order_by)]
    pub order_by: Option<OrderBy>,
    /// Print the JSON answer.
    #[arg(long)]
    pub json: bool,
}

pub fn run(env: &HashMap<String, String>, a: SearchArgs) -> anyhow::Result<ExitCode> {
    let ctx = CliContext::load(env, None);
    let project = a.project.unwrap_or_else(|| ctx.identity().chain.join(","));
    let p = SearchParams {
        query: Some(a.query.join(" ")),
        project: Some(Words(project)),
        kind: a.kind.map(Words),
        limit: a.limit.map(|l| Bounded(i64::from(l))),
        offset: a.offset.map(|o| Bounded(i64::from(o))),
        order_by: a.order_by,
        ..SearchParams::default()
    };
    let answer = Answer {
        format: a.json.then(|| "json".to_string()),
        mode: None,
    };
    let mut q = to_pairs(&p);
    q.extend(to_pairs(&answer));
    let ans = ctx.link().call("GET", &with_pairs(paths::SEARCH, &q), None).context("searching")?;
    if ans.status != 200 {
        say_err!("memd: {}", ans.detail());
        return Ok(ExitCode::from(1));
    }
    if a.json {
        say_json_text!(arrays_as_arrays(&ans.body).trim_end());
    } else {
        say!("{}", for_a_person(&ans.text()).trim_end());
    }
    Ok(ExitCode::SUCCESS)
}

/// The JSON answer with the list columns of its rows as real arrays (the route keeps claude-mem's
/// strings; a script reading `memd search --json` gets arrays).
fn arrays_as_arrays(body: &str) -> String {
    let Ok(mut v) = serde_json::from_str::<serde_json::Value>(body) else {
        return body.to_string();
    };
    for key in ["observations", "sessions", "prompts"] {
        if let Some(rows) = v.get_mut(key).and_then(serde_json::Value::as_array_mut) {
            for row in rows.iter_mut() {
                *row = crate::protocol::api::with_array_columns(row);
            }
        }
    }
    serde_json::to_string_pretty(&v).unwrap_or_else(|_| body.to_string())
}

/// The index with its "Next:" line as commands a shell runs (the MCP tool's names a model calls
/// mean nothing at a prompt).
fn for_a_person(text: &str) -> String {
    text.lines()
        .map(|l| match l.strip_prefix("Next:") {
            Some(rest) => {
                let id = rest.split('"').nth(1).unwrap_or("#1").trim_start_matches('#').to_string();
                format!("Next: `memd timeline {id}` for what surrounds a hit; `memd show {id}` for the whole record.")
            }
            None => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod person_tests {
    #[test]
    fn the_next_line_names_shell_commands() {
        let t = super::for_a_person(
            "| #4 | x |\nNext: timeline(anchor=\"#4\") for what surrounds a hit; get_observations([\"#4\"]) for full records.",
        );
        assert_eq!(
            t.lines().nth(1),
            Some("Next: `memd timeline 4` for what surrounds a hit; `memd show 4` for the whole record.")
        );
    }
}
