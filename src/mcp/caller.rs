//! What every MCP tool works with: the caller's context (worker link, mode, project chain,
//! platform) and the tool result and error types (arguments are parsed by [`super::params`]). Bad arguments are
//! [`ToolError::InvalidParams`] (JSON-RPC −32602); failures inside a tool are a one-line text
//! with `is_error`.

use serde_json::Value;

use super::link::WorkerLink;

/// What the server knows about its caller.
#[derive(Debug, Clone)]
pub struct CallerContext {
    pub link: WorkerLink,
    /// The configured mode (glyphs of the offline search answer).
    pub mode: crate::modes::Mode,
    /// Project chain from the server's cwd, primary last.
    pub chain: Vec<String>,
    /// The git branch of the server's cwd ('' outside git): work state is kept per branch.
    pub branch: String,
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

pub(super) fn fail(text: impl std::fmt::Display) -> Result<ToolText, ToolError> {
    Ok(ToolText {
        text: text.to_string(),
        is_error: true,
    })
}

pub(super) fn bad(msg: impl Into<String>) -> ToolError {
    ToolError::InvalidParams(msg.into())
}

/// Why the worker gave no answer a tool can use.
#[derive(Debug, thiserror::Error)]
pub(super) enum Unanswered {
    /// Not reached (down, not started, refused).
    #[error("{0}")]
    Link(#[from] super::autostart::AutostartError),
    /// It answered with an error status; its detail.
    #[error("{0}")]
    Status(String),
}

impl CallerContext {
    pub(super) fn chain_or(&self, given: String) -> String {
        if given.is_empty() { self.chain.join(",") } else { given }
    }

    /// GET/POST/DELETE through the link: a 400 is the caller's error; worker down or another
    /// error status is [`Unanswered`], which the tool shows as its error text.
    pub(super) fn fetch(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Result<super::link::Answer, Unanswered>, ToolError> {
        match self.link.call(method, path, body) {
            Err(e) => Ok(Err(Unanswered::Link(e))),
            Ok(a) if a.status == 400 => Err(bad(a.detail())),
            Ok(a) if a.status >= 300 => Ok(Err(Unanswered::Status(a.detail()))),
            Ok(a) => Ok(Ok(a)),
        }
    }
}
