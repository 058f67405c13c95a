//! What every handler gets: the parsed event, its effective cwd, the time stdin was parsed, the
//! environment — and the project identity, computed lazily (`MEMD_PROJECT` lives in the hook's
//! environment, not the worker's).

use std::path::Path;

use super::env::HookEnv;
use crate::pipeline::project::{ProjectIdentity, identify};
use crate::protocol::hook_wire::HookInput;

pub struct Run<'a> {
    pub hook: HookEnv<'a>,
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

/// Percent-encodes a query-string value (RFC 3986 unreserved characters kept).
pub fn query_value(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn encodes() {
        assert_eq!(super::query_value("a b,c/é"), "a%20b%2Cc%2F%C3%A9");
    }
}
