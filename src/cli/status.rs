//! `memd status`: a summary first (memories, work waiting, today's tokens against the budget, the
//! database with its WAL, problems), then the actor tree from `GET /api/status`; `--json` prints
//! the document as is. It mints no viewer code: `memd open` does.
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
        say_json!(&doc);
    } else {
        let doc: StatusDoc = serde_json::from_slice(&answer.body).context("reading the status document")?;
        say_part!("{}", summary(&doc));
        say!();
        say_part!("{}", render(&doc));
        say!("viewer: `memd open` (a one-time link in your browser)");
    }
    Ok(ExitCode::SUCCESS)
}

/// No status document: one line on stderr, or with `--json` a JSON document a script can read
/// (`{"worker": "not_running", "detail": …, "data_dir": …, "spooled": n}`); exit 1 either way.
fn unavailable(json: bool, state: &str, why: &str, dir: &DataDir) -> ExitCode {
    if json {
        let spooled = crate::ingest::spool::candidates(&dir.spool()).len();
        let doc = serde_json::json!({"worker": state, "detail": why, "data_dir": dir.root, "spooled": spooled});
        say_json_text!(&serde_json::to_string_pretty(&doc).unwrap_or_default());
    } else {
        say_err!("memd: {why}");
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

/// `1.2 MB`, `593 KB`, `12 B`.
pub fn human_bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 30 => format!("{:.1} GB", n as f64 / (1u64 << 30) as f64),
        n if n >= 1 << 20 => format!("{:.1} MB", n as f64 / (1u64 << 20) as f64),
        n if n >= 1 << 10 => format!("{:.0} KB", n as f64 / 1024.0),
        n => format!("{n} B"),
    }
}

/// What a person wants first (issue 37): memories, work waiting, today's tokens against the
/// budget, the database's size on disk, and the problems — then the details.
pub fn summary(d: &StatusDoc) -> String {
    let mut o = String::new();
    let (memories, pending, failed, db) = match &d.store {
        Some(st) => (
            st.figures.rows.observations,
            st.figures.pending.pending + st.figures.pending.processing,
            st.figures.pending.failed,
            human_bytes(st.db_bytes + st.wal_bytes),
        ),
        None => (0, 0, 0, "?".into()),
    };
    let tokens = match &d.provider {
        Some(p) if p.budget > 0 => format!("{} of {} LLM tokens today ({})", p.tokens_today, p.budget, p.name),
        Some(p) => format!("{} LLM tokens today ({}, no budget)", p.tokens_today, p.name),
        None => "LLM tokens: -".into(),
    };
    let _ = writeln!(
        o,
        "memd {}: {memories} memories, {pending} tool calls waiting for the observer, {tokens}, database {db} on disk",
        d.version
    );
    let mut problems: Vec<String> = d.warnings.clone();
    if failed > 0 {
        problems.push(format!("{failed} batches failed (`memd retry` requeues them)"));
    }
    problems.extend(d.supervisor.down.iter().map(|(c, why)| format!("{c} is restarting: {why}")));
    problems.extend(d.supervisor.dead.iter().map(|c| format!("{c} is down")));
    problems.extend(
        d.jobs
            .iter()
            .filter(|(_, j)| j.failing >= 3)
            .map(|(name, j)| format!("{name} failed {} times in a row:{}", j.failing, last_error(j.last_error.as_deref()))),
    );
    match problems.is_empty() {
        true => {
            let _ = writeln!(o, "problems: none");
        }
        false => {
            for p in problems {
                let _ = writeln!(o, "problem: {p}");
            }
        }
    }
    o
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
                "├─ StoreActor: queue {} batch last {} avg {} max {} | db {} + wal {} | observations {} pending {}",
                st.write_queue_depth,
                st.batch_size.last,
                st.batch_size.avg,
                st.batch_size.max,
                human_bytes(st.db_bytes),
                human_bytes(st.wal_bytes),
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
    let used = d.memory_use.line();
    let _ = writeln!(
        o,
        "├─ Memory use: {}",
        if used.is_empty() {
            "nothing injected yet".to_string()
        } else {
            used
        }
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
    o.push_str(&job_lines(d));
    o.push_str(&vectors_lines(d));
    o
}

/// A line per periodic job: off, or its period, its passes and its last result or failure.
fn job_lines(d: &StatusDoc) -> String {
    let mut o = format!("├─ jobs: {} periodic\n", d.jobs.len());
    for (name, j) in &d.jobs {
        let state = match (j.on, j.failing) {
            (false, _) => "off".to_string(),
            (true, 0) => format!(
                "every {}, {} passes{}",
                human_duration(j.every_ms),
                j.passes,
                j.last_did.as_deref().map(|w| format!(", last: {w}")).unwrap_or_default()
            ),
            (true, n) => format!(
                "every {}, failing ({n} in a row){}",
                human_duration(j.every_ms),
                last_error(j.last_error.as_deref())
            ),
        };
        let _ = writeln!(o, "│  ├─ {name}: {state}");
    }
    o
}

fn human_duration(ms: u64) -> String {
    match ms {
        ms if ms >= 3_600_000 && ms % 3_600_000 == 0 => format!("{} h", ms / 3_600_000),
        ms if ms >= 60_000 && ms % 60_000 == 0 => format!("{} min", ms / 60_000),
        ms if ms >= 1_000 => format!("{} s", ms / 1_000),
        ms => format!("{ms} ms"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_job_has_a_line_and_a_failing_one_is_a_problem() {
        use crate::worker::jobs::JobStatus;
        let mut d = StatusDoc::default();
        let retention = JobStatus {
            on: true,
            every_ms: 86_400_000,
            passes: 2,
            last_did: Some("5 rows deleted".into()),
            ..Default::default()
        };
        let backups = JobStatus {
            on: true,
            every_ms: 3_600_000,
            failing: 3,
            last_error: Some("disk full".into()),
            ..Default::default()
        };
        d.jobs.insert("retention".into(), retention);
        d.jobs.insert("backups".into(), backups);
        d.jobs.insert("alerts".into(), JobStatus::default());
        let lines = job_lines(&d);
        assert!(
            lines.contains("├─ retention: every 24 h, 2 passes, last: 5 rows deleted"),
            "{lines}"
        );
        assert!(
            lines.contains("├─ backups: every 1 h, failing (3 in a row) last error: disk full"),
            "{lines}"
        );
        assert!(lines.contains("├─ alerts: off"), "{lines}");
        assert!(summary(&d).contains("problem: backups failed 3 times in a row: last error: disk full"));
    }

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
