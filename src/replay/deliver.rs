//! Delivering one event: as an HTTP request to the worker, or as a `memd hook claude-code
//! <handler>` process with the payload on stdin. Blocking; called from the runner's threads.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::bodies::Call;
use crate::client::http::{self, HttpError, Request};

/// How the worker (or the hook process) answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// 2xx: stored and queued (or, for a hook run, exit 0: acknowledged or spooled).
    Acked,
    /// 2xx `skipped` with the worker's reason (e.g. `tool_excluded`).
    Skipped(String),
    /// 2xx `duplicate`.
    Duplicate,
    /// Not acknowledged: `http_503`, `timeout`, `connect`, `exit_2`, …
    Error(String),
}

/// Where and how HTTP events go.
#[derive(Debug, Clone)]
pub struct HttpTarget {
    pub addr: SocketAddr,
    pub token: Option<String>,
    pub timeout: Duration,
}

pub fn send_http(t: &HttpTarget, call: &Call) -> Answer {
    let body = call.body.to_string();
    let req = Request {
        method: "POST",
        path: call.route.path(),
        token: t.token.as_deref(),
        body: Some(body.as_bytes()),
        ..Default::default()
    };
    match http::send(t.addr, &req, t.timeout) {
        Ok(r) if (200..300).contains(&r.status) => classify(&r.json().unwrap_or(Value::Null)),
        Ok(r) => Answer::Error(format!("http_{}", r.status)),
        Err(HttpError::Connect { .. }) => Answer::Error("connect".into()),
        Err(HttpError::Timeout) => Answer::Error("timeout".into()),
        Err(HttpError::Io(_)) => Answer::Error("io".into()),
        Err(HttpError::Malformed(_)) => Answer::Error("malformed".into()),
    }
}

/// Reads a 2xx ingest answer (docs/spec/api.md §3).
pub fn classify(v: &Value) -> Answer {
    let status = v["status"].as_str().unwrap_or("");
    if status == "duplicate" || v["reason"] == "duplicate" {
        return Answer::Duplicate;
    }
    if status == "skipped" || v["skipped"] == true {
        return Answer::Skipped(v["reason"].as_str().unwrap_or("unknown").to_string());
    }
    Answer::Acked
}

/// How hook processes are started.
#[derive(Debug, Clone)]
pub struct HookRunner {
    pub exe: PathBuf,
    /// Added to the inherited environment (MEMD_DATA_DIR, MEMD_PORT, …).
    pub env: Vec<(String, String)>,
    /// A hook still running after this is killed and counted as `hook_timeout`.
    pub timeout: Duration,
}

/// Runs `memd hook claude-code <handler>` with `payload` on stdin.
pub fn run_hook(h: &HookRunner, handler: &str, payload: &Value) -> Answer {
    let child = Command::new(&h.exe)
        .args(["hook", "claude-code", handler])
        .envs(h.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn();
    let Ok(mut child) = child else {
        return Answer::Error("spawn".into());
    };
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(payload.to_string().as_bytes());
    }
    let deadline = Instant::now() + h.timeout;
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Answer::Acked,
            Ok(Some(status)) => return Answer::Error(status.code().map_or_else(|| "signal".to_string(), |c| format!("exit_{c}"))),
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Answer::Error("hook_timeout".into());
            }
            Ok(None) => std::thread::sleep(Duration::from_micros(200)),
            Err(_) => return Answer::Error("wait".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn classifies_ingest_answers() {
        assert_eq!(classify(&json!({"status":"queued","pendingId":1})), Answer::Acked);
        assert_eq!(classify(&json!({"status":"duplicate"})), Answer::Duplicate);
        assert_eq!(
            classify(&json!({"status":"skipped","reason":"tool_excluded"})),
            Answer::Skipped("tool_excluded".into())
        );
        assert_eq!(classify(&json!({"skipped":true,"reason":"duplicate"})), Answer::Duplicate);
        assert_eq!(classify(&json!({"skipped":false,"status":"initialized"})), Answer::Acked);
        assert_eq!(classify(&json!({"status":"completing","pending":3})), Answer::Acked);
    }
}
