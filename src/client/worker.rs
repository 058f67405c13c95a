//! Finding and calling the local worker: address from the PID file (or the configured port), token
//! from `<data>/token`.

use std::net::SocketAddr;
use std::time::Duration;

use super::http::{self, HttpError, Request, Response};
use crate::data_dir::{DataDir, read_pid_file};

#[derive(Debug, Clone)]
pub struct Worker {
    pub addr: SocketAddr,
    pub token: Option<String>,
}

impl Worker {
    /// The running worker's port from `memd.pid` when present, else `port`.
    pub fn locate(dir: &DataDir, port: u16) -> Self {
        let port = read_pid_file(&dir.pid_file()).map(|p| p.port).filter(|p| *p != 0).unwrap_or(port);
        let token = std::fs::read_to_string(dir.token()).ok().map(|t| t.trim().to_string());
        Self {
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
            token,
        }
    }

    pub fn get(&self, path: &str, timeout: Duration) -> Result<Response, HttpError> {
        http::send(
            self.addr,
            &Request {
                method: "GET",
                path,
                token: self.token.as_deref(),
                ..Default::default()
            },
            timeout,
        )
    }

    pub fn post(&self, path: &str, body: &[u8], timeout: Duration) -> Result<Response, HttpError> {
        http::send(
            self.addr,
            &Request {
                method: "POST",
                path,
                token: self.token.as_deref(),
                body: Some(body),
                ..Default::default()
            },
            timeout,
        )
    }
}

/// A worker's instance id: a short hash of its token, in `GET /api/health`, so a client can tell
/// its own worker from another data dir's without sending the token (issue 37).
pub fn instance_id(token: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(token.trim().as_bytes())
        .iter()
        .take(6)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Who answers on a port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PortHolder {
    Nobody,
    /// This data dir's worker.
    Ours,
    /// A memd of another data dir (or another user).
    OtherMemd {
        pid: u64,
        version: String,
    },
    OtherProgram,
}

impl PortHolder {
    /// One line for a person, None when nothing is wrong with the port.
    pub fn explain(&self, port: u16) -> Option<String> {
        match self {
            PortHolder::Nobody | PortHolder::Ours => None,
            PortHolder::OtherMemd { pid, version } => Some(format!(
                "port {port} is held by another memd (pid {pid}, version {version}) of another data dir or user: set MEMD_PORT to a free port, or unset it (a free port is then picked)"
            )),
            PortHolder::OtherProgram => Some(format!(
                "port {port} is held by another program (not memd): set MEMD_PORT to a free port, or unset it"
            )),
        }
    }
}

/// Who answers `GET /api/health` on 127.0.0.1:`port`, compared with this data dir's `token`.
pub fn who_holds(port: u16, token: Option<&str>) -> PortHolder {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    if std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(300)).is_err() {
        return PortHolder::Nobody;
    }
    let req = Request {
        method: "GET",
        path: crate::protocol::paths::HEALTH,
        ..Default::default()
    };
    let health = http::send(addr, &req, Duration::from_secs(1))
        .ok()
        .filter(|r| r.status == 200)
        .and_then(|r| serde_json::from_slice::<serde_json::Value>(&r.body).ok())
        .filter(|v| v["name"] == "memd");
    match health {
        None => PortHolder::OtherProgram,
        Some(h) if token.is_some_and(|t| h["instance"].as_str() == Some(&instance_id(t))) => PortHolder::Ours,
        Some(h) => PortHolder::OtherMemd {
            pid: h["pid"].as_u64().unwrap_or(0),
            version: h["version"].as_str().unwrap_or("?").to_string(),
        },
    }
}
