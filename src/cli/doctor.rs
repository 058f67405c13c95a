//! `memd doctor`: checks an installation the way Claude Code will use it, one line per check with
//! what it means: the hook command the settings actually contain (is that binary there, is it
//! this memd), every hook memd needs, the MCP entry and its permissions, the data dir, the token
//! and the worker, and the Claude Code version when `claude` is on PATH.
//!
//! `ok` and `note` lines pass; `FAIL` lines make the exit code 1. Things that simply have not
//! happened yet (no token, no worker before the first session) are notes: the first hook creates
//! them.

use crate::protocol::paths;
use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use crate::client::spawn::worker_holds_lock;
use crate::client::worker::Worker;
use crate::config::{Settings, data_dir_from_env};
use crate::data_dir::DataDir;
use crate::hook::Handler;
use crate::install::ClaudePaths;
use crate::install::hooks_config::{REGISTRATIONS, is_memd_mcp, owned_handler_doc};
use crate::install::json_doc::Doc;

/// The Claude Code release exec-form hooks (`args`) were verified with.
const TESTED_CLAUDE: &str = "2.1.333";

pub enum Verdict {
    Ok,
    Note,
    Fail,
}

/// The lines printed so far, counted for the summary.
#[derive(Default)]
pub struct Report {
    failed: bool,
    counts: [usize; 3],
}

impl Report {
    pub fn line(&mut self, v: Verdict, what: &str, detail: impl std::fmt::Display) {
        let tag = match v {
            Verdict::Ok => "ok  ",
            Verdict::Note => "note",
            Verdict::Fail => {
                self.failed = true;
                "FAIL"
            }
        };
        self.counts[v as usize] += 1;
        say!("{tag} {what}: {detail}");
    }

    /// The last line: the counts and whether memd is healthy.
    fn summary(&self) -> String {
        let [ok, notes, problems] = self.counts;
        let verdict = match problems {
            0 => "healthy".to_string(),
            1 => "1 problem to fix (the FAIL line says how)".to_string(),
            n => format!("{n} problems to fix (each FAIL line says how)"),
        };
        format!("memd doctor: {ok} ok, {notes} notes, {problems} problems — {verdict}")
    }
}

/// A memd hook registered in a settings file: the event, the handler, the program it runs.
struct Registered {
    event: String,
    handler: Handler,
    program: String,
    matcher: Option<String>,
}

fn program_of(h: &Doc) -> Option<String> {
    let command = h.get("command").and_then(Doc::as_str)?.trim();
    if h.get("args").is_some() {
        return Some(command.to_string());
    }
    let command = command.strip_prefix("exec ").unwrap_or(command).trim_start();
    Some(match command.strip_prefix('"') {
        Some(rest) => rest.split('"').next().unwrap_or("").to_string(),
        None => command.split_whitespace().next().unwrap_or("").to_string(),
    })
}

fn registered(doc: &Doc) -> Vec<Registered> {
    let mut out = Vec::new();
    let Some(Doc::Obj(events)) = doc.get("hooks") else { return out };
    for (event, groups) in events {
        let Doc::Arr(groups) = groups else { continue };
        for g in groups {
            let matcher = g.get("matcher").and_then(Doc::as_str).map(String::from);
            let Some(Doc::Arr(hs)) = g.get("hooks") else { continue };
            for h in hs {
                if let (Some(handler), Some(program)) = (owned_handler_doc(h), program_of(h)) {
                    out.push(Registered {
                        event: event.clone(),
                        handler,
                        program,
                        matcher: matcher.clone(),
                    });
                }
            }
        }
    }
    out
}

fn executable(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn on_path(env: &HashMap<String, String>, name: &str) -> Option<PathBuf> {
    env.get("PATH")?
        .split(':')
        .map(|d| PathBuf::from(d).join(name))
        .find(|p| executable(p))
}

fn read_doc(path: &Path) -> Option<Doc> {
    std::fs::read_to_string(path).ok().and_then(|t| Doc::parse(&t).ok())
}

/// A Claude Code file that exists but does not parse: the problem, and that `memd install` cannot
/// fix it (it refuses to edit a file it cannot read).
fn unreadable(r: &mut Report, what: &str, path: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else { return false };
    match Doc::parse(&text) {
        Ok(_) => false,
        Err(e) => {
            r.line(
                Verdict::Fail,
                what,
                format!(
                    "{} is not valid JSON ({e}): fix it by hand first — `memd install` will not edit a file it cannot read",
                    path.display()
                ),
            );
            true
        }
    }
}

fn hooks(r: &mut Report, paths: &ClaudePaths) {
    if unreadable(r, "hooks", &paths.settings) {
        return;
    }
    let settings = read_doc(&paths.settings);
    let found = settings.as_ref().map(registered).unwrap_or_default();
    let missing: Vec<String> = REGISTRATIONS
        .iter()
        .filter(|reg| !found.iter().any(|f| f.event == reg.event && f.handler == reg.handler))
        .map(|reg| format!("{} ({})", reg.event, reg.handler.name()))
        .collect();
    let where_ = paths.settings.display();
    match (found.is_empty(), missing.is_empty()) {
        (true, _) => r.line(Verdict::Fail, "hooks", format!("none of memd's in {where_}: run `memd install`")),
        (false, false) => r.line(
            Verdict::Fail,
            "hooks",
            format!("missing {} in {where_}: run `memd install`", missing.join(", ")),
        ),
        (false, true) => r.line(Verdict::Ok, "hooks", format!("all {} in {where_}", REGISTRATIONS.len())),
    }
    let mut programs: Vec<&str> = found.iter().map(|f| f.program.as_str()).collect();
    programs.sort_unstable();
    programs.dedup();
    let me = std::env::current_exe().ok();
    let lean = me.as_ref().map(|m| m.with_file_name(crate::install::hooks_config::HOOK_BINARY));
    let same = |a: Option<&Path>, b: &Path| a.is_some_and(|a| std::fs::canonicalize(a).ok() == std::fs::canonicalize(b).ok());
    for p in programs {
        let path = Path::new(p);
        if !executable(path) {
            r.line(
                Verdict::Fail,
                "hook command",
                format!("{p} is not an executable file: reinstall with `memd install`"),
            );
        } else if same(me.as_deref(), path) {
            r.line(Verdict::Ok, "hook command", format!("{p} (this memd)"));
        } else if same(lean.as_deref(), path) {
            r.line(Verdict::Ok, "hook command", format!("{p} (the hook binary beside this memd)"));
        } else {
            r.line(Verdict::Note, "hook command", format!("{p} (another memd binary than this one)"));
        }
    }
    if let Some(f) = found
        .iter()
        .find(|f| f.handler == Handler::Context && f.matcher.as_deref().is_some_and(|m| !m.is_empty() && m != "*"))
    {
        let m = f.matcher.as_deref().unwrap_or("");
        r.line(
            Verdict::Note,
            "SessionStart",
            format!("matcher {m:?} leaves some sources without context; `memd install` removes it"),
        );
    }
}

fn mcp(r: &mut Report, paths: &ClaudePaths) {
    if unreadable(r, "MCP server", &paths.mcp) {
        return;
    }
    let entry = read_doc(&paths.mcp).and_then(|d| d.get("mcpServers").and_then(|s| s.get("memd")).cloned());
    match entry {
        Some(e) if is_memd_mcp(&e) => r.line(Verdict::Ok, "MCP server", format!("memd in {}", paths.mcp.display())),
        Some(_) => r.line(
            Verdict::Fail,
            "MCP server",
            format!("mcpServers.memd in {} is not memd's", paths.mcp.display()),
        ),
        None => r.line(
            Verdict::Fail,
            "MCP server",
            format!("no mcpServers.memd in {}: run `memd install`", paths.mcp.display()),
        ),
    }
    let allowed: Vec<String> = read_doc(&paths.settings)
        .and_then(|d| match d.get("permissions").and_then(|p| p.get("allow")) {
            Some(Doc::Arr(a)) => Some(a.iter().filter_map(Doc::as_str).map(String::from).collect()),
            _ => None,
        })
        .unwrap_or_default();
    let all = crate::mcp::schema::allowed_tools()
        .iter()
        .all(|t| allowed.iter().any(|a| a == t || a == "mcp__memd"));
    match all {
        true => r.line(Verdict::Ok, "permissions", "memd's read and save tools run without asking"),
        false => r.line(
            Verdict::Note,
            "permissions",
            "memd's MCP tools ask before running (`claude -p` denies them): `memd install` allows them",
        ),
    }
}

fn worker(r: &mut Report, env: &HashMap<String, String>) {
    let dir = DataDir::new(data_dir_from_env(env));
    match std::fs::metadata(&dir.root) {
        Err(_) => r.line(
            Verdict::Note,
            "data dir",
            format!("{} not created yet (the first hook or `memd serve` creates it)", dir.root.display()),
        ),
        Ok(m) if m.permissions().mode() & 0o077 != 0 => r.line(
            Verdict::Fail,
            "data dir",
            format!(
                "{} is mode {:o}: others can read memories (chmod 700)",
                dir.root.display(),
                m.permissions().mode() & 0o777
            ),
        ),
        Ok(_) => r.line(Verdict::Ok, "data dir", format!("{} (0700)", dir.root.display())),
    }
    match std::fs::read_to_string(dir.token()) {
        Err(_) => r.line(
            Verdict::Note,
            "token",
            "not created yet (the worker creates it when it first starts)",
        ),
        Ok(t) if t.trim().len() == 64 && t.trim().bytes().all(|b| b.is_ascii_hexdigit()) => {
            r.line(Verdict::Ok, "token", dir.token().display())
        }
        Ok(_) => r.line(
            Verdict::Fail,
            "token",
            format!(
                "{} is not a 64-hex-digit token: delete it and restart the worker",
                dir.token().display()
            ),
        ),
    }
    let w = Worker::locate(&dir, Settings::load(dir.root.clone(), env).port);
    let health = w
        .get(paths::HEALTH, Duration::from_secs(2))
        .ok()
        .filter(|a| a.status == 200)
        .and_then(|a| a.json());
    let up = health.is_some();
    match health {
        Some(h) => {
            let v = h["version"].as_str().unwrap_or("?");
            let cli = env!("CARGO_PKG_VERSION");
            let by = match h["service_manager"].as_str() {
                Some("systemd") => "started by systemd",
                Some("launchd") => "started by launchd",
                _ => "started on demand",
            };
            let ours = w
                .get(paths::STATS, Duration::from_secs(2))
                .is_ok_and(|a| a.status != 401 && a.status != 403);
            match v == cli {
                _ if !ours => r.line(
                    Verdict::Fail,
                    "worker",
                    format!(
                        "a memd answers at {} but rejects this data dir's token: it is another data dir's or user's worker; \
                         stop it, or give this one another port (MEMD_PORT)",
                        w.addr
                    ),
                ),
                true => r.line(Verdict::Ok, "worker", format!("answers at {} (version {v}, {by})", w.addr)),
                false => r.line(
                    Verdict::Fail,
                    "worker",
                    format!("version {v} answers at {}, this memd is {cli}: restart it", w.addr),
                ),
            }
        }
        None if worker_holds_lock(&dir) => r.line(
            Verdict::Fail,
            "worker",
            format!("holds its lock but does not answer at {} (hung?)", w.addr),
        ),
        None if dir.db().is_file() => r.line(
            Verdict::Note,
            "worker",
            "stopped (it starts on the next session or command; `memd serve` starts it now)",
        ),
        None => r.line(Verdict::Note, "worker", "not started yet (starts on first use)"),
    }
    let settings = Settings::load(dir.root.clone(), env);
    if !up {
        super::doctor_checks::port(r, &dir, &settings);
    }
    super::doctor_checks::spool(r, &dir, &settings, up);
    super::doctor_checks::settings_file(r, &dir, &settings);
    super::doctor_checks::observer(r, &settings);
    super::doctor_checks::embedding_model(r, &settings);
    super::doctor_team::team(r, &settings);
    match crate::service::install::read_manifest(&dir.root) {
        Ok(Some(m)) => {
            let missing: Vec<String> = m
                .files
                .iter()
                .filter(|(p, _)| !p.is_file())
                .map(|(p, _)| p.display().to_string())
                .collect();
            match missing.is_empty() {
                true => r.line(
                    Verdict::Ok,
                    "service",
                    format!(
                        "installed for {:?}{}",
                        m.platform,
                        if m.socket { " (socket-activated)" } else { "" }
                    ),
                ),
                false => r.line(
                    Verdict::Fail,
                    "service",
                    format!("installed but missing {} (memd service install)", missing.join(", ")),
                ),
            }
        }
        Ok(None) => r.line(
            Verdict::Note,
            "service",
            "not installed (workers start on demand; `memd service install` for systemd/launchd)",
        ),
        Err(e) => r.line(Verdict::Fail, "service", e.to_string()),
    }
}

fn claude(r: &mut Report, env: &HashMap<String, String>) {
    let Some(bin) = on_path(env, "claude") else {
        r.line(Verdict::Note, "claude", "not on PATH (nothing to check)");
        return;
    };
    let out = std::process::Command::new(&bin).arg("--version").output();
    let version = out
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8_lossy(&o.stdout).split_whitespace().next().map(String::from));
    match version {
        Some(v) => r.line(
            Verdict::Ok,
            "claude",
            format!(
                "{v} at {}; it sends SessionStart (every source), UserPromptSubmit, PreToolUse(Read), PostToolUse, \
                 PostToolUseFailure, Stop and SessionEnd to memd (exec-form hooks tested with {TESTED_CLAUDE}; \
                 an older Claude Code that ignores `args` needs `memd install --shell-form`)",
                bin.display()
            ),
        ),
        None => r.line(Verdict::Note, "claude", format!("{} --version did not answer", bin.display())),
    }
}

fn database(r: &mut Report, env: &HashMap<String, String>, full: bool) {
    use crate::store::integrity::{Integrity, check_file};
    let db = DataDir::new(data_dir_from_env(env)).db();
    if !db.is_file() {
        r.line(
            Verdict::Note,
            "database",
            "not created yet (the worker creates it when it first starts)",
        );
        return;
    }
    for kept in crate::store::replace::damaged_copies(&db) {
        r.line(
            Verdict::Note,
            "database",
            format!("{} is a damaged copy an earlier `memd repair` kept (rows it could not salvage are only there; delete it once you no longer need it)", kept.display()),
        );
    }
    if crate::store::replace::ready(&db).exists() || crate::store::replace::building(&db).exists() {
        r.line(
            Verdict::Fail,
            "database",
            "a repair was interrupted: run `memd repair` again to finish it",
        );
    }
    let what = if full {
        "integrity_check"
    } else {
        "quick_check (`--full` for integrity_check)"
    };
    for line in super::quarantine::doctor_lines(&db) {
        r.line(Verdict::Note, "quarantine", line);
    }
    match check_file(&db, full, Duration::from_secs(5)) {
        Integrity::Ok => r.line(Verdict::Ok, "database", format!("{} passes {what}", db.display())),
        Integrity::Unverified(d) => r.line(Verdict::Note, "database", format!("{d}: run `memd doctor --full`")),
        Integrity::Damaged(d) => r.line(
            Verdict::Fail,
            "database",
            format!("{} is damaged ({d}): stop the worker and run `memd repair`", db.display()),
        ),
    }
}

/// Codex CLI and Gemini CLI, when memd was installed for them (`memd install --host`).
fn other_hosts(r: &mut Report, env: &HashMap<String, String>) {
    use crate::hook::hosts::Host;
    for host in [Host::Codex, Host::Gemini] {
        let Some(i) = crate::install::hosts::inspect(host, env) else {
            continue;
        };
        let what = format!("{} hooks", host.name());
        match i.missing.is_empty() {
            true => r.line(Verdict::Ok, &what, "every event memd needs is registered"),
            false => r.line(
                Verdict::Fail,
                &what,
                format!("missing {}: run `memd install --host {}`", i.missing.join(", "), host.name()),
            ),
        }
        for p in i.programs.iter().filter(|p| !executable(Path::new(p))) {
            r.line(
                Verdict::Fail,
                &what,
                format!("{p} is not an executable file: run `memd install --host {}` again", host.name()),
            );
        }
        let mcp = format!("{} MCP server", host.name());
        match i.mcp {
            true => r.line(Verdict::Ok, &mcp, "memd is registered"),
            false => r.line(
                Verdict::Note,
                &mcp,
                "not registered: the agent cannot search memory (memd install --host without --no-mcp)",
            ),
        }
    }
}

pub fn run(env: &HashMap<String, String>, full: bool) -> anyhow::Result<ExitCode> {
    let mut r = Report::default();
    let paths = ClaudePaths::resolve(env, None);
    hooks(&mut r, &paths);
    mcp(&mut r, &paths);
    other_hosts(&mut r, env);
    database(&mut r, env, full);
    worker(&mut r, env);
    claude(&mut r, env);
    say!("{}", r.summary());
    Ok(if r.failed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}
