//! Value rendering for the observer request: JSON rendered once, §9 field truncation with the
//! `<elided …/>` marker, envelope neutralisation (§8.3), and the observation and summary
//! skeletons (§8.1, §8.4).

use crate::modes::Mode;
use regex::Regex;
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::sync::LazyLock;

const ENVELOPE_TAGS: &str = "observed_from_primary_session|what_happened|occurred_at|working_directory|parameters|outcome|user_request|requested_at|observation|summary|skip_summary|last_assistant_message|recorded_observations";

static ENVELOPE: LazyLock<Regex> = LazyLock::new(|| Regex::new(&format!("(?i)<(/?)({ENVELOPE_TAGS})")).expect("envelope regex"));

/// Renders a value once: strings as their text (a string holding a JSON object or array is
/// pretty-printed as that JSON, never re-encoded), everything else as 2-space pretty JSON.
pub fn render_value(value: &Value) -> String {
    match value {
        Value::String(s) => {
            let t = s.trim_start();
            if (t.starts_with('{') || t.starts_with('['))
                && let Ok(inner @ (Value::Object(_) | Value::Array(_))) = serde_json::from_str::<Value>(s)
            {
                return serde_json::to_string_pretty(&inner).unwrap_or_else(|_| s.clone());
            }
            s.clone()
        }
        other => serde_json::to_string_pretty(other).unwrap_or_default(),
    }
}

/// §9 truncation without neutralisation: unchanged when ≤ `limit` chars, else head
/// (floor(0.6·L)) + `\n... <elided …/> ...\n` + tail (floor(0.3·L)).
pub fn truncate_field(value: &str, limit: usize) -> String {
    match split_oversize(value, limit) {
        None => value.to_owned(),
        Some((head, tail, marker)) => format!("{head}\n... {marker} ...\n{tail}"),
    }
}

/// Replaces the `<` opening (after an optional `/`) any envelope tag name, any case, by `&lt;`.
pub fn neutralise_envelope(text: &str) -> String {
    ENVELOPE.replace_all(text, "&lt;${1}${2}").into_owned()
}

/// Truncates, neutralises head and tail, then inserts the elision marker.
pub(super) fn render_field(value: &str, limit: usize) -> String {
    match split_oversize(value, limit) {
        None => neutralise_envelope(value),
        Some((head, tail, marker)) => format!("{}\n... {marker} ...\n{}", neutralise_envelope(head), neutralise_envelope(tail)),
    }
}

/// Head, tail and marker of an oversize value; `None` when it fits.
fn split_oversize(value: &str, limit: usize) -> Option<(&str, &str, String)> {
    let n = value.chars().count();
    if n <= limit {
        return None;
    }
    let head_chars = limit * 6 / 10;
    let tail_chars = limit * 3 / 10;
    let elided = n - head_chars - tail_chars;
    let head_end = value.char_indices().nth(head_chars).map_or(value.len(), |(i, _)| i);
    let tail_start = value.char_indices().nth(n - tail_chars).map_or(value.len(), |(i, _)| i);
    let marker = format!("<elided chars=\"{elided}\" original_size_chars=\"{n}\" reason=\"oversize\" />");
    Some((&value[..head_end], &value[tail_start..], marker))
}

/// A failed call's outcome: `{"error", "is_interrupt"}` as stored, or built from a bare value.
pub(super) fn failure_outcome(response: &Value) -> Value {
    match response {
        Value::Object(map) if map.contains_key("error") => response.clone(),
        Value::String(text) => json!({"error": text, "is_interrupt": false}),
        other => json!({"error": other.to_string(), "is_interrupt": false}),
    }
}

/// First `max` chars.
pub(super) fn cut_chars(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

/// At most `max` chars; a cut value ends with `…`.
pub(super) fn bound_chars(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

pub(super) fn observation_skeleton(mode: &Mode) -> String {
    let p = |key: &str| mode.prompt(key).trim().to_owned();
    let mut s = String::from("<observation>\n");
    let _ = writeln!(s, "  <type>[ {} ]</type>", mode.type_ids().join(" | "));
    push_comment(&mut s, "  ", &p("type_guidance"));
    let _ = writeln!(s, "  <title>{}</title>", p("xml_title_placeholder"));
    let _ = writeln!(s, "  <subtitle>{}</subtitle>", p("xml_subtitle_placeholder"));
    s.push_str("  <facts>\n");
    for _ in 0..3 {
        let _ = writeln!(s, "    <fact>{}</fact>", p("xml_fact_placeholder"));
    }
    push_comment(&mut s, "    ", &p("field_guidance"));
    s.push_str("  </facts>\n");
    let _ = writeln!(s, "  <narrative>{}</narrative>", p("xml_narrative_placeholder"));
    s.push_str("  <concepts>\n");
    for _ in 0..2 {
        let _ = writeln!(s, "    <concept>{}</concept>", p("xml_concept_placeholder"));
    }
    push_comment(&mut s, "    ", &p("concept_guidance"));
    s.push_str("  </concepts>\n");
    for list in ["files_read", "files_modified"] {
        let _ = writeln!(s, "  <{list}>");
        for _ in 0..2 {
            let _ = writeln!(s, "    <file>{}</file>", p("xml_file_placeholder"));
        }
        let _ = writeln!(s, "  </{list}>");
    }
    // A mode that asks for relations (the code mode) gets the element; others stay as they were.
    let guidance = p("relation_guidance");
    if !guidance.is_empty() {
        s.push_str("  <relations>\n");
        let _ = writeln!(s, "    <relation>{}</relation>", p("xml_relation_placeholder"));
        push_comment(&mut s, "    ", &guidance);
        s.push_str("  </relations>\n");
    }
    s.push_str("</observation>");
    s
}

pub(super) fn summary_skeleton(mode: &Mode) -> String {
    let mut s = String::from("<summary>\n");
    for field in ["request", "investigated", "learned", "completed", "next_steps", "notes"] {
        let text = mode.prompt(&format!("xml_summary_{field}_placeholder")).trim();
        let _ = writeln!(s, "  <{field}>{text}</{field}>");
    }
    s.push_str("</summary>");
    s
}

fn push_comment(out: &mut String, indent: &str, text: &str) {
    if text.is_empty() {
        return;
    }
    let _ = writeln!(out, "{indent}<!--");
    for line in text.lines() {
        let _ = writeln!(out, "{indent}  {line}");
    }
    let _ = writeln!(out, "{indent}-->");
}
