//! Stored-field bounds and the second redaction pass over observer output (docs/spec/pipeline.md §14.2).

use super::types::BatchOutput;
use crate::observer::types::{ObservationDraft, SummaryDraft};
use crate::pipeline::limits::bound;
use crate::pipeline::privacy::Privacy;

fn text(privacy: &Privacy, v: &Option<String>, max: usize) -> Option<String> {
    v.as_deref()
        .map(|s| privacy.redactor().redact(&bound(s, max)).0)
        .filter(|s| !s.trim().is_empty())
}

fn list(privacy: &Privacy, v: &[String], item_max: usize, count: usize) -> Vec<String> {
    v.iter()
        .take(count)
        .map(|s| privacy.redactor().redact(&bound(s, item_max)).0)
        .collect()
}

pub fn bound_observation(o: ObservationDraft, privacy: &Privacy) -> ObservationDraft {
    ObservationDraft {
        obs_type: bound(&o.obs_type, 64).into_owned(),
        title: text(privacy, &o.title, 200),
        subtitle: text(privacy, &o.subtitle, 300),
        narrative: text(privacy, &o.narrative, 8_000),
        facts: list(privacy, &o.facts, 1_000, 30),
        concepts: list(privacy, &o.concepts, 64, 10),
        files_read: list(privacy, &o.files_read, 1_024, 100),
        files_modified: list(privacy, &o.files_modified, 1_024, 100),
        relations: list(privacy, &o.relations, 512, 20),
    }
}

pub fn bound_summary(s: SummaryDraft, privacy: &Privacy) -> SummaryDraft {
    SummaryDraft {
        request: text(privacy, &s.request, 4_000),
        investigated: text(privacy, &s.investigated, 4_000),
        learned: text(privacy, &s.learned, 4_000),
        completed: text(privacy, &s.completed, 4_000),
        next_steps: text(privacy, &s.next_steps, 4_000),
        notes: text(privacy, &s.notes, 4_000),
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
