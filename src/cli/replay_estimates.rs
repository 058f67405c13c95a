//! `memd replay`'s estimates, which send nothing: what the read gate would have done
//! (`--read-gate`), what an LLM observer would cost (`--observer-cost`) and what warnings before
//! repeated failures would have done (`--action-memory`) on recorded sessions.

use std::path::Path;
use std::process::ExitCode;

use super::replay::{ReplayArgs, session_files};
use crate::config::Settings;
use crate::replay::convert::convert_file;
use crate::replay::event::SessionEvents;
use crate::replay::observer_cost::{BatchRules, estimate};

/// The sessions converted, oldest first (a file that cannot be read is named and skipped).
fn sessions(args: &ReplayArgs) -> anyhow::Result<Vec<SessionEvents>> {
    let mut sessions = Vec::new();
    for f in session_files(&args.transcripts)? {
        match convert_file(&f) {
            Ok(s) => sessions.push(s),
            Err(e) => say_err!("memd: skipped {}: {e}", f.display()),
        }
    }
    sessions.sort_by_key(|s| s.events.first().map_or(0, |e| e.at_ms));
    Ok(sessions)
}

/// `--read-gate`: the gate's estimate over the sessions.
pub fn read_gate(args: &ReplayArgs) -> anyhow::Result<ExitCode> {
    let e = crate::readgate::estimate::estimate(&sessions(args)?, args.read_gate_min_bytes);
    if args.json {
        say_json!(&e);
    } else {
        say!(
            "{} sessions, {} Reads, {} of the whole file; {} of code files of {}+ bytes ({} bytes); the gate would have answered {} of them ({} bytes read) with outlines of {} bytes: at most {} bytes saved.",
            e.sessions,
            e.reads,
            e.whole_reads,
            e.large_code_whole_reads,
            e.min_bytes,
            e.large_code_bytes,
            e.affected,
            e.affected_bytes,
            e.reason_bytes,
            e.saved_bytes_upper_bound
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `--action-memory`: warnings before repeated failing checks, per project and in total.
pub fn action_memory(args: &ReplayArgs) -> anyhow::Result<ExitCode> {
    let sessions = sessions(args)?;
    use crate::action::estimate::{Scope, estimate};
    let e = estimate(&sessions, Scope::AnySession);
    // For comparison: the same sessions if the hook warned only of an earlier session's failure.
    let earlier = estimate(&sessions, Scope::EarlierSessions);
    if args.json {
        say_json!(&serde_json::json!({"hook_rule": e, "earlier_sessions_only": earlier}));
        return Ok(ExitCode::SUCCESS);
    }
    let line = |name: &str, c: &crate::action::estimate::ActionCounts| {
        format!(
            "{name}: {} checks, {} failed; {} repeated failures, {} warned; {} warnings, {} named the fix, {} false alarms",
            c.checks, c.failures, c.opportunities, c.warned, c.warnings, c.named_fix, c.false_alarms
        )
    };
    for (project, c) in &e.projects {
        say!("{}", line(project, c));
    }
    say!("{}", line(&format!("all {} sessions", e.sessions), &e.total));
    say!("{}", line("if it warned of an earlier session's failure only", &earlier.total));
    Ok(ExitCode::SUCCESS)
}

/// `--observer-cost`: requests per session and input tokens per request under these settings.
pub fn observer_cost(args: &ReplayArgs, settings: &Settings, data_dir: &Path) -> anyhow::Result<ExitCode> {
    let dirs = crate::modes::mode_search_dirs(settings.modes_dir.as_deref(), data_dir);
    let (mode, _) = crate::modes::load_mode(&settings.mode, &dirs);
    let rules = BatchRules {
        debounce_ms: settings.batch_debounce_ms as i64,
        max_wait_ms: settings.batch_max_wait_ms as i64,
        max_events: settings.batch_max_events,
        max_chars: settings.batch_max_chars,
        field_max_chars: settings.observer.field_max_chars,
    };
    let e = estimate(&sessions(args)?, &mode, &rules, &settings.skip_tools);
    if args.json {
        say_json!(&e);
        return Ok(ExitCode::SUCCESS);
    }
    say!(
        "{} sessions ({} with tool calls, {} calls captured): {} observation and {} summary requests.",
        e.sessions,
        e.sessions_with_calls,
        e.captured_calls,
        e.observation_requests,
        e.summary_requests
    );
    say!(
        "Per session: {} requests (median; at most {}), about {} input tokens (median).",
        e.requests_per_session_median,
        e.requests_per_session_max,
        e.input_tokens_per_session_median
    );
    say!(
        "Per request: about {} input tokens (median; at most {}); {} in all. Tokens are estimated as characters / 4 (as memd counts read cost); replies are not included; requests are counted as if each took no time (an upper bound).",
        e.input_tokens_per_request_median,
        e.input_tokens_per_request_max,
        e.input_tokens_total
    );
    Ok(ExitCode::SUCCESS)
}
