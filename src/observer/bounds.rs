//! Stored-field bounds and the second redaction pass over observer output (docs/spec/pipeline.md §14.2).

use super::types::BatchOutput;
use crate::observer::types::{ObservationDraft, SummaryDraft};
use crate::pipeline::field_limits::{self as max, ListLimit};
use crate::pipeline::limits::bound;
use crate::pipeline::privacy::Privacy;

fn text(privacy: &Privacy, v: &Option<String>, max: usize) -> Option<String> {
    v.as_deref()
        .map(|s| privacy.redactor().redact(&bound(s, max)).0)
        .filter(|s| !s.trim().is_empty())
}

fn list(privacy: &Privacy, v: &[String], limit: ListLimit) -> Vec<String> {
    v.iter()
        .take(limit.count)
        .map(|s| privacy.redactor().redact(&bound(s, limit.item_chars)).0)
        .collect()
}

pub fn bound_observation(o: ObservationDraft, privacy: &Privacy) -> ObservationDraft {
    ObservationDraft {
        obs_type: bound(&o.obs_type, max::OBS_TYPE_CHARS).into_owned(),
        title: text(privacy, &o.title, max::TITLE_CHARS),
        subtitle: text(privacy, &o.subtitle, max::SUBTITLE_CHARS),
        narrative: text(privacy, &o.narrative, max::NARRATIVE_CHARS),
        facts: list(privacy, &o.facts, max::FACTS),
        concepts: list(privacy, &o.concepts, max::CONCEPTS),
        files_read: list(privacy, &o.files_read, max::FILES),
        files_modified: list(privacy, &o.files_modified, max::FILES),
        relations: list(privacy, &o.relations, max::RELATIONS),
    }
}

pub fn bound_summary(s: SummaryDraft, privacy: &Privacy) -> SummaryDraft {
    SummaryDraft {
        request: text(privacy, &s.request, max::SUMMARY_FIELD_CHARS),
        investigated: text(privacy, &s.investigated, max::SUMMARY_FIELD_CHARS),
        learned: text(privacy, &s.learned, max::SUMMARY_FIELD_CHARS),
        completed: text(privacy, &s.completed, max::SUMMARY_FIELD_CHARS),
        next_steps: text(privacy, &s.next_steps, max::SUMMARY_FIELD_CHARS),
        notes: text(privacy, &s.notes, max::SUMMARY_FIELD_CHARS),
    }
}

/// Bounds and re-redacts everything the observer produced, before hashing and storage.
pub fn finish_output(mut out: BatchOutput, privacy: &Privacy) -> BatchOutput {
    out.observations = out.observations.into_iter().map(|o| bound_observation(o, privacy)).collect();
    out.summary = out.summary.map(|s| bound_summary(s, privacy));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_and_redacts_again() {
        let o = ObservationDraft {
            obs_type: "discovery".into(),
            title: Some("x".repeat(300)),
            narrative: Some("key AKIAIOSFODNN7EXAMPLE".into()),
            facts: vec!["f".into(); 40],
            ..Default::default()
        };
        let b = bound_observation(o, &Privacy::default());
        assert_eq!(b.title.as_ref().unwrap().chars().count(), 200);
        assert!(b.narrative.unwrap().contains("<redacted type='aws_access_key'/>"));
        assert_eq!(b.facts.len(), 30);
    }
}
