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
