//! `memd doctor`: checks the installation — memd on PATH, memd's hooks in the Claude Code
//! settings, the MCP entry, the token, the worker and its version. Exit 1 when a check fails.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use crate::client::worker::Worker;
use crate::config::{Settings, data_dir_from_env};
use crate::data_dir::DataDir;
use crate::hook::Handler;
use crate::install::ClaudePaths;
use crate::install::hooks_config::{REGISTRATIONS, is_memd_mcp, owned_handler};
use crate::install::json_doc::Doc;

fn on_path(env: &HashMap<String, String>) -> Option<PathBuf> {
    env.get("PATH")?
        .split(':')
        .map(|d| PathBuf::from(d).join("memd"))
        .find(|p| p.is_file())
}

/// The memd handlers registered per event in a settings file.
fn registered(doc: &Doc) -> Vec<(String, Handler)> {
    let mut out = Vec::new();
    if let Some(Doc::Obj(events)) = doc.get("hooks") {
        for (event, groups) in events {
            let Doc::Arr(groups) = groups else { continue };
            for g in groups {
                if let Some(Doc::Arr(hs)) = g.get("hooks") {
                    out.extend(
                        hs.iter()
                            .filter_map(|h| h.get("command").and_then(Doc::as_str).and_then(owned_handler))
                            .map(|h| (event.clone(), h)),
                    );
                }
            }
        }
    }
    out
}

pub fn run(env: &HashMap<String, String>) -> anyhow::Result<ExitCode> {
    let mut ok = true;
    let mut check = |pass: bool, what: String| {
        println!("{} {what}", if pass { "ok  " } else { "FAIL" });
        ok &= pass;
    };
    let path = on_path(env);
    check(
        path.is_some(),
        format!("memd on PATH: {}", path.map_or("not found".into(), |p| p.display().to_string())),
    );
    let paths = ClaudePaths::resolve(env, None);
    let settings = std::fs::read_to_string(&paths.settings).ok().and_then(|t| Doc::parse(&t).ok());
    let found = settings.as_ref().map(registered).unwrap_or_default();
    let missing: Vec<&str> = REGISTRATIONS
        .iter()
        .filter(|r| !found.iter().any(|(e, h)| e == r.event && *h == r.handler))
        .map(|r| r.event)
        .collect();
    check(
        missing.is_empty(),
        format!(
            "hooks in {}: {}",
            paths.settings.display(),
            if missing.is_empty() {
                "all 7 present".into()
            } else {
                format!("missing {}", missing.join(", "))
            }
        ),
    );
    let mcp = std::fs::read_to_string(&paths.mcp).ok().and_then(|t| Doc::parse(&t).ok());
    let has_mcp = mcp
        .as_ref()
        .and_then(|d| d.get("mcpServers"))
        .and_then(|s| s.get("memd"))
        .is_some_and(is_memd_mcp);
    check(has_mcp, format!("MCP server memd in {}", paths.mcp.display()));
    let dir = DataDir::new(data_dir_from_env(env));
    let token = std::fs::read_to_string(dir.token()).ok().map(|t| t.trim().to_string());
    let token_ok = token
        .as_ref()
        .is_some_and(|t| t.len() == 64 && t.bytes().all(|b| b.is_ascii_hexdigit()));
    check(token_ok, format!("token readable at {}", dir.token().display()));
    let worker = Worker::locate(&dir, Settings::load(dir.root.clone(), env).port);
    let health = worker
        .get("/api/health", Duration::from_secs(2))
        .ok()
        .filter(|r| r.status == 200)
        .and_then(|r| r.json());
    let version = health.as_ref().and_then(|h| h["version"].as_str().map(str::to_string));
    check(health.is_some(), format!("worker reachable at {}", worker.addr));
    if let Some(v) = version {
        let cli = env!("CARGO_PKG_VERSION");
        check(v == cli, format!("versions: cli {cli}, worker {v}"));
    }
    Ok(if ok { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
