//! `memd redact --rescan [--dry-run]`: the current rules over every stored row, through the worker
//! when one runs, else in-process under the data-dir lock with a progress line.
//! `memd redact --audit PATH…`: the detectors over recorded transcripts (JSONL): how often each
//! fires, and every finding whose value has a benign shape (UUID, commit hash, path, identifier) —
//! the false positives the rules must not have. Values are shown masked, never in full.

use crate::protocol::paths;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use serde_json::Value;

use super::client_context::CliContext;
use crate::pipeline::secrets::benign_shape;

#[derive(Debug, Default, serde::Serialize)]
pub struct AuditReport {
    pub files: usize,
    pub strings: u64,
    pub bytes: u64,
    pub per_detector: BTreeMap<String, u64>,
    /// (detector, masked value, shape) of each finding with a benign shape.
    pub benign: Vec<(String, String, String)>,
    /// Up to `samples` masked findings per detector, for review.
    pub samples: BTreeMap<String, Vec<String>>,
}

/// `abc…xyz (24)`: enough to review a finding, not enough to use it.
pub fn mask(v: &str) -> String {
    let chars: Vec<char> = v.chars().collect();
    if chars.len() <= 8 {
        return format!("{}… ({})", chars.iter().take(2).collect::<String>(), chars.len());
    }
    let head: String = chars[..3].iter().collect();
    let tail: String = chars[chars.len() - 3..].iter().collect();
    format!("{head}…{tail} ({})", chars.len())
}

fn jsonl_files(p: &Path, out: &mut Vec<PathBuf>) {
    if p.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(p).into_iter().flatten().flatten().map(|e| e.path()).collect();
        entries.sort();
        for e in entries {
            jsonl_files(&e, out);
        }
    } else if p.extension().is_some_and(|x| x == "jsonl") {
        out.push(p.to_path_buf());
    }
}

fn walk(v: &Value, f: &mut impl FnMut(&str)) {
    match v {
        Value::String(s) => f(s),
        Value::Array(items) => items.iter().for_each(|i| walk(i, f)),
        Value::Object(o) => o.iter().for_each(|(k, v)| {
            f(k);
            walk(v, f);
        }),
        _ => {}
    }
}

/// Runs the redactor's detectors over every string and key of every record.
pub fn audit(redactor: &crate::pipeline::redact::Redactor, paths: &[PathBuf], samples: usize) -> anyhow::Result<AuditReport> {
    let mut files = Vec::new();
    for p in paths {
        jsonl_files(p, &mut files);
    }
    let mut r = AuditReport {
        files: files.len(),
        ..Default::default()
    };
    for file in &files {
        let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        for line in text.lines() {
            let Ok(v) = serde_json::from_str::<Value>(line) else { continue };
            walk(&v, &mut |s| {
                r.strings += 1;
                r.bytes += s.len() as u64;
                for (detector, value) in redactor.findings(s) {
                    *r.per_detector.entry(detector.clone()).or_default() += 1;
                    if let Some(shape) = benign_shape(&value) {
                        r.benign.push((detector.clone(), mask(&value), shape.to_string()));
                    }
                    let list = r.samples.entry(detector).or_default();
                    if list.len() < samples {
                        list.push(mask(&value));
                    }
                }
            });
        }
    }
    Ok(r)
}

pub fn run(env: &HashMap<String, String>, paths: &[PathBuf], samples: usize, json: bool) -> anyhow::Result<ExitCode> {
    let ctx = CliContext::load(env, None);
    let privacy = ctx.privacy();
    let report = audit(&privacy.redactor(), paths, samples)?;
    if json {
        say_json!(&report);
        return Ok(ExitCode::SUCCESS);
    }
    say!("{} files, {} strings, {} bytes", report.files, report.strings, report.bytes);
    for (d, n) in &report.per_detector {
        say!(
            "{d:>18}: {n}  e.g. {}",
            report.samples.get(d).map(|s| s.join(", ")).unwrap_or_default()
        );
    }
    for (d, v, shape) in &report.benign {
        say!("benign-shaped finding: {d} {v} looks like a {shape}");
    }
    Ok(if report.benign.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

pub fn rescan(env: &HashMap<String, String>, dry_run: bool, json: bool) -> anyhow::Result<ExitCode> {
    let ctx = CliContext::load(env, None);
    let doc: Value = if ctx.worker_running() {
        let ans = ctx
            .link()
            .call_with_timeout(
                "POST",
                paths::REDACT_RESCAN,
                Some(&serde_json::json!({"dryRun": dry_run})),
                std::time::Duration::from_secs(6 * 3600),
            )
            .context("asking the worker to rescan")?;
        if ans.status != 200 {
            say_err!("memd: {}", ans.detail());
            return Ok(ExitCode::from(1));
        }
        ans.json().unwrap_or_default()
    } else {
        in_process(&ctx, dry_run)?
    };
    if json {
        say_json!(&doc);
        return Ok(ExitCode::SUCCESS);
    }
    let verb = if dry_run { "would change" } else { "changed" };
    say!("scanned {} rows, {verb} {}", doc["scanned"], doc["changed"]);
    for (d, n) in doc["perDetector"].as_object().into_iter().flatten() {
        say!("{d:>18}: {n}");
    }
    Ok(ExitCode::SUCCESS)
}

fn in_process(ctx: &CliContext, dry_run: bool) -> anyhow::Result<Value> {
    use std::io::Write;
    let _lock = ctx.dir.lock().context("taking the data-dir lock")?;
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let opts = crate::store::StoreOptions {
        synchronous_full: ctx.settings.db_synchronous_full,
        readers: 1,
        queue_max: 64,
        group_commit: std::time::Duration::ZERO,
        arrivals: Default::default(),
    };
    let db = ctx.dir.db();
    let privacy = ctx.privacy();
    rt.block_on(async move {
        let store = crate::store::Store::open(&db, &opts, crate::clock::now_ms()).context("opening the database")?;
        let progress = |table: &str, n: u64| {
            let mut err = std::io::stderr();
            let _ = write!(err, "\r{table}: {n} rows scanned   ");
            let _ = err.flush();
        };
        let report = crate::worker::rescan::run(&store, &privacy, dry_run, &progress).await;
        say_err!();
        let _ = store.writer.shutdown().await;
        let r = report.context("rescanning")?;
        Ok(serde_json::json!({"dryRun": r.dry_run, "scanned": r.scanned, "changed": r.changed, "perDetector": r.per_detector}))
    })
}
