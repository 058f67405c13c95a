//! `memd hook <host> <event>`: the short-lived process Claude Code (or Codex, or Gemini CLI:
//! docs/spec/hosts.md) starts for each hook event (docs/spec/hooks.md). Hot path: read stdin, check the gates, one blocking HTTP exchange on
//! loopback, print one JSON object. No database, no async runtime, no actor system, no subprocess
//! (except the rare detached worker start).
//!
//! | file | concern |
//! |---|---|
//! | `env` | data dir, settings (env → settings.json → default), address, token, budgets |
//! | `gates` | `MEMD_INTERNAL`, cwd inside `<data>`, excluded projects |
//! | `hosts` | Claude Code, Codex, Gemini: event names → handlers, stdin shapes, reply shapes |
//! | `run` | per-run context: event, cwd, project identity |
//! | `event` | ingest events: `eventId`, `occurredAtEpoch`, 4 MiB shrinking |
//! | `transport` | HTTP exchanges and the ingest outcome table |
//! | `autostart` | auto-start (via `client::spawn`) and the readiness wait |
//! | `breaker` | after a timeout, the next hooks skip a hung worker for a few seconds |
//! | `spool_write` | the spool and `spool/rejected/` (hook side) |
//! | `signals` | SIGTERM/SIGINT/SIGHUP before the acknowledgement: spool, exit 0 |
//! | `output` | stdout shapes and the injected-context cap |
//! | `log` | `<data>/logs/hook.log` |
//! | `transcript` | last assistant message from a transcript (Stop fallback) |
//! | `context`, `session_init`, `file_context`, `observation`, `summarize`, `complete` | the six handlers |

pub mod action_context;
pub mod autostart;
pub mod breaker;
pub mod complete;
pub mod context;
pub mod env;
pub mod event;
pub mod file_context;
pub mod gates;
pub mod hosts;
pub mod log;
pub mod observation;
pub mod output;
pub mod read_gate;
pub mod run;
pub mod session_init;
pub mod signals;
pub mod spool_write;
pub mod summarize;
pub mod transcript;
pub mod transport;

use std::collections::HashMap;
use std::io::{Read, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Instant;

use env::HookEnv;
use log::hook_log;
use output::{EMPTY, empty_session_start};
use run::Run;

use crate::clock::now_ms;
use crate::protocol::hook_wire::HookInput;

/// stdin beyond this is not read: the run becomes a no-op.
pub const STDIN_MAX_BYTES: u64 = 64 * 1024 * 1024;

const USAGE: &str = "usage: memd hook <claude-code|codex|gemini> <event>; events: context|session-init|file-context|action-context|observation|summarize|complete, or the host's own names (codex: SessionStart, UserPromptSubmit, PostToolUse, Stop; gemini: SessionStart, BeforeAgent, AfterTool, AfterAgent, SessionEnd)";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handler {
    Context,
    SessionInit,
    FileContext,
    ActionContext,
    Observation,
    Summarize,
    Complete,
}

impl Handler {
    pub const ALL: [Handler; 7] = [
        Handler::Context,
        Handler::SessionInit,
        Handler::FileContext,
        Handler::ActionContext,
        Handler::Observation,
        Handler::Summarize,
        Handler::Complete,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Handler::Context => "context",
            Handler::SessionInit => "session-init",
            Handler::FileContext => "file-context",
            Handler::ActionContext => "action-context",
            Handler::Observation => "observation",
            Handler::Summarize => "summarize",
            Handler::Complete => "complete",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|h| h.name() == name)
    }

    /// The output of a run that does nothing.
    pub fn no_op(self) -> String {
        match self {
            Handler::Context => empty_session_start(),
            _ => EMPTY.to_string(),
        }
    }
}

/// The process's result: what to print, and the exit code (0 or 2).
pub struct HookExit {
    pub stdout: Option<String>,
    pub stderr: Option<String>,
    pub code: u8,
}

fn print(out: &HookExit) {
    if let Some(s) = &out.stdout {
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(format!("{s}\n").as_bytes());
        let _ = stdout.flush();
    }
    if let Some(e) = &out.stderr {
        let _ = writeln!(std::io::stderr(), "{e}");
    }
}

/// Runs one hook invocation and prints its result; returns the exit code.
pub fn main(platform: Option<&str>, handler: Option<&str>, env: &HashMap<String, String>) -> u8 {
    let started = Instant::now();
    let out = execute(platform, handler, env, started, &mut std::io::stdin().lock());
    print(&out);
    out.code
}

/// Everything but the printing (unit-testable).
pub fn execute(
    platform: Option<&str>,
    handler: Option<&str>,
    env: &HashMap<String, String>,
    started: Instant,
    stdin: &mut dyn Read,
) -> HookExit {
    let host = platform.and_then(hosts::Host::parse);
    let handler = match (host, handler) {
        (Some(host), Some(event)) => host.handler(event).map(|h| (host, h)),
        _ => None,
    };
    let Some((host, handler)) = handler else {
        return HookExit {
            stdout: Some(EMPTY.into()),
            stderr: Some(USAGE.into()),
            code: 0,
        };
    };
    if matches!(handler, Handler::Context | Handler::FileContext | Handler::ActionContext) {
        // Nothing to save on a signal: read-only handlers die of it as usual.
        signals::unblock_termination();
    }
    let reply = |out: String| host.reply(handler, out);
    let hook = HookEnv::new(env, started);
    let debug = env.get("MEMD_HOOK_DEBUG").is_some_and(|v| v == "1");
    let mut bytes = Vec::new();
    if stdin.take(STDIN_MAX_BYTES + 1).read_to_end(&mut bytes).is_err() {
        bytes.clear();
    }
    if bytes.len() as u64 > STDIN_MAX_BYTES {
        hook_log(&hook.dir, started, handler.name(), None, "stdin exceeds 64 MiB; ignored");
        return done(reply(handler.no_op()));
    }
    let input = match HookInput::parse_with(&bytes, handler == Handler::Observation, |v| host.normalize(v)) {
        Ok(i) => i,
        // Claude Code's contract says exit 2; for Codex and Gemini CLI exit 2 blocks the action,
        // and memd never blocks the agent: there it is a no-op with the reason on stderr.
        Err(e) if host == hosts::Host::ClaudeCode => {
            return HookExit {
                stdout: None,
                stderr: Some(format!("memd hook: malformed input: {e}")),
                code: 2,
            };
        }
        Err(e) => {
            return HookExit {
                stdout: Some(reply(handler.no_op())),
                stderr: Some(format!("memd hook: malformed input: {e}")),
                code: 0,
            };
        }
    };
    let occurred_at = now_ms();
    let cwd = input.cwd.clone().unwrap_or_else(|| {
        std::env::current_dir()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|_| "/".into())
    });
    if let Some(gate) = gates::closed_gate(&hook, &cwd) {
        return HookExit {
            stdout: Some(reply(handler.no_op())),
            stderr: debug.then(|| format!("memd hook: gate {gate:?} closed; no-op")),
            code: 0,
        };
    }
    let run = Run {
        hook,
        platform: host.platform(),
        input,
        cwd,
        occurred_at,
    };
    let result = catch_unwind(AssertUnwindSafe(|| dispatch(handler, &run)));
    match result {
        Ok(s) => done(reply(s)),
        Err(panic) => {
            let msg = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic".into());
            hook_log(&run.hook.dir, started, handler.name(), None, &format!("internal error: {msg}"));
            done(reply(handler.no_op()))
        }
    }
}

fn done(stdout: String) -> HookExit {
    HookExit {
        stdout: Some(stdout),
        stderr: None,
        code: 0,
    }
}

fn dispatch(handler: Handler, run: &Run<'_>) -> String {
    match handler {
        Handler::Context => context::run(run),
        Handler::SessionInit => session_init::run(run),
        Handler::FileContext => file_context::run(run),
        Handler::ActionContext => action_context::run(run),
        Handler::Observation => observation::run(run),
        Handler::Summarize => summarize::run(run),
        Handler::Complete => complete::run(run),
    }
}
