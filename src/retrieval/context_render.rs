//! Text of the SessionStart context (docs/spec/retrieval.md §1.3–§1.4): pure rendering of selected
//! rows, including the UTF-16 size cap (oldest timeline rows dropped first, then the last-summary
//! block shortened, dropped, and finally the text cut).

use super::records::{Observation, Summary, json_list};
use super::render::{
    Row, SUMMARY_GLYPH, TITLE_MAX, cut, cut_utf16, day_grouped, min_row_len, one_line, thousands, title_or_untitled, utf16_len,
};
use super::zone::{Zone, header_time};
use crate::modes::Mode;

/// The welcome line of a project with no memory yet.
pub const WELCOME: &str = "No memories for this project yet; this session is being recorded.";
const DETAIL_MAX: usize = 1_000;
const SUMMARY_FIELD_MAX: usize = 1_000;
const SUMMARY_FIELD_SHORT: usize = 300;

/// Presentation settings (docs/spec/retrieval.md §9).
#[derive(Debug, Clone, PartialEq)]
pub struct RenderOptions {
    pub full_count: usize,
    pub full_field_facts: bool,
    pub show_stats: bool,
    pub max_chars: usize,
}

/// What was selected for one context.
#[derive(Debug, Clone, Default)]
pub struct ContextData {
    pub primary: String,
    pub observations: Vec<Observation>,
    pub summaries: Vec<Summary>,
    /// The last-summary block, already checked against §1.1's conditions.
    pub last_summary: Option<Summary>,
    /// `auth`, `budget`, `quota`, `failed rows: <n>`.
    pub degraded: Option<String>,
}

/// The text and how many rows of each kind it shows.
#[derive(Debug, Clone, PartialEq)]
pub struct RenderedContext {
    pub text: String,
    pub observations: usize,
    pub summaries: usize,
    /// The observations the text shows (issue 53: recorded as injected into the session).
    pub observation_ids: Vec<i64>,
}

enum Entry<'a> {
    Obs(&'a Observation),
    Sum(&'a Summary),
}

impl Entry<'_> {
    fn key(&self) -> (i64, u8, i64) {
        match self {
            Entry::Obs(o) => (o.created_at_epoch, 0, o.id),
            Entry::Sum(s) => (s.created_at_epoch, 1, s.id),
        }
    }
}

fn legend(mode: &Mode) -> String {
    let mut s = format!("Legend: {SUMMARY_GLYPH}summary");
    for t in &mode.observation_types {
        s.push(' ');
        s.push_str(mode.glyph(&t.id));
        s.push_str(&t.id);
    }
    s
}

fn summary_block(s: &Summary, field_max: usize) -> Vec<String> {
    let mut lines = vec![format!("Last session summary S{}:", s.id)];
    for (label, field) in [
        ("Investigated", &s.investigated),
        ("Learned", &s.learned),
        ("Completed", &s.completed),
        ("Next Steps", &s.next_steps),
    ] {
        if let Some(text) = field.as_deref().map(|t| one_line(t, field_max)).filter(|t| !t.is_empty()) {
            lines.push(format!("**{label}**: {text}"));
        }
    }
    lines
}

/// Whether a summary can fill the last-summary block (at least one of its four fields).
pub fn has_summary_fields(s: &Summary) -> bool {
    [&s.investigated, &s.learned, &s.completed, &s.next_steps]
        .iter()
        .any(|f| f.as_deref().is_some_and(|t| !t.trim().is_empty()))
}

fn row_of(e: &Entry, mode: &Mode, full: &[i64], facts: bool) -> Row {
    match e {
        Entry::Obs(o) => {
            let detail = full.contains(&o.id).then(|| {
                let text = if facts {
                    json_list(&o.facts).join("; ")
                } else {
                    o.narrative.clone().unwrap_or_default()
                };
                one_line(&text, DETAIL_MAX)
            });
            Row {
                at_ms: o.created_at_epoch,
                id: o.id.to_string(),
                glyph: mode.glyph(&o.obs_type).to_string(),
                title: title_or_untitled(o.title.as_deref(), TITLE_MAX),
                suffix: o.tags(),
                detail,
            }
        }
        Entry::Sum(s) => Row {
            at_ms: s.created_at_epoch,
            id: format!("S{}", s.id),
            glyph: SUMMARY_GLYPH.into(),
            title: cut(&super::render::collapse(&s.title()), TITLE_MAX),
            suffix: super::records::source_tag(&s.provenance),
            detail: None,
        },
    }
}

struct Parts<'a> {
    head: Vec<String>,
    rows: Vec<Row>,
    entries: Vec<Entry<'a>>,
    last: Option<&'a Summary>,
    note: Option<String>,
}

/// Renders the context of `data` at `now_ms`.
pub fn render_context(data: &ContextData, mode: &Mode, opts: &RenderOptions, zone: &Zone, now_ms: i64) -> RenderedContext {
    let header = format!(
        "# [{}] recent context, {}",
        crate::text::sink::inline(&data.primary),
        header_time(zone, now_ms)
    );
    if data.observations.is_empty() && data.summaries.is_empty() {
        let text = cut_utf16(&format!("{header}\n{WELCOME}"), opts.max_chars);
        return RenderedContext {
            text,
            observations: 0,
            summaries: 0,
            observation_ids: Vec::new(),
        };
    }
    let mut entries: Vec<Entry> = data
        .observations
        .iter()
        .map(Entry::Obs)
        .chain(data.summaries.iter().map(Entry::Sum))
        .collect();
    entries.sort_by_key(Entry::key);
    let mut newest: Vec<&Observation> = data.observations.iter().collect();
    newest.sort_by_key(|o| std::cmp::Reverse((o.created_at_epoch, o.id)));
    let full: Vec<i64> = newest.iter().take(opts.full_count).map(|o| o.id).collect();
    let rows: Vec<Row> = entries.iter().map(|e| row_of(e, mode, &full, opts.full_field_facts)).collect();
    let parts = Parts {
        head: vec![
            header,
            format!("Mode: {} ({})", mode.name, mode.id),
            String::new(),
            legend(mode),
            "Format: ID TIME TYPE TITLE — summaries are S<id>".into(),
            "Fetch details: get_observations([IDs]) | Search: search(query) | Around an item: timeline(anchor=ID)".into(),
        ],
        rows,
        entries,
        last: data.last_summary.as_ref(),
        note: data
            .degraded
            .as_ref()
            .map(|r| format!("Note: memd observer degraded ({r}); see memd status.")),
    };
    // Rows whose shortest form alone overflows the cap can never be kept: skip them at once.
    let mut start = 0;
    let mut tail: usize = parts.rows.iter().map(min_row_len).sum();
    while start < parts.rows.len() && tail > opts.max_chars {
        tail -= min_row_len(&parts.rows[start]);
        start += 1;
    }
    loop {
        let text = assemble(&parts, start, opts, zone, SUMMARY_FIELD_MAX, true);
        if utf16_len(&text) <= opts.max_chars || start >= parts.rows.len() {
            break;
        }
        start += 1;
    }
    let mut text = assemble(&parts, start, opts, zone, SUMMARY_FIELD_MAX, true);
    if utf16_len(&text) > opts.max_chars {
        text = assemble(&parts, start, opts, zone, SUMMARY_FIELD_SHORT, true);
    }
    if utf16_len(&text) > opts.max_chars {
        text = assemble(&parts, start, opts, zone, SUMMARY_FIELD_SHORT, false);
    }
    let text = cut_utf16(&text, opts.max_chars);
    let kept = &parts.entries[start..];
    RenderedContext {
        text,
        observations: kept.iter().filter(|e| matches!(e, Entry::Obs(_))).count(),
        summaries: kept.iter().filter(|e| matches!(e, Entry::Sum(_))).count(),
        observation_ids: kept
            .iter()
            .filter_map(|e| match e {
                Entry::Obs(o) => Some(o.id),
                Entry::Sum(_) => None,
            })
            .collect(),
    }
}

fn assemble(p: &Parts, start: usize, opts: &RenderOptions, zone: &Zone, field_max: usize, with_last: bool) -> String {
    let kept_obs: Vec<&Observation> = p.entries[start..]
        .iter()
        .filter_map(|e| match e {
            Entry::Obs(o) => Some(*o),
            Entry::Sum(_) => None,
        })
        .collect();
    let read: i64 = kept_obs.iter().map(|o| o.read_tokens()).sum();
    let work: i64 = kept_obs.iter().map(|o| o.discovery_tokens).sum();
    let mut blocks: Vec<Vec<String>> = vec![p.head.clone()];
    let mut stats = Vec::new();
    if opts.show_stats {
        let mut line = format!("Stats: {} obs ({}t read)", kept_obs.len(), thousands(read));
        if work > 0 {
            let pct = if work > read {
                (100.0 * (work - read) as f64 / work as f64).round() as i64
            } else {
                0
            };
            line.push_str(&format!(" | {}t work | {pct}% savings", thousands(work)));
        }
        stats.push(line);
    }
    stats.extend(p.note.clone());
    blocks.push(stats);
    blocks.push(day_grouped(&p.rows[start..], zone));
    if let (true, Some(s)) = (with_last, p.last) {
        blocks.push(summary_block(s, field_max));
    }
    if opts.show_stats && work > read {
        let k = (work as f64 / 1000.0).round() as i64;
        blocks.push(vec![format!(
            "Access {}k tokens of past work via get_observations([IDs]) or search.",
            thousands(k)
        )]);
    }
    blocks
        .into_iter()
        .filter(|b| !b.is_empty())
        .map(|b| b.join("\n"))
        .collect::<Vec<_>>()
        .join("\n\n")
}

#[cfg(test)]
mod tests;
