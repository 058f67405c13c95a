//! `memd status`: the actor tree from `GET /api/status` and a one-time viewer link; `--json`
//! prints the document as is.
//! Exit 1 with one line when the worker is not running (with `--json`, a JSON document saying so).

use crate::protocol::paths;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;

use crate::actors::provider::ProviderStatus;
use crate::client::worker::Worker;
use crate::config::{Settings, data_dir_from_env};
use crate::data_dir::DataDir;
use crate::status::StatusDoc;

pub fn run(env: &HashMap<String, String>, json: bool) -> anyhow::Result<ExitCode> {
    let dir = DataDir::new(data_dir_from_env(env));
    let settings = Settings::load(dir.root.clone(), env);
    let worker = Worker::locate(&dir, settings.port);
    let answer = match worker.get(paths::STATUS, Duration::from_secs(5)) {
        Ok(r) if r.status == 200 => r,
        Ok(r) => {
            let why = format!("worker at {} answered {} ({})", worker.addr, r.status, r.text().trim());
            return Ok(unavailable(json, "error", &why, &dir));
        }
        Err(_) => {
            let why = format!("worker is not running (nothing answers on {})", worker.addr);
            return Ok(unavailable(json, "not_running", &why, &dir));
        }
    };
    if json {
        let doc: serde_json::Value = answer.json().unwrap_or_default();
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        let doc: StatusDoc = serde_json::from_slice(&answer.body).context("reading the status document")?;
        print!("{}", render(&doc));
        // A one-time viewer link (memd open opens one in the browser).
        if let Ok(r) = worker.post(paths::VIEWER_CODE, b"", Duration::from_secs(5))
            && let Some(url) = r.json().and_then(|v| v["url"].as_str().map(str::to_string))
        {
            println!("viewer: {url} (one-time link, 5 minutes)");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// No status document: one line on stderr, or with `--json` a JSON document a script can read
/// (`{"worker": "not_running", "detail": …, "data_dir": …, "spooled": n}`); exit 1 either way.
fn unavailable(json: bool, state: &str, why: &str, dir: &DataDir) -> ExitCode {
    if json {
        let spooled = crate::ingest::spool::candidates(&dir.spool()).len();
        let doc = serde_json::json!({"worker": state, "detail": why, "data_dir": dir.root, "spooled": spooled});
        println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
    } else {
        eprintln!("memd: {why}");
    }
    ExitCode::from(1)
}

/// An optional figure, `-` when missing.
fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or_else(|| "-".into(), |v| v.to_string())
}

fn last_error(e: Option<&str>) -> String {
    e.map(|e| format!(" last error: {e}")).unwrap_or_default()
}

/// The vector lines: one when vectors are off or have no model, else the sync and the mirror.
fn vectors_lines(d: &StatusDoc) -> String {
    let (v, c) = (&d.vectors, &d.chroma);
    let mut o = match v.state.as_str() {
        "disabled" => "└─ vectors: off (MEMD_EMBEDDINGS=none): keyword search only\n".to_string(),
        "no_model" => "└─ vectors: no_model — keyword search only (memd models install)\n".to_string(),
        state => format!(
            "└─ VectorSync: {state} store {} index {} {}{}{}\n",
            opt(v.store.as_deref()),
            opt(v.index.as_deref()),
            super::reindex::progress_bar(v.backfill.done, v.backfill.total),
            if v.model_loading {
                " (loading the model: searches are keyword-only until it is ready)"
            } else {
                ""
            },
            last_error(v.last_error.as_deref())
        ),
    };
    if c.enabled {
        o.push_str(&format!(
            "   └─ ChromaSync: {} collection {} lag {} last synced {}{}\n",
            c.state,
            c.collection,
            c.lag,
            opt(c.last_synced_at.as_deref()),
            last_error(c.last_error.as_deref())
        ));
    }
    o
}

fn provider_lines(o: &mut String, p: Option<&ProviderStatus>) {
    let Some(p) = p else {
        let _ = writeln!(o, "├─ ProviderActor: - (did not answer)");
        return;
    };
    let _ = writeln!(
        o,
        "├─ ProviderActor: {} ({}){} calls {} failures {} p50 {} ms | tokens today {} / budget {}",
        p.name,
        p.model,
        if p.using_fallback { " [extractive fallback]" } else { "" },
        p.calls_today,
        p.failures_today,
        p.latency_ms.p50,
        p.tokens_today,
        p.budget
    );
    let breakers: Vec<String> = ["failure", "quota", "overflow", "auth"]
        .iter()
        .map(|k| {
            let b = p.breakers.get(*k).cloned().unwrap_or_default();
            let state = b["state"].as_str().unwrap_or("-").to_string();
            let reason = b["reason"].as_str().map(|r| format!(" ({r})")).unwrap_or_default();
            format!("{k} {state}{reason}")
        })
        .collect();
    let _ = writeln!(o, "│  └─ breakers: {}", breakers.join(", "));
}

/// The human view of the status document.
pub fn render(d: &StatusDoc) -> String {
    let mut o = String::new();
    let sup = &d.supervisor;
    let _ = writeln!(
        o,
        "memd {} pid {} port {} up {}s (child restarts {}), started {}",
        d.version,
        d.pid,
        d.port,
        sup.uptime_s,
        sup.child_restarts,
        match sup.service_manager {
            crate::service::Manager::OnDemand => "on demand".to_string(),
            m => format!("by {}", m.label()),
        }
    );
    let _ = writeln!(
        o,
        "RootSupervisor{}",
        sup.dead.as_deref().map(|d| format!(" — DOWN: {d}")).unwrap_or_default()
    );
    for (child, why) in &sup.down {
        let _ = writeln!(o, "├─ {child}: restarting after: {why}");
    }
    let _ = writeln!(o, "├─ SessionManager: {} live, {} failed", d.sessions.live, d.sessions.failed);
    for item in &d.sessions.items {
        let state = serde_json::to_value(item.state)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default();
        let _ = writeln!(
            o,
            "│  ├─ {} [{}] {} queue {} in-flight {} restarts {}{}",
            item.content_session_id,
            item.project,
            state,
            item.queue_depth,
            item.in_flight,
            item.restarts,
            last_error(item.last_error.as_deref())
        );
    }
    provider_lines(&mut o, d.provider.as_ref());
    match &d.store {
        Some(st) => {
            let _ = writeln!(
                o,
                "├─ StoreActor: queue {} batch last {} avg {} max {} | db {} B wal {} B | observations {} pending {}",
                st.write_queue_depth,
                st.batch_size.last,
                st.batch_size.avg,
                st.batch_size.max,
                st.db_bytes,
                st.wal_bytes,
                st.figures.rows.observations,
                st.figures.pending.pending
            );
        }
        None => {
            let _ = writeln!(o, "├─ StoreActor: - (did not answer)");
        }
    }
    let r = d.reaper.clone().unwrap_or_default();
    let _ = writeln!(
        o,
        "├─ OrphanReaper: idle actors stopped {} processes killed {} stale files removed {}",
        r.idle_actors_stopped, r.processes_killed, r.stale_files_removed
    );
    if let Some(a) = &d.alerts {
        let _ = writeln!(
            o,
            "├─ Alerts ({}; {}): sent {} pending {} failed {} skipped {}{}",
            a.format,
            a.types.join(", "),
            a.sent,
            a.pending,
            a.failed,
            a.skipped,
            last_error(a.last_error.as_deref())
        );
    }
    o.push_str(&vectors_lines(d));
    for w in &d.warnings {
        let _ = writeln!(o, "warning: {w}");
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_being_loaded_is_said_on_the_vector_line() {
        let mut d = StatusDoc::default();
        d.vectors.state = "backfilling".into();
        d.vectors.backfill.total = 10;
        assert!(!vectors_lines(&d).contains("loading"));
        d.vectors.model_loading = true;
        let line = vectors_lines(&d);
        assert!(
            line.starts_with("└─ VectorSync: backfilling") && line.contains("loading the model"),
            "{line}"
        );
    }
}
