//! Tool calls → worker HTTP calls (docs/spec/retrieval.md §7). Blocking; pure apart from the link.

use crate::protocol::paths;
use serde_json::{Map, Value, json};

use super::caller::{CallerContext, ToolError, ToolText, bad, fail, ok};
use super::link::{with_pairs, with_query};
use super::params::{Ids, Moment, Words, words};
use super::tool_params::{ContextParams, ForgetParams, SaveMemoryParams, SearchParams, TimelineParams};
use crate::protocol::params::{given, to_pairs};
use crate::store::forget::RecordKind;

impl CallerContext {
    /// Runs one tool.
    pub fn call(&self, name: &str, args: &Map<String, Value>) -> Result<ToolText, ToolError> {
        match super::schema::find(name) {
            Some(tool) => (tool.run)(self, args),
            None => Err(ToolError::UnknownTool(name.to_string())),
        }
    }

    pub(super) fn search(&self, mut p: SearchParams) -> Result<ToolText, ToolError> {
        if given(&p.project).is_none() {
            p.project = Some(Words(self.chain.join(",")));
        }
        match self.fetch("GET", &with_pairs(paths::SEARCH, &to_pairs(&p)), None)? {
            Ok(ans) => ok(ans.text()),
            // No worker: answer from the database (keyword only) rather than not at all.
            Err(e) => match super::offline::search(&self.link.dir, &self.mode, &p) {
                Some(text) => ok(text),
                None => fail(e),
            },
        }
    }

    pub(super) fn timeline(&self, p: TimelineParams) -> Result<ToolText, ToolError> {
        // The route's own rule, checked here too so that the offline path is never asked a
        // request the worker would refuse.
        crate::retrieval::requests::timeline_request(&p, None).map_err(|e| bad(e.to_string()))?;
        match self.fetch("GET", &with_pairs(paths::TIMELINE, &to_pairs(&p)), None)? {
            Ok(ans) => ok(ans.text()),
            Err(e) => match super::offline::timeline(&self.link.dir, &self.mode, &p) {
                Some(text) => ok(text),
                None => fail(e),
            },
        }
    }

    pub(super) fn save_memory(&self, p: SaveMemoryParams) -> Result<ToolText, ToolError> {
        if p.text.trim().is_empty() {
            return Err(bad("text is required"));
        }
        let mut body = json!({"text": p.text, "platformSource": self.platform, "provenance": "agent"});
        for (key, v) in [("title", p.title), ("project", p.project), ("type", p.kind)] {
            if let Some(v) = v {
                body[key] = json!(v);
            }
        }
        if body.get("project").is_none()
            && let Some(project) = self.chain.last()
        {
            body["project"] = json!(project);
        }
        if let Some(c) = p.concepts {
            body["concepts"] = json!(c);
        }
        if let Some(m) = p.metadata {
            body["metadata"] = Value::Object(m);
        }
        if let Some(old) = p.supersedes {
            body["supersedes"] = json!(old.0);
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

    pub(super) fn forget(&self, p: ForgetParams) -> Result<ToolText, ToolError> {
        let (session, project) = (p.content_session_id, p.project);
        if [p.ids.is_some(), session.is_some(), project.is_some()]
            .iter()
            .filter(|x| **x)
            .count()
            != 1
        {
            return Err(bad("give exactly one of ids, contentSessionId or project"));
        }
        let reason = p.reason.unwrap_or_default();
        if let Some(Ids(ids)) = p.ids {
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
            (_, Some(project)) => {
                body["project"] = json!(project);
                if let Some(Moment(b)) = p.before {
                    body["before"] = b;
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

    pub(super) fn session_start_context(&self, p: ContextParams) -> Result<ToolText, ToolError> {
        let mut projects = words(&p.projects);
        if projects.is_empty() {
            projects = p.project.unwrap_or_default();
        }
        let full = p.full.unwrap_or(false);
        let platform = p.platform_source.unwrap_or_else(|| self.platform.clone());
        let q = [
            ("projects", self.chain_or(projects)),
            ("platformSource", platform),
            ("full", full.to_string()),
            ("fence", "false".to_string()),
        ];
        match self.fetch("GET", &with_query(paths::CONTEXT_INJECT, &q), None)? {
            Ok(ans) => ok(ans.body),
            Err(e) => fail(e),
        }
    }
}
