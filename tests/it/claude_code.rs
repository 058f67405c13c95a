//! memd under the real Claude Code CLI (issue 19): `memd install` into a fresh home, then
//! `claude -p` sessions against a fake Anthropic API that scripts the model's tool calls. Checks
//! capture, the SessionStart index and the Read file context in the requests Claude Code sends,
//! the MCP round trip without `--allowedTools`, `--fork-session`, a killed worker, the modes of
//! Claude Code's files, `memd doctor`, and uninstall.
//!
//! Needs the native binary (`MEMD_CLAUDE_BIN`; `.ci/run` installs `@anthropic-ai/claude-code` from
//! npm and points it at `@anthropic-ai/claude-code-linux-x64/claude`). No network is used.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::support::claude_host::{Host, SETTINGS, claude_bin, plans};
use crate::support::{DEADLINE, wait_until};

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn claude_code_sessions_with_memd_installed() {
    let Some(bin) = claude_bin() else {
        return;
    };
    let h = Host::new(bin, plans);
    let claude_json = h.home.join(".claude.json");

    let install = h.memd(&["install"]);
    assert!(install.status.success(), "{}", String::from_utf8_lossy(&install.stderr));
    assert_eq!(mode(&claude_json), 0o600, "~/.claude.json keeps its mode");
    let doctor = h.memd(&["doctor"]);
    assert!(
        doctor.status.success(),
        "doctor after install:\n{}",
        String::from_utf8_lossy(&doctor.stdout)
    );

    // Capture: the Write and the Bash call are stored; the worker was started by the hooks.
    let first = h.claude("alpha-capture: write the notes", &["--allowedTools", "Write,Bash"]);
    let tools = "SELECT count(*) FROM tool_uses WHERE content_session_id = ?1";
    assert!(wait_until(DEADLINE, || h.count(tools, &first) >= 2), "Write and Bash captured");
    assert_eq!(mode(&h.data), 0o700);
    assert!(
        wait_until(DEADLINE, || h.count(
            "SELECT count(*) FROM observations WHERE files_modified LIKE '%' || ?1 || '%'",
            "notes.md"
        ) > 0),
        "the extractive observer recorded the edit"
    );
    let doctor = h.memd(&["doctor"]);
    assert!(
        doctor.status.success(),
        "doctor after a session:\n{}",
        String::from_utf8_lossy(&doctor.stdout)
    );

    // The next session: SessionStart injected the index; the Read got the file's context.
    h.claude("beta-recall: read the notes", &["--allowedTools", "Read"]);
    let reqs = h.fake.requests_of("beta-recall");
    assert!(reqs.len() >= 2, "a request before and after the Read");
    assert!(
        reqs[0].conversation_text().contains("recent context"),
        "SessionStart context in the first request"
    );
    let after_read = reqs.iter().find(|r| r.tool_results() >= 1).expect("the request after the Read");
    let text = after_read.conversation_text();
    assert!(
        text.contains("earlier observation") && text.contains("notes.md; the Read result below is still complete"),
        "file context next to the Read result"
    );

    // MCP: deferred-tool lookup, then memd's search — no --allowedTools; ToolSearch is not stored.
    let third = h.claude("gamma-mcp: ask memory", &[]);
    let reqs = h.fake.requests_of("gamma-mcp");
    let last = reqs.iter().max_by_key(|r| r.tool_results()).expect("requests");
    assert!(last.tool_results() >= 2, "both tool calls answered");
    let text = last.conversation_text();
    assert!(
        text.to_lowercase().contains("zebra") && !text.contains("requested permissions"),
        "memd's search answered: {text}"
    );
    let junk = "SELECT count(*) FROM tool_uses WHERE content_session_id = ?1 AND (tool_name = 'ToolSearch' OR tool_name LIKE 'mcp__%')";
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(h.count(junk, &third), 0, "no ToolSearch or memd MCP call stored");

    // --fork-session: SessionStart source `fork` gets context too.
    h.claude("delta-fork: continue", &["--resume", &first, "--fork-session"]);
    let reqs = h.fake.requests_of("delta-fork");
    assert!(
        !reqs.is_empty() && reqs[0].conversation_text().contains("recent context"),
        "fork gets context"
    );

    // A killed worker: the next session's events still arrive (auto-start or spool).
    let pid = h.worker_pid().expect("worker pid");
    // SAFETY: SIGKILL to the worker the hooks started.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    h.claude("epsilon-killed: after the kill", &["--allowedTools", "Bash"]);
    let stored = "SELECT count(*) FROM tool_uses WHERE tool_input LIKE '%' || ?1 || '%'";
    assert!(
        wait_until(Duration::from_secs(60), || h.count(stored, "epsilon-after-kill") == 1),
        "the event of the session after the kill is stored once"
    );

    // A hung worker (SIGSTOP): the session still ends, its events are spooled and arrive later.
    let pid = h.worker_pid().expect("the restarted worker");
    // SAFETY: stopping and continuing the worker the hooks started.
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    h.claude("zeta-stopped: while it hangs", &["--allowedTools", "Bash"]);
    assert!(h.data.join("hook-breaker").exists(), "a hook timed out and opened the hook breaker");
    // SAFETY: continuing the worker stopped above; kill takes no pointer.
    unsafe { libc::kill(pid, libc::SIGCONT) };
    assert!(
        wait_until(Duration::from_secs(60), || h.count(stored, "zeta-while-stopped") == 1),
        "the spooled event of the hung-worker session is stored once"
    );

    // Uninstall gives the user's files back.
    let out = h.memd(&["install", "--uninstall"]);
    assert!(out.status.success());
    assert_eq!(std::fs::read_to_string(h.home.join(".claude/settings.json")).unwrap(), SETTINGS);
    let mcp: Value = serde_json::from_str(&std::fs::read_to_string(&claude_json).unwrap()).unwrap();
    assert!(mcp["mcpServers"].get("memd").is_none());
    assert_eq!(mode(&claude_json), 0o600);
}
