//! Tool calls → worker HTTP calls (docs/spec/retrieval.md §7). Blocking; pure apart from the link.
//! Bad arguments are [`ToolError::InvalidParams`] (JSON-RPC −32602); failures inside a tool are a
//! one-line text with `is_error`.

use serde_json::{Map, Value, json};

use super::link::{WorkerLink, with_query};
use crate::store::forget::{RecordKind, RecordRef};

/// What the server knows about its caller.
#[derive(Debug, Clone)]
pub struct CallerContext {
    pub link: WorkerLink,
    /// The configured mode (glyphs of the offline search answer).
    pub mode: crate::modes::Mode,
    /// Project chain from the server's cwd, primary last.
    pub chain: Vec<String>,
    pub platform: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolError {
    InvalidParams(String),
    UnknownTool(String),
}

/// One text block; `is_error` for failures inside the tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolText {
    pub text: String,
    pub is_error: bool,
}

fn ok(text: impl Into<String>) -> Result<ToolText, ToolError> {
    Ok(ToolText {
        text: text.into(),
        is_error: false,
    })
}

fn fail(text: impl Into<String>) -> Result<ToolText, ToolError> {
    Ok(ToolText {
        text: text.into(),
        is_error: true,
    })
}

fn bad(msg: impl Into<String>) -> ToolError {
    ToolError::InvalidParams(msg.into())
}

/// A string, a number, or a list of them → comma list ("" when absent).
fn list_arg(a: &Map<String, Value>, key: &str) -> Result<String, ToolError> {
    match a.get(key) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Number(n)) => Ok(n.to_string()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| match i {
                Value::String(s) => Ok(s.clone()),
                Value::Number(n) => Ok(n.to_string()),
                _ => Err(bad(format!("{key} must hold strings"))),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(|v| v.join(",")),
        Some(_) => Err(bad(format!("{key} must be a string or an array"))),
    }
}

fn int_arg(a: &Map<String, Value>, key: &str, min: i64, max: i64) -> Result<Option<i64>, ToolError> {
    match a.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_i64() {
            Some(n) if (min..=max).contains(&n) => Ok(Some(n)),
            _ => Err(bad(format!("{key} must be an integer in {min}..{max}"))),
        },
    }
}

fn str_arg(a: &Map<String, Value>, key: &str) -> Result<Option<String>, ToolError> {
    match a.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(bad(format!("{key} must be a string"))),
    }
}

fn ids_arg(a: &Map<String, Value>, max: usize) -> Result<Vec<RecordRef>, ToolError> {
    let Some(Value::Array(items)) = a.get("ids") else {
        return Err(bad("ids must be an array"));
    };
    if items.is_empty() || items.len() > max {
        return Err(bad(format!("ids must hold 1..{max} ids")));
    }
    items
        .iter()
        .map(|i| {
            let s = match i {
                Value::Number(n) => n.to_string(),
                Value::String(s) => s.clone(),
                _ => String::new(),
            };
            RecordRef::parse(&s).ok_or_else(|| bad(format!("malformed id {i}")))
        })
        .collect()
}

impl CallerContext {
    fn chain_or(&self, given: String) -> String {
        if given.is_empty() { self.chain.join(",") } else { given }
    }

    /// Runs one tool.
    pub fn call(&self, name: &str, args: &Map<String, Value>) -> Result<ToolText, ToolError> {
        match name {
            "search" => self.search(args),
            "timeline" => self.timeline(args),
            "get_observations" => super::records::get_observations(self, args),
            "save_memory" => self.save_memory(args),
            "forget" => self.forget(args),
            "session_start_context" => self.session_start_context(args),
            other => Err(ToolError::UnknownTool(other.to_string())),
        }
    }

    /// GET/POST/DELETE through the link; worker down or an error status → an error text.
    pub(super) fn fetch(&self, method: &str, path: &str, body: Option<&Value>) -> Result<Result<super::link::Answer, String>, ToolError> {
        match self.link.call(method, path, body) {
            Err(e) => Ok(Err(e.to_string())),
            Ok(a) if a.status == 400 => Err(bad(a.detail())),
            Ok(a) if a.status >= 300 => Ok(Err(a.detail())),
            Ok(a) => Ok(Ok(a)),
        }
    }

    fn search(&self, a: &Map<String, Value>) -> Result<ToolText, ToolError> {
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
        match self.fetch("GET", &with_query("/api/search", &q), None)? {
            Ok(ans) => ok(ans.text()),
            // No worker: answer from the database (keyword only) rather than not at all.
            Err(e) => match super::offline::search(&self.link.dir, &self.mode, &q) {
                Some(text) => ok(text),
                None => fail(e),
            },
        }
    }

    fn timeline(&self, a: &Map<String, Value>) -> Result<ToolText, ToolError> {
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
        match self.fetch("GET", &with_query("/api/timeline", &q), None)? {
            Ok(ans) => ok(ans.text()),
            Err(e) => match super::offline::timeline(&self.link.dir, &self.mode, &q) {
                Some(text) => ok(text),
                None => fail(e),
            },
        }
    }

    fn save_memory(&self, a: &Map<String, Value>) -> Result<ToolText, ToolError> {
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
        let ans = match self.fetch("POST", "/api/memory/save", Some(&body))? {
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

    fn forget(&self, a: &Map<String, Value>) -> Result<ToolText, ToolError> {
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
                let path = with_query(&format!("/api/observation/{}", r.id), &[("reason", reason.clone())]);
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
        match self.fetch("POST", "/api/forget", Some(&body))? {
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

    fn session_start_context(&self, a: &Map<String, Value>) -> Result<ToolText, ToolError> {
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
        match self.fetch("GET", &with_query("/api/context/inject", &q), None)? {
            Ok(ans) => ok(ans.body),
            Err(e) => fail(e),
        }
    }
}
