//! What a hook run knows about its surroundings (docs/spec/hooks.md §2.5): the data directory, the
//! settings it reads (environment, else `<data>/settings.json`, else the default; never written) —
//! through the same table and rules as the worker ([`crate::config::RawSettings`]) — the worker's
//! address and token, and its time budget.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::config::{Key, RawSettings, data_dir_from_env, default_port, keys};
use crate::data_dir::DataDir;

pub struct HookEnv<'a> {
    pub env: &'a HashMap<String, String>,
    pub dir: DataDir,
    pub started: Instant,
    settings: RawSettings,
}

impl<'a> HookEnv<'a> {
    pub fn new(env: &'a HashMap<String, String>, started: Instant) -> Self {
        let dir = DataDir::new(data_dir_from_env(env));
        let (settings, _) = RawSettings::load(&dir.root, env);
        Self {
            env,
            dir,
            started,
            settings,
        }
    }

    /// A text setting, trimmed, else its default.
    pub fn text(&self, key: &Key) -> String {
        self.settings.text(key)
    }

    /// A flag setting under the one flag rule (a bad value gives the default).
    pub fn flag(&self, key: &Key) -> bool {
        self.settings.flag(key, &mut Vec::new())
    }

    /// An integer setting under the one number rule (clamped to the key's bounds).
    pub fn number(&self, key: &Key) -> u64 {
        self.settings.int(key, &mut Vec::new())
    }

    pub fn home(&self) -> Option<PathBuf> {
        self.env.get("HOME").filter(|h| !h.is_empty()).map(PathBuf::from)
    }

    /// `MEMD_PORT` (env, settings.json), else `37800 + uid % 100` (also for 0: an ephemeral port
    /// is only known from the PID file).
    pub fn port(&self) -> u16 {
        match self.settings.given(&keys::PORT) {
            Some(_) => Some(self.number(&keys::PORT) as u16)
                .filter(|p| *p != 0)
                .unwrap_or_else(default_port),
            None => default_port(),
        }
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
        Duration::from_millis(self.number(&keys::HOOK_BUDGET_MS))
    }

    pub fn async_budget(&self) -> Duration {
        Duration::from_millis(self.number(&keys::HOOK_ASYNC_BUDGET_MS))
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
