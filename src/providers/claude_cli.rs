//! The `claude` CLI as a hardened observer subprocess.
//!
//! One process per call: `claude -p --output-format json` with no tools, no MCP servers and no
//! settings sources, Part A as `--system-prompt`, the turns on stdin. It runs in its own process
//! group with cwd `<data>/observer/` and `MEMD_INTERNAL=1` (so memd's own hooks, if installed,
//! ignore it), is recorded in `<data>/children.json` while it runs, and its whole group is killed
//! on timeout, on drop and on shutdown ([`Children::kill_all`]).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::children::{ChildRecord, Children, kill_group, process_start_time};
use super::prose::{ProseKind, classify_prose};
use super::{CallError, LlmReply, LlmRequest, Role};
use crate::clock::now_ms;

#[derive(Debug, Clone)]
pub struct ClaudeCli {
    pub path: PathBuf,
    pub model: String,
    pub timeout: Duration,
    pub workdir: PathBuf,
    pub children: Arc<Children>,
}

impl ClaudeCli {
    pub fn new(path: PathBuf, model: String, timeout: Duration, data_dir: &Path) -> Self {
        Self {
            path,
            model,
            timeout,
            workdir: data_dir.join("observer"),
            children: Arc::new(Children::new(data_dir)),
        }
    }

    pub fn args(&self, system: &str) -> Vec<String> {
        let args = [
            "-p",
            "--output-format",
            "json",
            "--model",
            &self.model,
            "--tools",
            "",
            "--strict-mcp-config",
            "--mcp-config",
            r#"{"mcpServers":{}}"#,
            "--setting-sources",
            "",
            "--system-prompt",
            system,
        ];
        args.iter().map(|a| a.to_string()).collect()
    }

    pub async fn call(&self, req: &LlmRequest) -> Result<LlmReply, CallError> {
        self.run(self.args(&req.system), flatten_turns(req)).await
    }

    /// A turn of a kept conversation (the knowledge agent's): `--resume <id>` continues the
    /// session, the same hardening as an observer call (no tools, no MCP servers, no settings).
    pub async fn converse(&self, req: &LlmRequest, resume: Option<&str>) -> Result<LlmReply, CallError> {
        let mut args = self.args(&req.system);
        if let Some(id) = resume {
            args.splice(1..1, ["--resume".to_string(), id.to_string()]);
        }
        self.run(args, flatten_turns(req)).await
    }

    async fn run(&self, args: Vec<String>, stdin_text: String) -> Result<LlmReply, CallError> {
        std::fs::create_dir_all(&self.workdir).map_err(|e| CallError::Transient(format!("observer workdir: {e}")))?;
        let mut child = tokio::process::Command::new(&self.path)
            .args(args)
            .current_dir(&self.workdir)
            .env("MEMD_INTERNAL", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| CallError::Transient(format!("cannot start claude: {e}")))?;
        let pid = child.id().map_or(0, |p| p as i32);
        self.children.add(ChildRecord {
            pid,
            pgid: pid,
            start_time: process_start_time(pid).unwrap_or(0),
            owner_pid: std::process::id(),
            started_at_epoch: now_ms(),
        });
        // The group is killed however this call ends (timeout, error, or the task being dropped).
        let _guard = GroupGuard {
            pgid: pid,
            children: self.children.clone(),
        };
        let mut stdin = child.stdin.take();
        let mut stdout = child.stdout.take();
        let mut stderr = child.stderr.take();
        let run = async {
            if let Some(mut s) = stdin.take() {
                let _ = s.write_all(stdin_text.as_bytes()).await;
                drop(s);
            }
            let (mut out, mut err) = (Vec::new(), Vec::new());
            if let Some(s) = stdout.as_mut() {
                let _ = s.read_to_end(&mut out).await;
            }
            if let Some(s) = stderr.as_mut() {
                let _ = s.read_to_end(&mut err).await;
            }
            let status = child.wait().await;
            (status, out, err)
        };
        let (status, out, err) = tokio::time::timeout(self.timeout, run)
            .await
            .map_err(|_| CallError::Transient(format!("timeout after {} ms (claude killed)", self.timeout.as_millis())))?;
        let ok = status.as_ref().is_ok_and(|s| s.success());
        parse_output(&String::from_utf8_lossy(&out), &String::from_utf8_lossy(&err), ok)
    }
}

struct GroupGuard {
    pgid: i32,
    children: Arc<Children>,
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        kill_group(self.pgid);
        self.children.remove(self.pgid);
    }
}

/// The CLI takes one prompt: a re-ask is rendered as the earlier reply plus the correction.
pub fn flatten_turns(req: &LlmRequest) -> String {
    let mut out = String::new();
    for (i, t) in req.turns.iter().enumerate() {
        if i > 0 {
            out.push_str("\n\n");
        }
        match t.role {
            Role::User => out.push_str(&t.text),
            Role::Assistant => {
                out.push_str("Your previous reply was:\n");
                out.push_str(&t.text);
            }
        }
    }
    out
}

/// Reads the CLI's `--output-format json` result (`{"result", "is_error", "usage"}`).
pub fn parse_output(stdout: &str, stderr: &str, exit_ok: bool) -> Result<LlmReply, CallError> {
    let v: Option<Value> = serde_json::from_str(stdout.trim()).ok();
    let Some(v) = v else {
        let text = if stdout.trim().is_empty() { stderr } else { stdout };
        return Err(prose_error(text, exit_ok));
    };
    let text = v["result"].as_str().unwrap_or("").to_string();
    if v["is_error"].as_bool().unwrap_or(false) || !exit_ok {
        return Err(prose_error(&text, false));
    }
    let u = &v["usage"];
    let n = |k: &str| u[k].as_i64().unwrap_or(0);
    Ok(LlmReply {
        text,
        input_tokens: n("input_tokens") + n("cache_read_input_tokens") + n("cache_creation_input_tokens"),
        output_tokens: n("output_tokens"),
        cached_input_tokens: n("cache_read_input_tokens"),
        session_id: v["session_id"].as_str().map(String::from),
    })
}

fn prose_error(text: &str, exit_ok: bool) -> CallError {
    let snippet: String = text.chars().take(300).collect();
    match classify_prose(text) {
        ProseKind::Auth => CallError::Auth(snippet),
        ProseKind::Quota => CallError::Quota {
            retry_after_ms: None,
            reason: snippet,
        },
        ProseKind::Overflow => CallError::Overflow(snippet),
        ProseKind::Plain if exit_ok => CallError::Transient(format!("unreadable claude output: {snippet}")),
        ProseKind::Plain => CallError::Transient(format!("claude failed: {snippet}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_json_is_read_and_errors_classified() {
        let ok = parse_output(
            r#"{"type":"result","result":"<observation/>","usage":{"input_tokens":4,"output_tokens":1}}"#,
            "",
            true,
        )
        .unwrap();
        assert_eq!((ok.text.as_str(), ok.input_tokens), ("<observation/>", 4));
        let kept = parse_output(
            r#"{"result":"ok","session_id":"abc-1","usage":{"cache_read_input_tokens":7}}"#,
            "",
            true,
        )
        .unwrap();
        assert_eq!(
            (kept.session_id.as_deref(), kept.cached_input_tokens, kept.input_tokens),
            (Some("abc-1"), 7, 7)
        );
        let auth = parse_output(r#"{"is_error":true,"result":"Invalid API key · Please run /login"}"#, "", false);
        assert!(matches!(auth, Err(CallError::Auth(_))));
        assert!(matches!(parse_output("", "Prompt is too long", false), Err(CallError::Overflow(_))));
    }

    #[test]
    fn args_disable_tools_mcp_and_settings() {
        let c = ClaudeCli::new("claude".into(), "m".into(), Duration::from_secs(1), Path::new("/d"));
        let a = c.args("SYSTEM");
        assert!(a.windows(2).any(|w| w[0] == "--tools" && w[1].is_empty()));
        assert!(a.contains(&"--strict-mcp-config".to_string()));
        assert!(a.windows(2).any(|w| w[0] == "--setting-sources" && w[1].is_empty()));
        assert_eq!(a.last().map(String::as_str), Some("SYSTEM"));
        assert_eq!(c.workdir, Path::new("/d/observer"));
    }
}
