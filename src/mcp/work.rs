//! The work-state tools (issue 39): `work_state_write` records the task, items and notes of this
//! project (and branch) through `POST /api/work-state`; `work_state_read` answers the section
//! SessionStart injects.

use serde_json::{Value, json};

use super::caller::{CallerContext, ToolError, ToolText, fail, ok};
use super::link::with_query;
use super::tool_params::{WorkStateReadParams, WorkStateWriteParams};
use crate::protocol::paths;

impl CallerContext {
    fn work_project(&self, given: Option<String>) -> String {
        given
            .filter(|p| !p.trim().is_empty())
            .or_else(|| self.chain.last().cloned())
            .unwrap_or_default()
    }

    pub(super) fn work_state_write(&self, p: WorkStateWriteParams) -> Result<ToolText, ToolError> {
        let mut body = json!({"project": self.work_project(p.project), "branch": self.branch});
        for (key, v) in [("task", p.task), ("notes", p.notes)] {
            if let Some(v) = v {
                body[key] = json!(v);
            }
        }
        if let Some(items) = p.items {
            let items: Vec<Value> = items
                .into_iter()
                .map(|i| json!({"key": i.key, "text": i.text, "status": i.status.as_str()}))
                .collect();
            body["items"] = Value::Array(items);
        }
        if let Some(remove) = p.remove {
            body["remove"] = json!(remove);
        }
        let ans = match self.fetch("POST", paths::WORK_STATE, Some(&body))? {
            Ok(a) => a,
            Err(e) => return fail(e),
        };
        let state = ans.json().map(|v| v["state"].clone()).unwrap_or(Value::Null);
        let items = state["items"].as_array().map(Vec::as_slice).unwrap_or_default();
        let open = items.iter().filter(|i| i["status"] != "done").count();
        let branch = match state["branch"].as_str().unwrap_or_default() {
            "" => String::new(),
            b => format!(" (branch {b})"),
        };
        ok(format!(
            "Work state of {}{branch} saved: {open} open item(s), {} done. It is shown at the next session start.",
            state["project"].as_str().unwrap_or("this project"),
            items.len() - open
        ))
    }

    pub(super) fn work_state_read(&self, p: WorkStateReadParams) -> Result<ToolText, ToolError> {
        let project = self.work_project(p.project);
        let q = [("project", project.clone()), ("branch", self.branch.clone())];
        match self.fetch("GET", &with_query(paths::WORK_STATE, &q), None)? {
            Ok(ans) => {
                let v = ans.json().unwrap_or(Value::Null);
                match v["section"].as_str() {
                    Some(text) => ok(text.to_string()),
                    None => ok(format!("No work state recorded for {project} yet.")),
                }
            }
            Err(e) => fail(e),
        }
    }
}
