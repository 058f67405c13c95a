//! `memd mcp`: a stdio MCP server (docs/spec/retrieval.md §7) built on `rmcp`. It is a client of the
//! worker's HTTP API ([`link`]), starting the worker when nothing listens ([`autostart`]). Stdout
//! carries protocol messages only; logs go to stderr and `<data>/logs/mcp.log`. It exits when stdin
//! closes or its parent process dies.

pub mod autostart;
pub mod caller;
pub mod corpus;
pub mod framing;
pub mod link;
pub mod offline;
pub mod params;
pub mod records;
pub mod related;
pub mod schema;
pub mod tool_params;
pub mod tools;
pub mod work;

use std::sync::Arc;

use crate::protocol::fence::{fence, strip_hidden};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    ServerInfo,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};

use caller::{CallerContext, ToolError};

#[derive(Debug, thiserror::Error)]
pub enum McpError {
    #[error("mcp transport: {0}")]
    Transport(String),
    #[error("runtime: {0}")]
    Runtime(#[from] std::io::Error),
}

/// The MCP handler: the caller context, shared with blocking tool calls.
#[derive(Clone)]
pub struct MemdServer {
    ctx: Arc<CallerContext>,
}

impl MemdServer {
    pub fn new(ctx: CallerContext) -> Self {
        Self { ctx: Arc::new(ctx) }
    }
}

impl ServerHandler for MemdServer {
    fn get_info(&self) -> ServerInfo {
        ServerInfo::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("memd", env!("CARGO_PKG_VERSION")))
            .with_instructions(schema::INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(schema::tools()))
    }

    async fn call_tool(&self, request: CallToolRequestParams, _context: RequestContext<RoleServer>) -> Result<CallToolResult, ErrorData> {
        let ctx = self.ctx.clone();
        let name = request.name.to_string();
        let args = request.arguments.unwrap_or_default();
        tracing::info!(tool = %name, "tool call");
        let recall = schema::find(&name).is_some_and(|t| t.recall);
        let out = tokio::task::spawn_blocking(move || ctx.call(&name, &args))
            .await
            .map_err(|e| ErrorData::internal_error(format!("tool task failed: {e}"), None))?;
        match out {
            // Nothing hidden reaches the model from any tool (issue 51); recalled memory is fenced
            // like injected context (issue 36).
            Ok(t) if t.is_error => Ok(CallToolResult::error(vec![ContentBlock::text(strip_hidden(&t.text))])),
            Ok(t) if recall => Ok(CallToolResult::success(vec![ContentBlock::text(fence(&t.text))])),
            Ok(t) => Ok(CallToolResult::success(vec![ContentBlock::text(strip_hidden(&t.text))])),
            Err(ToolError::InvalidParams(m)) => Err(ErrorData::invalid_params(m, None)),
            Err(ToolError::UnknownTool(t)) => Err(ErrorData::invalid_params(format!("unknown tool {t}"), None)),
        }
    }
}

/// True once the process that started us is gone (we were re-parented).
fn parent_gone(original: libc::pid_t) -> bool {
    // SAFETY: getppid has no preconditions.
    let now = unsafe { libc::getppid() };
    now != original
}

/// Serves MCP on stdin/stdout until stdin closes or the parent dies.
pub fn serve_stdio(ctx: CallerContext) -> Result<(), McpError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .thread_name("memd-mcp")
        .build()?;
    // SAFETY: getppid has no preconditions.
    let parent = unsafe { libc::getppid() };
    runtime.block_on(async move {
        let serve = async move {
            let running = MemdServer::new(ctx)
                .serve(framing::wrap(tokio::io::stdin(), tokio::io::stdout()))
                .await
                .map_err(|e| McpError::Transport(e.to_string()))?;
            let reason = running.waiting().await.map_err(|e| McpError::Transport(e.to_string()))?;
            tracing::info!(reason = ?reason, "mcp server stopped");
            Ok::<(), McpError>(())
        };
        // Watched from the start: the host may die before it ever sends `initialize`.
        let orphaned = async move {
            loop {
                tokio::time::sleep(Duration::from_secs(1)).await;
                if parent_gone(parent) {
                    return;
                }
            }
        };
        tokio::select! {
            out = serve => out,
            () = orphaned => {
                tracing::info!("parent process is gone; exiting");
                Ok(())
            }
        }
    })?;
    runtime.shutdown_timeout(Duration::from_millis(200));
    Ok(())
}
