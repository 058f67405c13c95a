//! `memd open`: asks the worker (started when needed) for a one-time code and opens the viewer
//! with it (`xdg-open` / `open`), or prints the URL (`--print`, or when no opener works). The URL
//! carries only the one-time code, spent by the first load: never the bearer token.

use crate::protocol::paths;
use std::collections::HashMap;
use std::process::{Command, ExitCode, Stdio};

use anyhow::Context;

use super::client_context::CliContext;

/// A one-time viewer URL from the worker.
pub fn viewer_url(ctx: &CliContext) -> anyhow::Result<String> {
    let ans = ctx
        .link()
        .call("POST", paths::VIEWER_CODE, None)
        .context("asking the worker for a viewer code")?;
    if ans.status != 200 {
        anyhow::bail!("the worker answered {}: {}", ans.status, ans.detail());
    }
    let v = ans.json().unwrap_or_default();
    v["url"].as_str().map(str::to_string).context("the worker's answer has no url")
}

fn launch(url: &str) -> bool {
    let opener = if cfg!(target_os = "macos") { "open" } else { "xdg-open" };
    Command::new(opener)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

pub fn run(env: &HashMap<String, String>, print: bool) -> anyhow::Result<ExitCode> {
    let ctx = CliContext::load(env, None);
    let url = viewer_url(&ctx)?;
    if print || !launch(&url) {
        println!("{url}");
        eprintln!("memd: open this link within 5 minutes; it works once.");
    }
    Ok(ExitCode::SUCCESS)
}
