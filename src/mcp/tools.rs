//! Tool calls → worker HTTP calls (docs/spec/retrieval.md §7). Blocking; pure apart from the link.

use crate::protocol::paths;
use serde_json::{Map, Value, json};

use super::caller::{CallerContext, ToolError, ToolText, bad, fail, ids_arg, int_arg, list_arg, ok, str_arg};
use super::link::with_query;
use crate::store::forget::RecordKind;

impl CallerContext {
    /// Runs one tool.
    pub fn call(&self, name: &str, args: &Map<String, Value>) -> Result<ToolText, ToolError> {
        match super::schema::find(name) {
            Some(tool) => (tool.run)(self, args),
            None => Err(ToolError::UnknownTool(name.to_string())),
        }
    }

    pub(super) fn search(&self, a: &Map<String, Value>) -> Result<ToolText, ToolError> {
        let mut q: Vec<(&str, String)> = Vec::new();
        q.push(("query", str_arg(a, "query")?.unwrap_or_default()));
        for key in [
            "type",
            "obs_type",
            "concepts",
            "files",
            "platformSource",
            "dateStart",
            "dateEnd",
            "orderBy",
        ] {
            q.push((key, list_arg(a, key)?));
        }
        q.push(("project", self.chain_or(list_arg(a, "project")?)));
        if let Some(l) = int_arg(a, "limit", 1, 100)? {
            q.push(("limit", l.to_string()));
        }
        if let Some(o) = int_arg(a, "offset", 0, i64::MAX)? {
            q.push(("offset", o.to_string()));
        }
        match self.fetch("GET", &with_query(paths::SEARCH, &q), None)? {
            Ok(ans) => ok(ans.text()),
            // No worker: answer from the database (keyword only) rather than not at all.
            Err(e) => match super::offline::search(&self.link.dir, &self.mode, &q) {
                Some(text) => ok(text),
                None => fail(e),
            },
        }
    }

    pub(super) fn timeline(&self, a: &Map<String, Value>) -> Result<ToolText, ToolError> {
        let anchor = list_arg(a, "anchor")?;
        let query = str_arg(a, "query")?.unwrap_or_default();
        if anchor.is_empty() == query.is_empty() {
            return Err(bad("give exactly one of anchor and query"));
        }
        let before = int_arg(a, "depth_before", 0, 20)?.unwrap_or(5);
        let after = int_arg(a, "depth_after", 0, 20)?.unwrap_or(5);
        let q = [
            ("anchor", anchor),
            ("query", query),
            ("depth_before", before.to_string()),
            ("depth_after", after.to_string()),
            ("project", list_arg(a, "project")?),
            ("platformSource", list_arg(a, "platformSource")?),
        ];
        match self.fetch("GET", &with_query(paths::TIMELINE, &q), None)? {
            Ok(ans) => ok(ans.text()),
            Err(e) => match super::offline::timeline(&self.link.dir, &self.mode, &q) {
                Some(text) => ok(text),
                None => fail(e),
            },
        }
    }

    pub(super) fn save_memory(&self, a: &Map<String, Value>) -> Result<ToolText, ToolError> {
        let text = str_arg(a, "text")?
            .filter(|t| !t.trim().is_empty())
            .ok_or_else(|| bad("text is required"))?;
        let mut body = json!({"text": text, "platformSource": self.platform});
        for key in ["title", "project", "type"] {
            if let Some(v) = str_arg(a, key)? {
                body[key] = json!(v);
            }
        }
        if body.get("project").is_none()
            && let Some(p) = self.chain.last()
        {
            body["project"] = json!(p);
        }
        for key in ["concepts", "metadata"] {
            if let Some(v) = a.get(key).filter(|v| !v.is_null()) {
                body[key] = v.clone();
            }
        }
        let ans = match self.fetch("POST", paths::MEMORY_SAVE, Some(&body))? {
            Ok(a) => a,
            Err(e) => return fail(e),
        };
        let v = ans.json().unwrap_or(Value::Null);
        let id = v["id"].as_i64().unwrap_or(0);
        if v["reinforced"].as_bool() == Some(true) {
            ok(format!(
                "Already remembered as #{id} (seen {} times).",
                v["occurrenceCount"].as_i64().unwrap_or(2)
            ))
        } else {
            ok(format!(
                "Saved memory #{id} in {}.",
                v["project"].as_str().unwrap_or("unknown-project")
            ))
        }
    }

    pub(super) fn forget(&self, a: &Map<String, Value>) -> Result<ToolText, ToolError> {
        let session = str_arg(a, "contentSessionId")?;
        let project = str_arg(a, "project")?;
        let has_ids = a.get("ids").is_some_and(|v| !v.is_null());
        if [has_ids, session.is_some(), project.is_some()].iter().filter(|x| **x).count() != 1 {
            return Err(bad("give exactly one of ids, contentSessionId or project"));
        }
        let reason = str_arg(a, "reason")?.unwrap_or_default();
        if has_ids {
            let ids = ids_arg(a, 100)?;
            let (mut gone, mut missing) = (Vec::new(), Vec::new());
            for r in ids {
                if r.kind != RecordKind::Observation {
                    return Err(bad("forget takes observation ids; use contentSessionId for whole sessions"));
                }
                let path = with_query(&paths::with_id(r.kind.path(), r.id), &[("reason", reason.clone())]);
                match self.link.call("DELETE", &path, None) {
                    Ok(ans) if ans.status == 200 => gone.push(r.kind.label(r.id)),
                    Ok(ans) if ans.status == 404 => missing.push(r.kind.label(r.id)),
                    Ok(ans) => return fail(ans.detail()),
                    Err(e) => return fail(e.to_string()),
                }
            }
            let mut text = if gone.is_empty() {
                "Forgot nothing.".to_string()
            } else {
                format!("Forgot: {}.", gone.join(", "))
            };
            if !missing.is_empty() {
                text.push_str(&format!(" Not found: {}.", missing.join(", ")));
            }
            return ok(text);
        }
        let mut body = json!({"reason": reason});
        match (session, project) {
            (Some(s), _) => body["contentSessionId"] = json!(s),
            (_, Some(p)) => {
                body["project"] = json!(p);
                if let Some(b) = a.get("before").filter(|v| !v.is_null()) {
                    body["before"] = b.clone();
                }
            }
            _ => {}
        }
        match self.fetch("POST", paths::FORGET, Some(&body))? {
            Ok(ans) => {
                let v = ans.json().unwrap_or(Value::Null);
                let n = |k: &str| v[k].as_u64().unwrap_or(0);
                ok(format!(
                    "Forgot {} observations, {} summaries, {} prompts.",
                    n("observations"),
                    n("summaries"),
                    n("prompts")
                ))
            }
            Err(e) => fail(e),
        }
    }

    pub(super) fn session_start_context(&self, a: &Map<String, Value>) -> Result<ToolText, ToolError> {
        let mut projects = list_arg(a, "projects")?;
        if projects.is_empty() {
            projects = str_arg(a, "project")?.unwrap_or_default();
        }
        let full = match a.get("full") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err(bad("full must be a boolean")),
        };
        let platform = str_arg(a, "platformSource")?.unwrap_or_else(|| self.platform.clone());
        let q = [
            ("projects", self.chain_or(projects)),
            ("platformSource", platform),
            ("full", full.to_string()),
        ];
        match self.fetch("GET", &with_query(paths::CONTEXT_INJECT, &q), None)? {
            Ok(ans) => ok(ans.body),
            Err(e) => fail(e),
        }
    }
}
