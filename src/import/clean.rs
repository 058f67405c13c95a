//! Column mapping of docs/spec/storage.md §7.2: every text through the current privacy processing and
//! the stored-field bounds, JSON arrays repaired, types and concepts normalised, times filled.

use crate::pipeline::field_limits as max;
use serde_json::Value;

use super::source::SourceRow;
use crate::observer::xml::normalize_concepts;
use crate::pipeline::limits::bound;
use crate::pipeline::privacy::Privacy;
use crate::pipeline::project::UNKNOWN_PROJECT;
use crate::pipeline::redact::RedactionCounts;
use crate::store::import_insert::{ImportObservation, ImportSummary};
use crate::store::import_rows::{ImportPrompt, ImportSession};

/// The privacy stage plus the running redaction count.
pub struct Cleaner<'a> {
    pub privacy: &'a Privacy,
    pub redactions: RedactionCounts,
}

impl Cleaner<'_> {
    /// Tags stripped, redacted, bounded; empty → None.
    fn text(&mut self, v: Option<String>, max: usize) -> Option<String> {
        let v = v?;
        let c = self.privacy.clean_text(&v);
        self.redactions.merge(&c.redactions);
        (!c.text.is_empty()).then(|| bound(&c.text, max).into_owned())
    }

    /// A JSON array of strings: kept when valid, a bare string → one element, else `[]`; each
    /// element cleaned and bounded.
    fn list(&mut self, v: Option<String>, item_max: usize, count: usize) -> Vec<String> {
        let items: Vec<String> = match v.as_deref().map(str::trim) {
            None | Some("") => Vec::new(),
            Some(s) => match serde_json::from_str::<Value>(s) {
                Ok(Value::Array(a)) => a
                    .into_iter()
                    .filter_map(|x| match x {
                        Value::String(s) => Some(s),
                        Value::Null => None,
                        other => Some(other.to_string()),
                    })
                    .collect(),
                Ok(Value::String(s)) => vec![s],
                Ok(_) => Vec::new(),
                Err(_) if !s.starts_with('[') => vec![s.to_string()],
                Err(_) => Vec::new(),
            },
        };
        items.into_iter().take(count).filter_map(|i| self.text(Some(i), item_max)).collect()
    }

    pub fn session(&mut self, r: &SourceRow) -> Option<ImportSession> {
        let content = r.text("content_session_id").filter(|s| !s.trim().is_empty())?;
        let started = epoch(r, "started_at")?;
        let status = match r.text("status").as_deref().map(str::trim) {
            Some("failed") => "failed",
            _ => "completed",
        };
        Some(ImportSession {
            src_id: r.id,
            content_session_id: content,
            memory_session_id: r
                .text("memory_session_id")
                .filter(|s| !s.trim().is_empty())
                .unwrap_or_else(|| format!("claude-mem-{}", r.id)),
            platform_source: crate::pipeline::platform::normalize_platform_source(r.text("platform_source").as_deref()),
            project: project(r.text("project")),
            custom_title: self.text(r.text("custom_title"), 200),
            user_prompt: self.text(r.text("user_prompt"), 4_000),
            started_at_epoch: started,
            completed_at_epoch: epoch(r, "completed_at"),
            status: status.into(),
        })
    }

    pub fn prompt(&mut self, r: &SourceRow, src_session_id: i64) -> Option<ImportPrompt> {
        let text = self.text(r.text("prompt_text"), 4_000);
        Some(ImportPrompt {
            src_id: r.id,
            src_session_id,
            prompt_number: r.int("prompt_number").filter(|n| *n > 0)?,
            is_private: text.is_none(),
            text: text.unwrap_or_default(),
            created_at_epoch: epoch(r, "created_at")?,
        })
    }

    pub fn observation(&mut self, r: &SourceRow, src_session_id: i64) -> Option<ImportObservation> {
        let obs_type = r.text("type").map(|t| t.trim().to_lowercase()).filter(|t| !t.is_empty());
        let obs_type = obs_type.unwrap_or_else(|| "discovery".into());
        let narrative = r
            .text("narrative")
            .filter(|n| !n.trim().is_empty())
            .or_else(|| r.text("text").filter(|t| !t.trim().is_empty()));
        let concepts = self.list(r.text("concepts"), 64, 10);
        let metadata = r
            .text("metadata")
            .filter(|m| serde_json::from_str::<Value>(m).is_ok_and(|v| v.is_object()));
        let dates = self.list(r.text("reinforcement_dates"), 10, usize::MAX);
        let dates = &dates[dates.len().saturating_sub(10)..];
        Some(ImportObservation {
            src_id: r.id,
            src_session_id,
            project: project(r.text("project")),
            merged_into_project: r.text("merged_into_project").filter(|p| !p.trim().is_empty()),
            title: self.text(r.text("title"), max::TITLE_CHARS),
            subtitle: self.text(r.text("subtitle"), max::SUBTITLE_CHARS),
            narrative: self.text(narrative, max::NARRATIVE_CHARS),
            facts: json(&self.list(r.text("facts"), max::FACTS.item_chars, max::FACTS.count)),
            concepts: json(&normalize_concepts(&concepts, &obs_type)),
            files_read: json(&self.list(r.text("files_read"), max::FILES.item_chars, max::FILES.count)),
            files_modified: json(&self.list(r.text("files_modified"), max::FILES.item_chars, max::FILES.count)),
            obs_type: bound(&obs_type, max::OBS_TYPE_CHARS).into_owned(),
            prompt_number: r.int("prompt_number").filter(|n| *n > 0),
            discovery_tokens: r.int("discovery_tokens").unwrap_or(0).max(0),
            created_at_epoch: epoch(r, "created_at")?,
            agent_id: r.text("agent_id"),
            agent_type: r.text("agent_type"),
            generated_by_model: r.text("generated_by_model"),
            metadata,
            reinforcement_dates: json(dates),
            occurrence_count: r.int("occurrence_count").filter(|n| *n > 0).unwrap_or(1),
        })
    }

    pub fn summary(&mut self, r: &SourceRow, src_session_id: i64) -> Option<ImportSummary> {
        let mut field = |name: &str| self.text(r.text(name), max::SUMMARY_FIELD_CHARS);
        let fields = [
            field("request"),
            field("investigated"),
            field("learned"),
            field("completed"),
            field("next_steps"),
            field("notes"),
        ];
        Some(ImportSummary {
            src_id: r.id,
            src_session_id,
            project: project(r.text("project")),
            merged_into_project: r.text("merged_into_project").filter(|p| !p.trim().is_empty()),
            fields,
            files_read: json(&self.list(r.text("files_read"), 1_024, 100)),
            files_edited: json(&self.list(r.text("files_edited"), 1_024, 100)),
            prompt_number: r.int("prompt_number").filter(|n| *n > 0),
            discovery_tokens: r.int("discovery_tokens").unwrap_or(0).max(0),
            created_at_epoch: epoch(r, "created_at")?,
        })
    }
}

fn project(p: Option<String>) -> String {
    p.map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| UNKNOWN_PROJECT.to_string())
}

fn json(v: &[String]) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "[]".into())
}

/// `<prefix>_epoch`, else parsed from the `<prefix>` ISO text.
fn epoch(r: &SourceRow, prefix: &str) -> Option<i64> {
    r.int(&format!("{prefix}_epoch"))
        .filter(|e| *e > 0)
        .or_else(|| r.text(prefix).as_deref().and_then(parse_iso))
}

/// `YYYY-MM-DD[T| ]HH:MM[:SS[.fff]][Z|±HH:MM]` → epoch ms ([`crate::clock::parse_time`]).
pub fn parse_iso(s: &str) -> Option<i64> {
    crate::clock::parse_time(s).filter(|_| !s.trim().bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_round_trips() {
        for ms in [0, 1_790_870_711_000, 951_782_400_123] {
            assert_eq!(parse_iso(&crate::clock::iso(ms)), Some(ms));
        }
        assert_eq!(parse_iso("2026-10-01 16:05:11"), Some(1_790_870_711_000));
        assert_eq!(parse_iso("garbage"), None);
    }

    #[test]
    fn lists_are_repaired() {
        let privacy = Privacy::default();
        let mut c = Cleaner {
            privacy: &privacy,
            redactions: RedactionCounts::default(),
        };
        assert_eq!(c.list(Some(r#"["a","b"]"#.into()), 10, 10), ["a", "b"]);
        assert_eq!(c.list(Some("plain".into()), 10, 10), ["plain"]);
        assert!(c.list(Some("[broken".into()), 10, 10).is_empty());
        assert!(c.list(None, 10, 10).is_empty());
    }
}
