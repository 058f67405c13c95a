//! What the client subcommands (`remember`, `forget`, `search`, `mcp`, `gc`, `import-claude-mem`)
//! share: the data directory, the settings, the caller's project chain and the worker link.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::config::{Settings, data_dir_from_env};
use crate::data_dir::DataDir;
use crate::mcp::link::WorkerLink;
use crate::pipeline::privacy::Privacy;
use crate::pipeline::project::{ProjectIdentity, identify};
use crate::pipeline::redact::{RedactConfig, Redactor};

pub struct CliContext {
    pub dir: DataDir,
    pub settings: Settings,
    pub autostart: bool,
    env_project: Option<String>,
    home: Option<PathBuf>,
}

impl CliContext {
    /// `data_dir` overrides `MEMD_DATA_DIR` (`memd mcp --data-dir`).
    pub fn load(env: &HashMap<String, String>, data_dir: Option<PathBuf>) -> Self {
        let dir = DataDir::new(data_dir.unwrap_or_else(|| data_dir_from_env(env)));
        let settings = Settings::load(dir.root.clone(), env);
        let home = settings.home.clone();
        Self {
            dir,
            autostart: settings.hook.autostart,
            settings,
            env_project: env.get("MEMD_PROJECT").cloned(),
            home,
        }
    }

    /// The caller's project identity from the process cwd (`MEMD_PROJECT` first).
    pub fn identity(&self) -> ProjectIdentity {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        let cwd_text = cwd.to_string_lossy().into_owned();
        identify(&cwd_text, self.env_project.as_deref(), self.home.as_deref(), Path::new(&cwd))
    }

    pub fn link(&self) -> WorkerLink {
        WorkerLink {
            dir: self.dir.clone(),
            port: self.settings.port,
            autostart: self.autostart,
            exe: std::env::current_exe().ok(),
        }
    }

    /// The privacy stage as the worker builds it (for in-process imports).
    pub fn privacy(&self) -> Privacy {
        let token = std::fs::read_to_string(self.dir.token()).ok().map(|t| t.trim().to_string());
        let (redactor, _) = Redactor::new(&RedactConfig {
            redact: self.settings.redact,
            disabled_builtins: &self.settings.redact_disabled_builtins,
            custom_patterns_json: &self.settings.redact_custom_patterns,
            memd_token: token.as_deref(),
        });
        Privacy::new(redactor)
    }

    /// Is a worker answering readiness now? (No auto-start.)
    pub fn worker_running(&self) -> bool {
        crate::mcp::autostart::ready(&crate::client::worker::Worker::locate(&self.dir, self.settings.port))
    }
}

/// One call to the worker that must answer 200 with JSON: anything else is an error naming the
/// status and the worker's detail.
pub fn call_json(link: &WorkerLink, method: &str, path: &str, body: Option<&serde_json::Value>) -> anyhow::Result<serde_json::Value> {
    use anyhow::Context;
    let ans = link.call(method, path, body).context("asking the worker")?;
    if ans.status != 200 {
        anyhow::bail!("the worker answered {}: {}", ans.status, ans.detail());
    }
    ans.json().context("the worker's answer is not JSON")
}
