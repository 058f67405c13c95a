//! The index of an export: `index.md` (a table a person reads: id, date, type, project, title,
//! file) or `index.json` (the same as a list).

use serde_json::{Value, json};

use super::{Format, OBSERVATIONS_DIR};
use crate::store::export_rows::ExportedObservation;
use crate::text::sink::inline;

/// One line of the index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    pub id: i64,
    pub created_at: String,
    pub obs_type: String,
    pub project: String,
    pub title: String,
    pub file: String,
}

impl IndexEntry {
    pub fn of(e: &ExportedObservation, file: String) -> Self {
        Self {
            id: e.id,
            created_at: e.record.created_at.clone(),
            obs_type: e.record.obs_type.clone(),
            project: e.record.project.clone(),
            title: e.record.title.clone().unwrap_or_default(),
            file,
        }
    }
}

fn cell(s: &str) -> String {
    inline(s).replace('|', "\\|")
}

/// The index file's name and text.
pub fn render(entries: &[IndexEntry], format: Format) -> (String, String) {
    match format {
        Format::Md => {
            let mut out = format!(
                "# memd export\n\n{} observations; one file each under `{OBSERVATIONS_DIR}/`. Read back with `memd import-md <dir>`.\n\n| id | created | type | project | title |\n|---|---|---|---|---|\n",
                entries.len()
            );
            for e in entries {
                out.push_str(&format!(
                    "| {} | {} | {} | {} | [{}]({OBSERVATIONS_DIR}/{}) |\n",
                    e.id,
                    cell(&e.created_at),
                    cell(&e.obs_type),
                    cell(&e.project),
                    cell(if e.title.is_empty() { "Untitled" } else { &e.title }),
                    e.file
                ));
            }
            ("index.md".into(), out)
        }
        Format::Json => {
            let items: Vec<Value> = entries
                .iter()
                .map(|e| json!({"id": e.id, "created_at": e.created_at, "type": e.obs_type, "project": e.project, "title": e.title, "file": format!("{OBSERVATIONS_DIR}/{}", e.file)}))
                .collect();
            let text = serde_json::to_string_pretty(&json!({"count": items.len(), "observations": items})).unwrap_or_default();
            ("index.json".into(), text + "\n")
        }
    }
}
