//! `memd mcp [--platform <name>] [--data-dir <dir>]`: the stdio MCP server (docs/spec/retrieval.md §7).

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;

use super::client_context::CliContext;
use crate::mcp::caller::CallerContext;
use crate::pipeline::platform::normalize_platform_source;

pub fn run(env: &HashMap<String, String>, platform: &str, data_dir: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let ctx = CliContext::load(env, data_dir);
    let logs = (ctx.dir.ensure_root().is_ok() && ctx.dir.ensure_subdir(&ctx.dir.logs()).is_ok()).then(|| ctx.dir.logs());
    // The host shows this process's stderr as errors: only warnings and errors go there.
    crate::logging::init(
        logs,
        "mcp",
        &ctx.settings.log_filter,
        Some(tracing_subscriber::filter::LevelFilter::WARN),
    );
    let identity = ctx.identity();
    tracing::info!(project = %identity.primary, "memd mcp starting");
    let dirs = crate::modes::mode_search_dirs(ctx.settings.modes_dir.as_deref(), &ctx.dir.root);
    let (mode, _) = crate::modes::load_mode(&ctx.settings.mode, &dirs);
    let caller = CallerContext {
        link: ctx.link(),
        mode,
        chain: identity.chain,
        branch: std::env::current_dir()
            .map(|d| crate::freshness::git::branch_of(&d))
            .unwrap_or_default(),
        platform: normalize_platform_source(Some(platform)),
    };
    crate::mcp::serve_stdio(caller)?;
    Ok(ExitCode::SUCCESS)
}
