//! Work-state use-cases (issue 39): check and clean a write (`POST /api/work-state`, MCP
//! `work_state_write`, `memd work`), store it, read it back, and render the SessionStart section.
//! Each takes what it uses (the storage area, the privacy rules, the context settings), so the
//! worker and the routes pass their parts and nothing here knows the worker.
//! Every text passes the privacy pipeline as a saved memory does: a `<private>` region is dropped,
//! secrets are redacted.

use super::render::{WorkRender, render_work_section};
use super::storage::WorkStates;
use super::tables::{STATUSES, WorkItemIn, WorkState, WorkWrite};
use crate::clock::now_ms;
use crate::config::ContextSettings;
use crate::pipeline::privacy::Privacy;
use crate::pipeline::project::UNKNOWN_PROJECT;
use crate::store::StoreError;

pub const TASK_MAX_CHARS: usize = 500;
pub const NOTES_MAX_CHARS: usize = 4_000;
pub const ITEM_MAX_CHARS: usize = 500;
pub const KEY_MAX_CHARS: usize = 100;
pub const ITEMS_PER_WRITE: usize = 100;

#[derive(Debug, thiserror::Error)]
pub enum WorkStateError {
    /// The write cannot be carried out as given (HTTP 400).
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

fn invalid(detail: impl Into<String>) -> WorkStateError {
    WorkStateError::Invalid(detail.into())
}

/// A write as a caller gives it (project and branch not yet defaulted).
#[derive(Debug, Clone, Default)]
pub struct WorkRequest {
    pub project: Option<String>,
    pub branch: Option<String>,
    pub task: Option<String>,
    pub notes: Option<String>,
    pub items: Vec<WorkItemIn>,
    pub remove: Vec<String>,
}

fn check_len(field: &str, v: &str, max: usize) -> Result<(), WorkStateError> {
    match v.chars().count() > max {
        true => Err(invalid(format!("{field} exceeds {max} characters"))),
        false => Ok(()),
    }
}

/// The checks of one write, before any text is cleaned.
pub fn check(req: &WorkRequest) -> Result<(), WorkStateError> {
    if req.items.len() > ITEMS_PER_WRITE {
        return Err(invalid(format!("items: at most {ITEMS_PER_WRITE} per write")));
    }
    check_len("task", req.task.as_deref().unwrap_or_default(), TASK_MAX_CHARS)?;
    check_len("notes", req.notes.as_deref().unwrap_or_default(), NOTES_MAX_CHARS)?;
    for (n, item) in req.items.iter().enumerate() {
        if item.key.trim().is_empty() {
            return Err(invalid(format!("items[{n}].key must not be empty")));
        }
        if item.text.trim().is_empty() {
            return Err(invalid(format!("items[{n}].text must not be empty")));
        }
        check_len(&format!("items[{n}].key"), &item.key, KEY_MAX_CHARS)?;
        check_len(&format!("items[{n}].text"), &item.text, ITEM_MAX_CHARS)?;
        if !STATUSES.contains(&item.status.as_str()) {
            return Err(invalid(format!(
                "items[{n}].status must be one of todo, doing, done, blocked, not {:?}",
                item.status
            )));
        }
    }
    Ok(())
}

/// `project` trimmed, else the unknown project; `branch` trimmed, else none.
pub fn key_of(project: Option<&str>, branch: Option<&str>) -> (String, String) {
    let project = project.map(str::trim).filter(|p| !p.is_empty()).unwrap_or(UNKNOWN_PROJECT);
    (project.to_string(), branch.map(str::trim).unwrap_or_default().to_string())
}

/// Checks, cleans and stores one write; answers the state after it.
pub async fn write(storage: &dyn WorkStates, privacy: &Privacy, req: WorkRequest) -> Result<WorkState, WorkStateError> {
    check(&req)?;
    // A private or emptied text is left out (a field) or skipped (an item), never stored.
    let clean = |s: &str| {
        let c = privacy.clean_text(s);
        (!c.private).then_some(c.text)
    };
    let (project, branch) = key_of(req.project.as_deref(), req.branch.as_deref());
    let w = WorkWrite {
        project,
        branch,
        task: req.task.as_deref().map(|t| clean(t).unwrap_or_default()),
        notes: req.notes.as_deref().map(|t| clean(t).unwrap_or_default()),
        items: req
            .items
            .iter()
            .filter_map(|i| {
                Some(WorkItemIn {
                    key: i.key.trim().to_string(),
                    text: clean(&i.text).filter(|t| !t.trim().is_empty())?,
                    status: i.status.clone(),
                })
            })
            .collect(),
        remove: req.remove.iter().map(|k| k.trim().to_string()).collect(),
    };
    let state = storage.write_work_state(w, now_ms()).await?;
    tracing::info!(project = %state.project, branch = %state.branch, items = state.items.len(), "work state written");
    Ok(state)
}

/// The SessionStart section of `project` on `branch` (None: the section is off or empty, or
/// the read failed — a context is never refused for it).
pub async fn section(storage: &dyn WorkStates, cfg: &ContextSettings, project: String, branch: String, max_chars: usize) -> Option<String> {
    if !cfg.work_state || max_chars == 0 {
        return None;
    }
    let state = match storage.work_state(project, branch).await {
        Ok(s) => s?,
        Err(e) => {
            tracing::warn!(error = %e, "work state unreadable; context without it");
            return None;
        }
    };
    render(cfg, &state, max_chars)
}

/// `state` as the section, within the setting's cap and `max_chars`.
pub fn render(cfg: &ContextSettings, state: &WorkState, max_chars: usize) -> Option<String> {
    let opts = WorkRender {
        now_ms: now_ms(),
        stale_after_days: cfg.work_stale_days,
        max_chars: cfg.work_state_max_chars.min(max_chars),
    };
    render_work_section(state, &opts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(key: &str, text: &str, status: &str) -> WorkItemIn {
        WorkItemIn {
            key: key.into(),
            text: text.into(),
            status: status.into(),
        }
    }

    #[test]
    fn a_bad_write_is_refused_naming_its_field() {
        let bad = |items: Vec<WorkItemIn>| {
            check(&WorkRequest {
                items,
                ..Default::default()
            })
            .unwrap_err()
            .to_string()
        };
        assert_eq!(
            bad(vec![item("a", "x", "started")]),
            "items[0].status must be one of todo, doing, done, blocked, not \"started\""
        );
        assert_eq!(bad(vec![item(" ", "x", "todo")]), "items[0].key must not be empty");
        assert_eq!(
            bad(vec![item("a", "x", "todo"), item("b", "", "todo")]),
            "items[1].text must not be empty"
        );
        assert_eq!(
            bad(vec![item("a", &"x".repeat(501), "todo")]),
            "items[0].text exceeds 500 characters"
        );
        let long_task = WorkRequest {
            task: Some("t".repeat(501)),
            ..Default::default()
        };
        assert_eq!(check(&long_task).unwrap_err().to_string(), "task exceeds 500 characters");
        assert!(check(&WorkRequest::default()).is_ok());
    }

    #[test]
    fn project_and_branch_default_to_the_unknown_project_and_no_branch() {
        assert_eq!(key_of(None, None), (UNKNOWN_PROJECT.to_string(), String::new()));
        assert_eq!(key_of(Some(" shop "), Some(" main ")), ("shop".to_string(), "main".to_string()));
    }
}
