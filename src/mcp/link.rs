//! The MCP server's (and the CLI's) connection to the worker: locate, start when needed, send.
//! Blocking calls; the async server runs them on the blocking pool.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use super::autostart::{AutostartError, ensure_worker};
use crate::client::http::{self, Request, Response, query_value};
use crate::client::worker::Worker;
use crate::data_dir::DataDir;

const CALL_TIMEOUT: Duration = Duration::from_secs(30);
const READY_BUDGET: Duration = Duration::from_secs(5);

#[derive(Debug, Clone)]
pub struct WorkerLink {
    pub dir: DataDir,
    pub port: u16,
    pub autostart: bool,
    pub exe: Option<PathBuf>,
}

/// A worker answer: status and body.
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: u16,
    pub body: String,
}

impl Answer {
    pub fn json(&self) -> Option<Value> {
        serde_json::from_str(&self.body).ok()
    }
    /// The `detail` of an error answer, else the body.
    pub fn detail(&self) -> String {
        self.json()
            .and_then(|v| v.get("detail").and_then(Value::as_str).map(String::from))
            .unwrap_or_else(|| self.body.trim().to_string())
    }
    /// The text of an MCP text answer (`{"content":[{"type":"text","text":…}]}`), else the body.
    pub fn text(&self) -> String {
        self.json()
            .and_then(|v| v.pointer("/content/0/text").and_then(Value::as_str).map(String::from))
            .unwrap_or_else(|| self.body.clone())
    }
}

impl WorkerLink {
    /// Sends one request; when nothing answers, starts the worker (if allowed) and retries once.
    pub fn call(&self, method: &str, path: &str, body: Option<&Value>) -> Result<Answer, AutostartError> {
        self.call_with_timeout(method, path, body, CALL_TIMEOUT)
    }

    /// [`Self::call`] with its own answer deadline (imports answer when they are done).
    pub fn call_with_timeout(&self, method: &str, path: &str, body: Option<&Value>, timeout: Duration) -> Result<Answer, AutostartError> {
        let bytes = body.map(|b| b.to_string().into_bytes());
        let send = |w: &Worker| -> Result<Response, http::HttpError> {
            let mut headers = Vec::new();
            if bytes.is_some() {
                headers.push(("Content-Type", "application/json".to_string()));
            }
            http::send(
                w.addr,
                &Request {
                    method,
                    path,
                    token: w.token.as_deref(),
                    headers,
                    body: bytes.as_deref(),
                    ..Default::default()
                },
                timeout,
            )
        };
        let w = Worker::locate(&self.dir, self.port);
        let first = if w.token.is_some() { send(&w).ok() } else { None };
        let resp = match first {
            Some(r) if r.status != 503 => r,
            _ => {
                let w = ensure_worker(&self.dir, self.port, self.autostart, self.exe.clone(), READY_BUDGET)?;
                send(&w).map_err(|_| AutostartError::NotRunning)?
            }
        };
        Ok(Answer {
            status: resp.status,
            body: resp.text(),
        })
    }
}

/// `path?k=v&…` from (key, value) pairs; empty values are left out.
pub fn with_query(path: &str, pairs: &[(&str, String)]) -> String {
    let q: Vec<String> = pairs
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| format!("{k}={}", query_value(v)))
        .collect();
    if q.is_empty() {
        path.to_string()
    } else {
        format!("{path}?{}", q.join("&"))
    }
}

/// `path?k=v&…` for pairs a request type gave ([`crate::protocol::params::to_pairs`]).
pub fn with_pairs(path: &str, pairs: &[(String, String)]) -> String {
    let pairs: Vec<(&str, String)> = pairs.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
    with_query(path, &pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_strings() {
        assert_eq!(query_value("a b/ü"), "a%20b%2F%C3%BC");
        assert_eq!(
            with_query("/x", &[("q", "rate limit".into()), ("e", String::new())]),
            "/x?q=rate%20limit"
        );
    }
}
