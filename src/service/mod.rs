//! memd under an operating system's service manager: the unit files it installs (systemd user
//! units, a launchd agent), the sd_notify protocol, socket activation, and which manager (if any)
//! started this worker. Nothing here knows HTTP; `memd serve` and `memd service` call in.
//!
//! | file | what it holds |
//! |---|---|
//! | [`units`] | the text of `memd.service`, `memd.socket` and the launchd plist (pure) |
//! | [`install`] | `memd service install/uninstall/status`: the plan, the manifest, the commands |
//! | [`notify`] | sd_notify datagrams (`READY=1`, `STATUS=`, `WATCHDOG=1`, `STOPPING=1`, …) |
//! | [`activation`] | a listener passed by the manager (`LISTEN_FDS`, `LISTEN_PID`, `LISTEN_FDNAMES`) |

pub mod activation;
pub mod install;
pub mod notify;
pub mod units;

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

/// The launchd label of memd's agent (also its plist's file name).
pub const LAUNCHD_LABEL: &str = "dev.memd.worker";
/// How long `memd serve` may take to stop: the drain budget (10 s) with room for a checkpoint.
pub const STOP_TIMEOUT_S: u64 = 30;

/// Who started this worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Manager {
    Systemd,
    Launchd,
    /// A hook, `memd mcp`, the CLI or a person: started on demand.
    #[default]
    OnDemand,
}

impl Manager {
    /// From the environment the manager gives its services: systemd sets `INVOCATION_ID` (and
    /// `NOTIFY_SOCKET` for `Type=notify`, `LISTEN_PID` for socket activation); launchd sets
    /// `XPC_SERVICE_NAME` to the job's label.
    pub fn detect(env: &HashMap<String, String>) -> Self {
        let has = |k: &str| env.get(k).is_some_and(|v| !v.is_empty());
        if has("INVOCATION_ID") || has("NOTIFY_SOCKET") || has("LISTEN_PID") {
            Manager::Systemd
        } else if env.get("XPC_SERVICE_NAME").is_some_and(|v| v == LAUNCHD_LABEL) {
            Manager::Launchd
        } else {
            Manager::OnDemand
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Manager::Systemd => "systemd",
            Manager::Launchd => "launchd",
            Manager::OnDemand => "on demand",
        }
    }
}

/// What a service manager passed to `memd serve`, read once from the environment.
#[derive(Debug, Clone, Default)]
pub struct ServiceEnv {
    pub manager: Manager,
    pub notify_socket: Option<String>,
    /// `WATCHDOG_USEC` when `WATCHDOG_PID` is unset or names this process.
    pub watchdog_usec: Option<u64>,
    pub listen: Option<activation::Passed>,
}

impl ServiceEnv {
    pub fn from_env(env: &HashMap<String, String>, pid: u32) -> Self {
        let for_us = |k: &str| env.get(k).is_none_or(|v| v.trim().parse::<u32>().ok() == Some(pid));
        let watchdog_usec = env
            .get("WATCHDOG_USEC")
            .and_then(|v| v.trim().parse::<u64>().ok())
            .filter(|&u| u > 0 && for_us("WATCHDOG_PID"));
        Self {
            manager: Manager::detect(env),
            notify_socket: env.get("NOTIFY_SOCKET").filter(|s| !s.is_empty()).cloned(),
            watchdog_usec,
            listen: activation::Passed::from_env(env, pid),
        }
    }
}

/// An environment map from pairs (the tests of this room).
#[cfg(test)]
pub(crate) fn env_of(pairs: &[(&str, &str)]) -> HashMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use env_of as env;

    #[test]
    fn the_manager_is_told_by_its_environment() {
        assert_eq!(Manager::detect(&env(&[])), Manager::OnDemand);
        assert_eq!(Manager::detect(&env(&[("INVOCATION_ID", "abc")])), Manager::Systemd);
        assert_eq!(Manager::detect(&env(&[("XPC_SERVICE_NAME", LAUNCHD_LABEL)])), Manager::Launchd);
        assert_eq!(
            Manager::detect(&env(&[("XPC_SERVICE_NAME", "com.apple.Terminal")])),
            Manager::OnDemand
        );
    }

    #[test]
    fn the_watchdog_is_ours_only_when_its_pid_is() {
        let e = env(&[("WATCHDOG_USEC", "2000000"), ("WATCHDOG_PID", "42")]);
        assert_eq!(ServiceEnv::from_env(&e, 42).watchdog_usec, Some(2_000_000));
        assert_eq!(ServiceEnv::from_env(&e, 43).watchdog_usec, None);
        assert_eq!(ServiceEnv::from_env(&env(&[("WATCHDOG_USEC", "5")]), 1).watchdog_usec, Some(5));
        assert_eq!(ServiceEnv::from_env(&env(&[("WATCHDOG_USEC", "0")]), 1).watchdog_usec, None);
    }
}
