//! What every handler gets: the parsed event, its effective cwd, the time stdin was parsed, the
//! environment — and the project identity, computed lazily (`MEMD_PROJECT` lives in the hook's
//! environment, not the worker's).

use std::path::Path;

use super::env::HookEnv;
use crate::pipeline::project::{ProjectIdentity, identify};
use crate::protocol::hook_wire::HookInput;

pub struct Run<'a> {
    pub hook: HookEnv<'a>,
    /// The host's `platformSource` (`claude`, `codex`, `gemini`).
    pub platform: &'static str,
    pub input: HookInput,
    /// The event's cwd, else the process's.
    pub cwd: String,
    pub occurred_at: i64,
}

impl Run<'_> {
    pub fn identity(&self) -> ProjectIdentity {
        let process_cwd = std::env::current_dir().unwrap_or_else(|_| "/".into());
        let env_project = self.hook.env.get("MEMD_PROJECT").map(String::as_str);
        let home = self.hook.home();
        identify(&self.cwd, env_project, home.as_deref(), Path::new(&process_cwd))
    }

    /// The project chain, comma-joined, primary last.
    pub fn chain(&self, identity: &ProjectIdentity) -> String {
        identity.chain.join(",")
    }

    pub fn session_id(&self) -> &str {
        &self.input.session_id
    }
}

pub use crate::client::http::query_value;
