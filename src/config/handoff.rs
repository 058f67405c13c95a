//! The settings of issue 39: folder context files (`MEMD_FOLDER_CONTEXT*`), alerts
//! (`MEMD_ALERT_*`) and the bridge to Claude Code's memory (`MEMD_NATIVE_MEMORY`,
//! `MEMD_NOTES_ROOTS`), read by the worker's loops and the CLI alike.

use super::keys::{
    ALERT_FORMAT, ALERT_TELEGRAM_CHAT_ID, ALERT_TYPES, ALERT_WEBHOOK_URL, FOLDER_CONTEXT, FOLDER_CONTEXT_DAYS, FOLDER_CONTEXT_FILE,
    NATIVE_MEMORY, NOTES_ROOTS,
};
use super::{RawSettings, Secret};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FolderSettings {
    /// memd maintains the sections (off by default).
    pub enabled: bool,
    /// The context file's name in each folder (a plain name, no directory).
    pub file_name: String,
    /// Observations from this many days back are listed.
    pub days: u64,
}

impl FolderSettings {
    pub fn resolve(raw: &RawSettings, w: &mut Vec<String>) -> Self {
        let name = raw.text(&FOLDER_CONTEXT_FILE);
        let plain = !name.is_empty() && !name.contains('/') && !name.contains('\\') && name != "." && name != "..";
        if !plain {
            w.push(format!(
                "{}: {name:?} is not a plain file name; using CLAUDE.md",
                FOLDER_CONTEXT_FILE.name
            ));
        }
        Self {
            enabled: raw.flag(&FOLDER_CONTEXT, w),
            file_name: if plain { name } else { "CLAUDE.md".into() },
            days: raw.int(&FOLDER_CONTEXT_DAYS, w),
        }
    }
}

/// Alerts (issue 39): off while no webhook is set. The URL is a secret (a Slack or Telegram URL
/// carries its token): never in `Debug` or logs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlertSettings {
    pub webhook: Option<Secret>,
    /// `json`, `slack` or `telegram`.
    pub format: &'static str,
    pub types: Vec<String>,
    pub telegram_chat_id: String,
}

impl AlertSettings {
    pub fn resolve(raw: &RawSettings, w: &mut Vec<String>) -> Self {
        Self {
            webhook: Secret::new(&raw.text(&ALERT_WEBHOOK_URL)),
            format: raw.choice(&ALERT_FORMAT, w),
            types: raw.list(&ALERT_TYPES),
            telegram_chat_id: raw.text(&ALERT_TELEGRAM_CHAT_ID),
        }
    }
}

/// The bridge to Claude Code's own memory (issue 39).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NativeMemorySettings {
    pub enabled: bool,
    /// Directories of Markdown notes to import (`~/` expanded).
    pub notes_roots: Vec<std::path::PathBuf>,
}

impl NativeMemorySettings {
    pub fn resolve(raw: &RawSettings, home: Option<&std::path::Path>, w: &mut Vec<String>) -> Self {
        Self {
            enabled: raw.flag(&NATIVE_MEMORY, w),
            notes_roots: raw.list(&NOTES_ROOTS).iter().map(|r| super::expand_home(r, home)).collect(),
        }
    }
}
