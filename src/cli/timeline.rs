//! `memd timeline ID [--before N] [--after N]`: what happened around a record, for a person — the
//! timeline the MCP tool returns (`GET /api/timeline`), with its closing pointer rewritten as the
//! shell command that opens the records (`memd show …`).

use std::collections::HashMap;
use std::process::ExitCode;

use anyhow::Context;

use super::client_context::CliContext;
use crate::mcp::link::with_pairs;
use crate::protocol::params::{Bounded, Moment, to_pairs};
use crate::protocol::paths;
use crate::protocol::search::{DEPTH_MAX, TimelineParams};

#[derive(Debug, clap::Args)]
pub struct TimelineArgs {
    /// The record at the centre: 12 or #12, S3 (a summary), P7 (a prompt).
    pub id: String,
    /// Rows before it (0–20).
    #[arg(long, default_value_t = 5)]
    pub before: u8,
    /// Rows after it (0–20).
    #[arg(long, default_value_t = 5)]
    pub after: u8,
}

/// The worker's timeline text for a shell: `Full records: get_observations([1, 2])` becomes
/// `Full records: memd show 1 2`.
pub fn for_a_person(text: &str) -> String {
    text.lines()
        .map(|l| {
            match l
                .strip_prefix("Full records: get_observations([")
                .and_then(|r| r.strip_suffix("])"))
            {
                Some(ids) => format!("Full records: memd show {}", ids.replace(", ", " ").replace(['"', '#'], "")),
                None => l.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn run(env: &HashMap<String, String>, a: TimelineArgs) -> anyhow::Result<ExitCode> {
    let ctx = CliContext::load(env, None);
    let p = TimelineParams {
        anchor: Some(Moment(a.id.trim().into())),
        depth_before: Some(Bounded(i64::from(a.before).min(DEPTH_MAX))),
        depth_after: Some(Bounded(i64::from(a.after).min(DEPTH_MAX))),
        ..TimelineParams::default()
    };
    let ans = ctx
        .link()
        .call("GET", &with_pairs(paths::TIMELINE, &to_pairs(&p)), None)
        .context("asking the worker")?;
    if ans.status != 200 {
        say_err!("memd: {}", ans.detail());
        return Ok(ExitCode::from(1));
    }
    say!("{}", for_a_person(ans.text().trim_end()));
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pointer_becomes_a_shell_command() {
        let t = "Timeline around #2\n| 2 | x |\nFull records: get_observations([#1, #2, \"S3\"])";
        assert_eq!(for_a_person(t).lines().last(), Some("Full records: memd show 1 2 S3"));
    }
}
