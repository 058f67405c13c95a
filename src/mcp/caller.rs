//! What every MCP tool works with: the caller's context (worker link, mode, project chain,
//! platform), the tool result and error types, and argument parsing. Bad arguments are
//! [`ToolError::InvalidParams`] (JSON-RPC −32602); failures inside a tool are a one-line text
//! with `is_error`.

use serde_json::{Map, Value};

use super::link::WorkerLink;
use crate::store::forget::RecordRef;

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

pub(super) fn ok(text: impl Into<String>) -> Result<ToolText, ToolError> {
    Ok(ToolText {
        text: text.into(),
        is_error: false,
    })
}

pub(super) fn fail(text: impl Into<String>) -> Result<ToolText, ToolError> {
    Ok(ToolText {
        text: text.into(),
        is_error: true,
    })
}

pub(super) fn bad(msg: impl Into<String>) -> ToolError {
    ToolError::InvalidParams(msg.into())
}

/// A string, a number, or a list of them → comma list ("" when absent).
pub(super) fn list_arg(a: &Map<String, Value>, key: &str) -> Result<String, ToolError> {
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

pub(super) fn int_arg(a: &Map<String, Value>, key: &str, min: i64, max: i64) -> Result<Option<i64>, ToolError> {
    match a.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_i64() {
            Some(n) if (min..=max).contains(&n) => Ok(Some(n)),
            _ => Err(bad(format!("{key} must be an integer in {min}..{max}"))),
        },
    }
}

pub(super) fn str_arg(a: &Map<String, Value>, key: &str) -> Result<Option<String>, ToolError> {
    match a.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(bad(format!("{key} must be a string"))),
    }
}

pub(super) fn ids_arg(a: &Map<String, Value>, max: usize) -> Result<Vec<RecordRef>, ToolError> {
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
    pub(super) fn chain_or(&self, given: String) -> String {
        if given.is_empty() { self.chain.join(",") } else { given }
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
}
