//! `memd show <id…>`: full records for a person — observations (`12`, `#12`), summaries (`S3`),
//! prompts (`P7`) — from `POST /api/observations/batch`, oldest first, each as a few labelled
//! lines. Stored text passes the terminal rule of `retrieval::sink` line by line (no escape
//! sequence reaches the terminal); ids that are not found are named on stderr.

use crate::retrieval::record_request::RecordsParams;
use std::collections::HashMap;
use std::process::ExitCode;

use anyhow::Context;
use serde_json::Value;

use super::client_context::CliContext;
use crate::protocol::api::with_array_columns;
use crate::protocol::paths;
use crate::store::forget::{RecordKind, RecordRef};
use crate::text::sink::inline;

/// Each paragraph of stored text as one safe line (terminal sink).
fn paragraphs(text: &str) -> Vec<String> {
    text.split('\n').map(inline).filter(|l| !l.is_empty()).collect()
}

/// The strings of a list column (decoded by [`with_array_columns`]).
fn list(v: &Value) -> Vec<String> {
    let items = v.as_array().map(Vec::as_slice).unwrap_or_default();
    items
        .iter()
        .filter_map(Value::as_str)
        .map(inline)
        .filter(|s| !s.is_empty())
        .collect()
}

/// One record for a person.
pub fn render(row: &Value) -> String {
    let row = &with_array_columns(row);
    let s = |k: &str| row.get(k).and_then(Value::as_str).unwrap_or_default();
    let id = row["id"].as_i64().unwrap_or(0);
    let (label, heading) = match s("kind") {
        "summary" => (format!("S{id}"), inline(s("request"))),
        "prompt" => (format!("P{id}"), inline(s("prompt_text"))),
        _ => (format!("#{id}"), inline(s("title"))),
    };
    let when = s("created_at");
    let kind = match s("kind") {
        "summary" | "prompt" => s("kind").to_string(),
        _ => inline(s("type")),
    };
    let mut out = vec![format!("{label}  {kind}  {when}  project {}", inline(s("project")))];
    if !heading.is_empty() {
        out.push(heading);
    }
    for key in [
        "subtitle",
        "narrative",
        "investigated",
        "learned",
        "completed",
        "next_steps",
        "notes",
    ] {
        let text = paragraphs(s(key));
        if text.is_empty() {
            continue;
        }
        let name = if key == "narrative" || key == "subtitle" {
            String::new()
        } else {
            format!("{}: ", key.replace('_', " "))
        };
        out.extend(
            text.iter()
                .enumerate()
                .map(|(i, l)| if i == 0 { format!("  {name}{l}") } else { format!("  {l}") }),
        );
    }
    for (key, name) in [
        ("facts", "facts"),
        ("concepts", "concepts"),
        ("files_read", "read"),
        ("files_modified", "modified"),
    ] {
        let items = list(&row[key]);
        if !items.is_empty() {
            out.push(format!("  {name}: {}", items.join("; ")));
        }
    }
    out.join("\n")
}

pub fn run(env: &HashMap<String, String>, ids: &[String]) -> anyhow::Result<ExitCode> {
    let wanted: Vec<RecordRef> = ids
        .iter()
        .map(|i| RecordRef::parse(i).with_context(|| format!("not an id: {i:?} (use 12, #12, S3 or P7)")))
        .collect::<anyhow::Result<_>>()?;
    let ctx = CliContext::load(env, None);
    let body = RecordsParams::oldest_first(wanted.iter().copied());
    let ans = ctx
        .link()
        .call("POST", paths::OBSERVATIONS_BATCH, Some(&body.to_value()))
        .context("asking the worker")?;
    if ans.status != 200 {
        anyhow::bail!("the worker answered {}: {}", ans.status, ans.detail());
    }
    let Some(Value::Array(rows)) = ans.json() else {
        anyhow::bail!("the worker answered something other than a list of records")
    };
    let found = |r: &RecordRef| {
        let kind = match r.kind {
            RecordKind::Observation => "observation",
            RecordKind::Summary => "summary",
            RecordKind::Prompt => "prompt",
        };
        rows.iter().any(|row| row["kind"] == kind && row["id"].as_i64() == Some(r.id))
    };
    let missing: Vec<String> = wanted.iter().filter(|r| !found(r)).map(|r| r.kind.label(r.id)).collect();
    let shown: Vec<String> = rows.iter().map(render).collect();
    say!("{}", shown.join("\n\n"));
    if !missing.is_empty() {
        say_err!("memd: not found: {}", missing.join(", "));
    }
    Ok(if shown.is_empty() { ExitCode::from(1) } else { ExitCode::SUCCESS })
}
