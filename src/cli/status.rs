//! `memd status`: the actor tree from `GET /api/status`; `--json` prints the document as is.
//! Exit 1 with one line when the worker is not running.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use serde_json::Value;

use crate::client::worker::Worker;
use crate::config::{RawSettings, Settings, data_dir_from_env};
use crate::data_dir::DataDir;

pub fn run(env: &HashMap<String, String>, json: bool) -> anyhow::Result<ExitCode> {
    let dir = DataDir::new(data_dir_from_env(env));
    let (raw, _) = RawSettings::load(&dir.root, env);
    let settings = Settings::resolve(dir.root.clone(), &raw, None);
    let worker = Worker::locate(&dir, settings.port);
    let doc = match worker.get("/api/status", Duration::from_secs(5)) {
        Ok(r) if r.status == 200 => r.json().unwrap_or(Value::Null),
        Ok(r) => {
            eprintln!("memd: worker at {} answered {} ({})", worker.addr, r.status, r.text().trim());
            return Ok(ExitCode::from(1));
        }
        Err(_) => {
            eprintln!("memd: worker is not running (nothing answers on {})", worker.addr);
            return Ok(ExitCode::from(1));
        }
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print!("{}", render(&doc));
    }
    Ok(ExitCode::SUCCESS)
}

fn s(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "-".into(),
        other => other.to_string(),
    }
}

/// The vector lines: one when vectors are off or have no model, else the sync and the mirror.
fn vectors_lines(d: &Value) -> String {
    let v = &d["vectors"];
    let c = &d["chroma"];
    let state = v["state"].as_str().unwrap_or("-");
    let mut o = match state {
        "disabled" => "└─ vectors: off (MEMD_EMBEDDINGS=none): keyword search only\n".to_string(),
        "no_model" => "└─ vectors: no_model — keyword search only (memd models install)\n".to_string(),
        _ => {
            let (done, total) = (
                v["backfill"]["done"].as_i64().unwrap_or(0),
                v["backfill"]["total"].as_i64().unwrap_or(0),
            );
            format!(
                "└─ VectorSync: {state} store {} index {} {}{}\n",
                s(&v["store"]),
                s(&v["index"]),
                super::reindex::progress_bar(done, total),
                v["last_error"].as_str().map(|e| format!(" last error: {e}")).unwrap_or_default()
            )
        }
    };
    if c["enabled"] == true {
        o.push_str(&format!(
            "   └─ ChromaSync: {} collection {} lag {} last synced {}{}\n",
            s(&c["state"]),
            s(&c["collection"]),
            s(&c["lag"]),
            s(&c["last_synced_at"]),
            c["last_error"].as_str().map(|e| format!(" last error: {e}")).unwrap_or_default()
        ));
    }
    o
}

/// The human view of the status document.
pub fn render(d: &Value) -> String {
    let mut o = String::new();
    let sup = &d["supervisor"];
    let _ = writeln!(
        o,
        "memd {} pid {} port {} up {}s (child restarts {})",
        s(&d["version"]),
        s(&d["pid"]),
        s(&d["port"]),
        s(&sup["uptime_s"]),
        s(&sup["child_restarts"])
    );
    let sessions = &d["sessions"];
    let _ = writeln!(o, "RootSupervisor");
    let _ = writeln!(
        o,
        "├─ SessionManager: {} live, {} failed",
        s(&sessions["live"]),
        s(&sessions["failed"])
    );
    for item in sessions["items"].as_array().into_iter().flatten() {
        let _ = writeln!(
            o,
            "│  ├─ {} [{}] {} queue {} in-flight {} restarts {}{}",
            s(&item["content_session_id"]),
            s(&item["project"]),
            s(&item["state"]),
            s(&item["queue_depth"]),
            s(&item["in_flight"]),
            s(&item["restarts"]),
            item["last_error"].as_str().map(|e| format!(" last error: {e}")).unwrap_or_default()
        );
    }
    let p = &d["provider"];
    let _ = writeln!(
        o,
        "├─ ProviderActor: {} ({}){} calls {} failures {} p50 {} ms | tokens today {} / budget {}",
        s(&p["name"]),
        s(&p["model"]),
        if p["using_fallback"] == true {
            " [extractive fallback]"
        } else {
            ""
        },
        s(&p["calls_today"]),
        s(&p["failures_today"]),
        s(&p["latency_ms"]["p50"]),
        s(&p["tokens_today"]),
        s(&p["budget"])
    );
    let breakers: Vec<String> = ["failure", "quota", "overflow", "auth"]
        .iter()
        .map(|k| {
            let b = &p["breakers"][*k];
            let reason = b["reason"].as_str().map(|r| format!(" ({r})")).unwrap_or_default();
            format!("{k} {}{reason}", s(&b["state"]))
        })
        .collect();
    let _ = writeln!(o, "│  └─ breakers: {}", breakers.join(", "));
    let st = &d["store"];
    let _ = writeln!(
        o,
        "├─ StoreActor: queue {} batch last {} avg {} max {} | db {} B wal {} B | observations {} pending {}",
        s(&st["write_queue_depth"]),
        s(&st["batch_size"]["last"]),
        s(&st["batch_size"]["avg"]),
        s(&st["batch_size"]["max"]),
        s(&st["db_bytes"]),
        s(&st["wal_bytes"]),
        s(&st["rows"]["observations"]),
        s(&d["pending"]["pending"])
    );
    let r = &d["reaper"];
    let _ = writeln!(
        o,
        "├─ OrphanReaper: idle actors stopped {} processes killed {} stale files removed {}",
        s(&r["idle_actors_stopped"]),
        s(&r["processes_killed"]),
        s(&r["stale_files_removed"])
    );
    o.push_str(&vectors_lines(d));
    for w in d["warnings"].as_array().into_iter().flatten() {
        let _ = writeln!(o, "warning: {}", s(w));
    }
    o
}
