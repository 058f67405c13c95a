//! What a hook run knows about its surroundings (docs/spec/hooks.md §2.5): the data directory, the
//! settings it reads (environment, else `<data>/settings.json`, else the default; never written),
//! the worker's address and token, and its time budget.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::config::{data_dir_from_env, default_of, default_port};
use crate::data_dir::DataDir;

pub struct HookEnv<'a> {
    pub env: &'a HashMap<String, String>,
    pub dir: DataDir,
    pub started: Instant,
    file: Option<serde_json::Map<String, serde_json::Value>>,
}

impl<'a> HookEnv<'a> {
    pub fn new(env: &'a HashMap<String, String>, started: Instant) -> Self {
        let dir = DataDir::new(data_dir_from_env(env));
        let file = std::fs::read(dir.root.join("settings.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok());
        Self { env, dir, started, file }
    }

    /// Environment, else settings.json, else the default.
    pub fn setting(&self, key: &str) -> Option<String> {
        if let Some(v) = self.env.get(key) {
            return Some(v.clone());
        }
        if let Some(v) = self.file.as_ref().and_then(|m| m.get(key)) {
            return Some(match v {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            });
        }
        Some(default_of(key).to_string()).filter(|d| !d.is_empty())
    }

    pub fn flag(&self, key: &str) -> bool {
        self.setting(key)
            .is_some_and(|v| !matches!(v.trim().to_ascii_lowercase().as_str(), "false" | "0" | "no" | "off" | ""))
    }

    /// An integer setting clamped to `min..=max`; unparsable values give `fallback`.
    pub fn number(&self, key: &str, min: u64, max: u64, fallback: u64) -> u64 {
        self.setting(key)
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map_or(fallback, |n| n.clamp(min, max))
    }

    pub fn home(&self) -> Option<PathBuf> {
        self.env.get("HOME").filter(|h| !h.is_empty()).map(PathBuf::from)
    }

    /// `MEMD_PORT` (env, settings.json), else `37800 + uid % 100`.
    pub fn port(&self) -> u16 {
        self.setting("MEMD_PORT")
            .and_then(|p| p.trim().parse::<u16>().ok())
            .filter(|p| *p != 0)
            .unwrap_or_else(default_port)
    }

    /// The worker's address: the port it recorded in `memd.pid` (it may have been started with
    /// port 0), else the configured port.
    pub fn addr(&self) -> SocketAddr {
        let port = crate::data_dir::read_pid_file(&self.dir.pid_file())
            .map(|p| p.port)
            .filter(|p| *p != 0)
            .unwrap_or_else(|| self.port());
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    /// `<data>/token`, trimmed, when it is 64 hex characters.
    pub fn token(&self) -> Option<String> {
        let t = std::fs::read_to_string(self.dir.token()).ok()?;
        let t = t.trim();
        (t.len() == 64 && t.bytes().all(|b| b.is_ascii_hexdigit())).then(|| t.to_string())
    }

    pub fn sync_budget(&self) -> Duration {
        Duration::from_millis(self.number("MEMD_HOOK_BUDGET_MS", 100, 9000, 2000))
    }

    pub fn async_budget(&self) -> Duration {
        Duration::from_millis(self.number("MEMD_HOOK_ASYNC_BUDGET_MS", 100, 29_000, 10_000))
    }

    pub fn short_budget(&self) -> Duration {
        self.sync_budget().min(Duration::from_millis(1000))
    }
}

/// A deadline measured from process start.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    pub deadline: Instant,
}

impl Budget {
    pub fn new(started: Instant, length: Duration) -> Self {
        Self {
            deadline: started + length,
        }
    }
    pub fn left(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }
    pub fn expired(&self) -> bool {
        self.left().is_zero()
    }
}
