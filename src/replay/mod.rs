//! `memd replay`: recorded Claude Code transcripts → the hook event stream of docs/spec/hooks.md §6,
//! delivered to a worker over HTTP or through `memd hook` processes, with a load report and a
//! loss check.
//!
//! | file | concern |
//! |---|---|
//! | `record` | reading one transcript record: kind, text, command envelope, timestamp |
//! | `transcript` | reading `.jsonl` files and finding a session's subagent files |
//! | `codex_rollout` | a Codex CLI rollout → the same hook event stream (platform `codex`) |
//! | `prompts` | which records are typed prompts; SessionStart source, SessionEnd reason |
//! | `tools` | tool_use/tool_result pairing → Pre/Post(+Failure) events, payload fields |
//! | `subagents` | subagent files → agent-tagged events, placement in the parent stream |
//! | `convert` | a session's records → its ordered event stream |
//! | `event` | the event types |
//! | `multiply` | fresh session / tool_use ids for repeated copies |
//! | `bodies` | hook payload → the HTTP body its handler sends (memd / claude-mem) |
//! | `deliver` | one event over HTTP or through a `memd hook` process |
//! | `runner` | threads, pacing, bounds, progress bar |
//! | `stats` | counts and latencies per event kind, acknowledged ids per session |
//! | `proc_stats` | worker RSS and CPU from /proc |
//! | `loss` | drain wait and the acknowledged-vs-stored comparison |
//! | `report` | the report (table or JSON) |

pub mod bodies;
pub mod codex_rollout;
pub mod convert;
#[cfg(test)]
mod convert_tests;
pub mod deliver;
pub mod event;
pub mod loss;
pub mod multiply;
pub mod observer_cost;
pub mod proc_stats;
pub mod prompts;
pub mod record;
pub mod report;
pub mod runner;
pub mod stats;
pub mod subagents;
pub mod tools;
pub mod transcript;

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("read {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
}
