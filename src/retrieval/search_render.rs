//! The answers of a search (docs/spec/retrieval.md §4.6, docs/spec/api.md §4.3): the compact text index
//! (`#<id>`, `#S<id>`, `#P<id>`, read-token estimates) and the claude-mem-compatible JSON.

use serde_json::{Value, json};

use super::record_kind::{Kind, Record};
use super::records::source_tag;
use super::render::{PROMPT_GLYPH, SUMMARY_GLYPH, TITLE_MAX, cut, thousands, title_or_untitled};
use super::search::{SearchRequest, SearchResult};
use super::search_sql::COUNT_CAP;
use super::zone::{Zone, index_time};
use crate::modes::Mode;
use crate::text::sink::inline;

const CELL_MAX: usize = 100;

fn total_text(n: usize) -> String {
    if n > COUNT_CAP {
        format!("{}+", thousands(COUNT_CAP as i64))
    } else {
        thousands(n as i64)
    }
}

/// Glyph and row title of a record, the title followed by its provenance label and, for a
/// quarantined record, the mark and its reason (issue 36: MCP results and `memd search` say where
/// each item came from and that a quarantined one is not to be trusted).
pub fn glyph_and_title(rec: &Record, mode: &Mode) -> (String, String) {
    let mark = |quarantined: bool, reason: &Option<String>| match quarantined {
        true => format!(" (quarantined: {})", inline(reason.as_deref().unwrap_or("instruction-shaped"))),
        false => String::new(),
    };
    match rec {
        Record::Observation(o) => (
            mode.glyph(&o.obs_type).to_string(),
            format!(
                "{}{}{}",
                title_or_untitled(o.title.as_deref(), TITLE_MAX),
                o.tags(),
                mark(o.quarantined, &o.quarantine_reason)
            ),
        ),
        Record::Summary(s) => (
            SUMMARY_GLYPH.into(),
            format!(
                "{}{}{}",
                title_or_untitled(Some(&s.title()), TITLE_MAX),
                source_tag(&s.provenance),
                mark(s.quarantined, &s.quarantine_reason)
            ),
        ),
        Record::Prompt(p) => (PROMPT_GLYPH.into(), format!("{} [user]", p.title())),
    }
}

/// `(filters: project=…, obs_type=…)` for the no-match line; empty without filters.
fn filters_note(req: &SearchRequest) -> String {
    let f = &req.filters;
    let mut parts = Vec::new();
    if let Some(chain) = &f.scope.projects {
        parts.push(format!("project={}", chain.join(",")));
    }
    if let Some(p) = &f.scope.platform {
        parts.push(format!("platformSource={p}"));
    }
    if req.kinds.len() == 1 {
        let kind = match req.kinds[0] {
            Kind::Observation => "observations",
            Kind::Summary => "sessions",
            Kind::Prompt => "prompts",
        };
        parts.push(format!("type={kind}"));
    }
    for (name, list) in [("obs_type", &f.obs_types), ("concepts", &f.concepts), ("files", &f.files)] {
        if !list.is_empty() {
            parts.push(format!("{name}={}", list.join(",")));
        }
    }
    if f.date_start.is_some() || f.date_end.is_some() {
        parts.push("dates".into());
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" (filters: {})", inline(&parts.join(", ")))
    }
}

/// The text index of a result page.
pub fn render_index(req: &SearchRequest, res: &SearchResult, mode: &Mode, zone: &Zone) -> String {
    if res.records.is_empty() {
        return format!("No results found matching \"{}\"{}", inline(&req.query), filters_note(req));
    }
    let total = res.total();
    let head = if res.filter_only {
        format!("Found {} items", total_text(total))
    } else {
        format!("Found {} results for \"{}\"", total_text(total), inline(&req.query))
    };
    let (a, b) = (req.offset + 1, req.offset + res.records.len());
    let mut lines = vec![
        format!(
            "{head} ({} observations, {} summaries, {} prompts); showing {a}–{b}, {}",
            thousands(res.totals[0] as i64),
            thousands(res.totals[1] as i64),
            thousands(res.totals[2] as i64),
            res.order.describe()
        ),
        "| ID | Time | T | Title | Read |".into(),
        "|---|---|---|---|---|".into(),
    ];
    for rec in &res.records {
        let (glyph, title) = glyph_and_title(rec, mode);
        let title = cut(&title, CELL_MAX).replace('|', "\\|");
        lines.push(format!(
            "| #{} | {} | {glyph} | {title} | ~{} |",
            rec.kind().label(rec.id()),
            index_time(zone, rec.at_ms()),
            rec.read_tokens()
        ));
    }
    let first: Vec<String> = res
        .records
        .iter()
        .take(2)
        .map(|r| format!("\"#{}\"", r.kind().label(r.id())))
        .collect();
    lines.push(format!(
        "Next: timeline(anchor={}) for what surrounds a hit; get_observations([{}]) for full records.",
        first[0],
        first.join(",")
    ));
    if total > req.offset + res.records.len() {
        lines.push(format!("More: offset={}", req.offset + req.limit));
    }
    lines.join("\n")
}

/// `format=json`: rows per kind in result order, `totalResults`, `query`, `degraded`.
pub fn render_json(req: &SearchRequest, res: &SearchResult) -> Value {
    let call = |i: usize| res.matched_calls.get(i).copied().flatten();
    let mark = |v: &mut Value, i: usize| {
        if let Some(c) = call(i) {
            v["matched"] = json!("tool_use");
            v["tool_use_id"] = json!(c);
        }
    };
    let rows = |k: Kind| -> Vec<Value> {
        res.records
            .iter()
            .enumerate()
            .filter(|(_, r)| r.kind() == k)
            .map(|(i, r)| {
                let mut v = match r {
                    Record::Observation(o) => o.to_json(),
                    Record::Summary(s) => s.to_json(),
                    Record::Prompt(p) => p.to_json(),
                };
                mark(&mut v, i);
                v
            })
            .collect()
    };
    json!({
        "observations": rows(Kind::Observation),
        "sessions": rows(Kind::Summary),
        "prompts": rows(Kind::Prompt),
        "ranked": res.records.iter().zip(res.similarity.iter().chain(std::iter::repeat(&None))).enumerate().map(|(i, (r, s))| {
            let mut v = json!({"kind": r.kind().name(), "id": r.id()});
            if let Some(s) = s {
                v["similarity"] = json!((*s * 1000.0).round() / 1000.0);
            }
            mark(&mut v, i);
            v
        }).collect::<Vec<_>>(),
        "totalResults": res.total(),
        "query": req.query,
        "degraded": [],
    })
}
