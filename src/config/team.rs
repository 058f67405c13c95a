//! Team memory's settings (issue 40): the server (`MEMD_TEAM_DATABASE_URL`, hidden from `Debug`
//! and logs; TLS per its `sslmode`, extra roots from `MEMD_TEAM_CA_FILE`), the shared projects,
//! this machine's origin and the sync interval. No URL: no team, nothing changes.

use std::path::PathBuf;

use super::keys;
use super::raw::RawSettings;
use super::sections::Secret;

#[derive(Debug, Clone)]
pub struct TeamSettings {
    pub url: Secret,
    pub projects: Vec<String>,
    pub origin: String,
    pub ca_file: Option<PathBuf>,
    pub sync_ms: u64,
}

impl TeamSettings {
    /// None without a server URL.
    pub fn resolve(raw: &RawSettings, w: &mut Vec<String>) -> Option<Self> {
        let url = Secret::new(&raw.text(&keys::TEAM_DATABASE_URL))?;
        let origin = match raw.text(&keys::TEAM_ORIGIN) {
            o if o.trim().is_empty() => default_origin(),
            o => o.trim().to_string(),
        };
        let ca = raw.text(&keys::TEAM_CA_FILE);
        Some(Self {
            url,
            projects: raw.list(&keys::TEAM_PROJECTS),
            origin,
            ca_file: (!ca.trim().is_empty()).then(|| PathBuf::from(ca.trim())),
            sync_ms: raw.int(&keys::TEAM_SYNC_MS, w),
        })
    }
}

/// `MEMD_TEAM_ORIGIN`, else `user@host`.
pub fn default_origin() -> String {
    let user = std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .unwrap_or_else(|_| "user".into());
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "host".into());
    format!("{user}@{host}")
}
