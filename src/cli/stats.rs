//! `memd stats`: pictures in the terminal (issue 37) — captured calls per day, LLM tokens per day
//! against the budget (local embedding work apart: it costs nothing), the observer's recent call
//! latencies as sparklines, and memories per project as bars — from `GET /api/charts`.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::process::ExitCode;

use clap::Args;
use serde_json::Value;

use super::client_context::{CliContext, call_json};
use crate::mcp::link::with_query;
use crate::protocol::paths;
use crate::text::lines::thousands;

#[derive(Debug, Args)]
pub struct StatsArgs {
    /// How many days back the per-day figures go (1-366).
    #[arg(long, default_value_t = 30)]
    pub days: u32,
    /// Print the figures as JSON.
    #[arg(long)]
    pub json: bool,
}

const BLOCKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
const BAR_WIDTH: usize = 30;

/// One character per value: `·` for 0, else a block scaled to the largest value.
pub fn sparkline(values: &[i64]) -> String {
    let max = values.iter().copied().max().unwrap_or(0).max(1);
    values
        .iter()
        .map(|&v| match v {
            v if v <= 0 => '·',
            v => BLOCKS[((v * 8 - 1) / max).clamp(0, 7) as usize],
        })
        .collect()
}

fn series(doc: &Value, key: &str) -> Vec<(String, i64)> {
    let rows = doc[key].as_array().cloned().unwrap_or_default();
    rows.iter()
        .map(|r| (r["day"].as_str().unwrap_or("").to_string(), r["count"].as_i64().unwrap_or(0)))
        .collect()
}

/// One per-day line: the label, the sparkline, then the largest day and the total.
fn day_line(out: &mut String, label: &str, s: &[(String, i64)], unit: &str) {
    let values: Vec<i64> = s.iter().map(|(_, v)| *v).collect();
    let total: i64 = values.iter().sum();
    let peak = s.iter().max_by_key(|(_, v)| *v).filter(|(_, v)| *v > 0);
    let tail = match peak {
        Some((d, v)) => format!("most {} {unit} ({d}), {} in all", thousands(*v), thousands(total)),
        None => format!("no {unit}"),
    };
    let _ = writeln!(out, "  {label:<20} {}  {tail}", sparkline(&values));
}

/// The whole picture, as `memd stats` prints it.
pub fn render(doc: &Value) -> String {
    let captures = series(doc, "captures_per_day");
    let (first, last) = match (captures.first(), captures.last()) {
        (Some(f), Some(l)) => (f.0.clone(), l.0.clone()),
        _ => (String::new(), String::new()),
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "memd stats — the last {} days ({first} … {last}, one mark per day, · = none)\n",
        captures.len()
    );
    day_line(&mut out, "captured calls", &captures, "calls");
    day_line(&mut out, "LLM tokens", &series(doc, "llm_tokens_per_day"), "tokens");
    day_line(
        &mut out,
        "embedding tokens",
        &series(doc, "embedding_tokens_per_day"),
        "tokens (local, no cost)",
    );
    observer_lines(&mut out, &doc["observer"]);
    use_lines(&mut out, &doc["memory_use"]);
    let _ = writeln!(out, "\nmemories per project");
    let projects = doc["memories_per_project"].as_array().cloned().unwrap_or_default();
    if projects.is_empty() {
        let _ = writeln!(out, "  none yet");
    }
    let max = projects.iter().filter_map(|p| p["count"].as_i64()).max().unwrap_or(1).max(1);
    let width = projects
        .iter()
        .filter_map(|p| p["project"].as_str())
        .map(str::len)
        .max()
        .unwrap_or(0)
        .min(30);
    for p in &projects {
        let (name, n) = (p["project"].as_str().unwrap_or("?"), p["count"].as_i64().unwrap_or(0));
        let bar = "█".repeat((n.max(0) as u64 * BAR_WIDTH as u64).div_ceil(max as u64) as usize);
        let _ = writeln!(out, "  {name:<width$} {bar} {}", thousands(n));
    }
    out
}

/// "injected N, used M" per source, then per project (issue 53).
fn use_lines(out: &mut String, u: &Value) {
    let Ok(u) = serde_json::from_value::<crate::action::injected::MemoryUse>(u.clone()) else {
        return;
    };
    let _ = writeln!(out, "\nmemory use (injected into sessions, used by the agent)");
    if u.sources.is_empty() {
        let _ = writeln!(out, "  nothing injected yet");
        return;
    }
    let _ = writeln!(out, "  all: {}", u.line());
    for (project, sources) in &u.projects {
        let line = crate::action::injected::MemoryUse {
            sources: sources.clone(),
            projects: Default::default(),
        }
        .line();
        let _ = writeln!(out, "  {project}: {line}");
    }
}

fn observer_lines(out: &mut String, o: &Value) {
    if o.is_null() {
        let _ = writeln!(
            out,
            "  observer             (did not answer: figures of today's tokens and latency missing)"
        );
        return;
    }
    let (tokens, budget) = (o["tokens_today"].as_i64().unwrap_or(0), o["budget"].as_i64().unwrap_or(0));
    let budget_text = match budget {
        0 => "no daily budget".to_string(),
        b => format!("{} % of the daily budget of {}", tokens * 100 / b, thousands(b)),
    };
    let (provider, model) = (o["provider"].as_str().unwrap_or("?"), o["model"].as_str().unwrap_or(""));
    let observer = match model.is_empty() || model == provider {
        true => provider.to_string(),
        false => format!("{provider} ({model})"),
    };
    let _ = writeln!(
        out,
        "  {:<20} {} LLM tokens in {} calls ({budget_text}); observer: {observer}",
        "today",
        thousands(tokens),
        o["calls_today"].as_i64().unwrap_or(0),
    );
    let lat = &o["latency_ms"];
    let recent: Vec<i64> = lat["recent"].as_array().into_iter().flatten().filter_map(Value::as_i64).collect();
    if recent.is_empty() {
        let _ = writeln!(out, "  {:<20} no observer calls since the worker started", "observer latency");
    } else {
        let _ = writeln!(
            out,
            "  {:<20} {}  last {} calls: median {} ms, p95 {} ms",
            "observer latency",
            sparkline(&recent),
            recent.len(),
            thousands(lat["p50"].as_i64().unwrap_or(0)),
            thousands(lat["p95"].as_i64().unwrap_or(0))
        );
    }
}

pub fn run(env: &HashMap<String, String>, args: StatsArgs) -> anyhow::Result<ExitCode> {
    let ctx = CliContext::load(env, None);
    let path = with_query(paths::CHARTS, &[("days", args.days.to_string())]);
    let doc = call_json(&ctx.link(), "GET", &path, None)?;
    if args.json {
        say_json!(&doc);
    } else {
        say_part!("{}", render(&doc));
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_sparkline_has_a_mark_per_value_and_scales_to_the_largest() {
        assert_eq!(sparkline(&[0, 1, 4, 8]), "·▁▄█");
        assert_eq!(sparkline(&[0, 0]), "··");
        assert_eq!(sparkline(&[5]), "█");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(12), "12");
    }

    #[test]
    fn the_picture_names_days_totals_the_budget_and_projects() {
        let doc = json!({
            "days": 3,
            "captures_per_day": [{"day": "2026-12-02", "count": 0}, {"day": "2026-12-03", "count": 40}, {"day": "2026-12-04", "count": 10}],
            "llm_tokens_per_day": [{"day": "2026-12-02", "count": 0}, {"day": "2026-12-03", "count": 0}, {"day": "2026-12-04", "count": 0}],
            "embedding_tokens_per_day": [{"day": "2026-12-02", "count": 0}, {"day": "2026-12-03", "count": 900}, {"day": "2026-12-04", "count": 0}],
            "memories_per_project": [{"project": "shop", "count": 20}, {"project": "web", "count": 5}],
            "observer": {"provider": "extractive", "model": "", "tokens_today": 0, "budget": 2000000, "calls_today": 3,
                         "latency_ms": {"p50": 2, "p95": 4, "recent": [1, 2, 4]}},
        });
        let text = render(&doc);
        assert!(text.contains("the last 3 days (2026-12-02 … 2026-12-04"), "{text}");
        assert!(text.contains("·█▂  most 40 calls (2026-12-03), 50 in all"), "{text}");
        assert!(
            text.contains("LLM tokens           ···  no tokens"),
            "zero LLM tokens draw no bar: {text}"
        );
        assert!(text.contains("0 % of the daily budget of 2,000,000"), "{text}");
        assert!(text.contains("last 3 calls: median 2 ms"), "{text}");
        assert!(text.contains(&format!("shop {} 20", "█".repeat(30))), "{text}");
        assert!(text.contains(&format!("web  {} 5", "█".repeat(8))), "{text}");
    }
}
