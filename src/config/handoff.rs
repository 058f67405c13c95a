//! The settings of issue 39's opt-in parts: folder context files (`MEMD_FOLDER_CONTEXT*`), read
//! by the worker's loop and `memd folders` alike.

use super::RawSettings;
use super::keys::{FOLDER_CONTEXT, FOLDER_CONTEXT_DAYS, FOLDER_CONTEXT_FILE};

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
