//! The checks `memd doctor` gained in issue 37: which observer runs and what it costs, the
//! embedding model, memd's own settings file, the spool backlog, and who holds the worker's port
//! when it does not answer. Each gives a verdict and, for a problem, the fix.

use super::doctor::{Report, Verdict};
use crate::client::worker::{PortHolder, who_holds};
use crate::config::{EmbeddingsMode, Settings};
use crate::data_dir::DataDir;
use crate::providers::{ProviderKind, select};

/// What an LLM observer made of real work: `memd replay --observer-cost` over the 15 recorded
/// Claude Code sessions of the project's data set, default batch settings (2026-12-04; the figures
/// and the command are in docs/measurements.md). Input tokens estimated as characters / 4.
const MEASURED_COST: &str = "on 15 recorded sessions that was a median of 7 requests per session, \
     about 1,500 input tokens each plus the reply (`memd replay --observer-cost <transcripts>` \
     estimates it for your own sessions)";

/// What the observer costs, in one line: which one runs for this user and how to change it.
pub fn observer_line(settings: &Settings) -> (Verdict, String) {
    let (backend, _) = select(&settings.observer, settings.path_env.as_deref(), &settings.data_dir);
    let budget = match settings.daily_token_budget {
        0 => "no daily token budget (MEMD_DAILY_TOKEN_BUDGET=0)".to_string(),
        n => format!("a daily budget of {n} tokens (MEMD_DAILY_TOKEN_BUDGET)"),
    };
    let text = match backend.kind() {
        ProviderKind::Extractive => {
            "the deterministic extractor: no model calls, no cost (set ANTHROPIC_API_KEY or MEMD_PROVIDER for LLM observations)".to_string()
        }
        ProviderKind::ClaudeCli => format!(
            "`claude -p` with {} on your own Claude plan (found `claude` on PATH): one call per batch of tool calls, \
             counted against your plan's usage ({MEASURED_COST}), within {budget}; MEMD_PROVIDER=extractive makes no calls",
            backend.model()
        ),
        k => format!(
            "the {} API with {}, billed per token to your key ({MEASURED_COST}), within {budget}; MEMD_PROVIDER=extractive makes no calls",
            k.name(),
            backend.model()
        ),
    };
    (Verdict::Note, text)
}

pub fn observer(r: &mut Report, settings: &Settings) {
    let (v, text) = observer_line(settings);
    r.line(v, "observer", text);
}

pub fn embedding_model(r: &mut Report, settings: &Settings) {
    let v = &settings.vectors;
    if v.mode == EmbeddingsMode::Off {
        r.line(Verdict::Note, "embedding model", "off (MEMD_EMBEDDINGS=none): keyword search only");
        return;
    }
    match crate::vectors::embedder::model_present(&v.model_dir) {
        true => r.line(Verdict::Ok, "embedding model", v.model_dir.display()),
        false => r.line(
            Verdict::Note,
            "embedding model",
            format!(
                "none at {}: search is keyword-only until `memd models install` puts it there",
                v.model_dir.display()
            ),
        ),
    }
}

/// memd's `<data>/settings.json`: readable JSON, and what resolving it warned about.
pub fn settings_file(r: &mut Report, dir: &DataDir, settings: &Settings) {
    let path = dir.root.join("settings.json");
    match std::fs::read_to_string(&path) {
        Err(_) => r.line(Verdict::Ok, "memd settings", "no settings.json (defaults and the environment)"),
        Ok(t) if serde_json::from_str::<serde_json::Value>(&t).is_err() => r.line(
            Verdict::Fail,
            "memd settings",
            format!(
                "{} is not valid JSON: fix it by hand (memd uses the defaults meanwhile)",
                path.display()
            ),
        ),
        Ok(_) => r.line(Verdict::Ok, "memd settings", path.display()),
    }
    for w in &settings.warnings {
        r.line(Verdict::Note, "memd settings", w);
    }
}

/// Spool files waiting: a note (the worker takes them), a problem past the hooks' drop limit.
pub fn spool(r: &mut Report, dir: &DataDir, settings: &Settings, worker_up: bool) {
    let n = crate::ingest::spool::candidates(&dir.spool()).len() as u64;
    let max = settings.hook.spool_max_files;
    match (n, worker_up) {
        (0, _) => r.line(Verdict::Ok, "spool", "empty"),
        (n, _) if n >= max => r.line(
            Verdict::Fail,
            "spool",
            format!(
                "{n} events wait in {}: hooks now drop new ones; start the worker (`memd serve`)",
                dir.spool().display()
            ),
        ),
        (n, true) => r.line(
            Verdict::Note,
            "spool",
            format!("{n} events wait; the worker ingests them within seconds"),
        ),
        (n, false) => r.line(
            Verdict::Note,
            "spool",
            format!(
                "{n} hook events wait in {}; they are ingested when the worker starts (`memd serve`, or the next session starts it)",
                dir.spool().display()
            ),
        ),
    }
}

/// When no worker of ours answers: who holds the port it would use. A taken default port is a
/// note (the worker then picks a free one); a taken `MEMD_PORT` is a problem.
pub fn port(r: &mut Report, dir: &DataDir, settings: &Settings) {
    let port = settings.port;
    let token = std::fs::read_to_string(dir.token()).ok();
    let holder = who_holds(port, token.as_deref());
    match (holder.explain(port), settings.port_explicit) {
        (Some(line), true) => r.line(Verdict::Fail, "port", line),
        (Some(line), false) => r.line(
            Verdict::Note,
            "port",
            format!(
                "default {}; the worker will listen on a free port instead",
                line.split(':').next().unwrap_or(&line)
            ),
        ),
        (None, _) if holder == PortHolder::Nobody => r.line(Verdict::Ok, "port", format!("{port} is free for the worker")),
        (None, _) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::RawSettings;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_observer_line_names_the_claude_plan_and_the_measured_cost_or_no_cost() {
        let dir = tempfile::tempdir().unwrap();
        let claude = dir.path().join("claude");
        std::fs::write(&claude, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&claude, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut s = Settings::resolve(dir.path().to_path_buf(), &RawSettings::default(), None);
        s.path_env = Some(dir.path().display().to_string());
        let (_, line) = observer_line(&s);
        assert!(line.contains("`claude -p`") && line.contains("your own Claude plan"), "{line}");
        assert!(
            line.contains("a median of 7 requests per session") && line.contains("MEMD_PROVIDER=extractive"),
            "{line}"
        );
        s.observer.provider = "extractive".into();
        let (_, line) = observer_line(&s);
        assert!(line.contains("no model calls, no cost"), "{line}");
    }
}
