//! Correcting an observation (docs/spec/viewer.md §4): a new title, facts or narrative from the
//! viewer (`PATCH /api/observation/:id`). The new text passes the privacy pipeline like any saved
//! text; the full-text index follows by trigger, and the row's embeddings are queued again so
//! semantic search sees the correction. The content hash stays: it names what was first stored.

use super::Services;
use super::memory::MemoryError;
use crate::backend::ObservationEdit;
use crate::pipeline::limits::bound;

use crate::pipeline::field_limits::{FACTS, NARRATIVE_CHARS as NARRATIVE_MAX_CHARS, TITLE_CHARS as TITLE_MAX_CHARS};

const FACTS_MAX: usize = FACTS.count;
const FACT_MAX_CHARS: usize = FACTS.item_chars;

/// The fields to replace (None = keep).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Edit {
    pub title: Option<String>,
    pub facts: Option<Vec<String>>,
    pub narrative: Option<String>,
}

/// What is wrong with an edit (HTTP 400, the message as given).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    #[error("nothing to change: give title, facts or narrative")]
    Nothing,
    #[error("title must not be empty")]
    EmptyTitle,
    #[error("title exceeds {TITLE_MAX_CHARS} characters")]
    LongTitle,
    #[error("narrative exceeds {NARRATIVE_MAX_CHARS} characters")]
    LongNarrative,
    #[error("at most {FACTS_MAX} facts")]
    TooManyFacts,
    #[error("a fact exceeds {FACT_MAX_CHARS} characters")]
    LongFact,
}

impl Edit {
    /// The request's problem, if any.
    pub fn check(&self) -> Result<(), EditError> {
        if self.title.is_none() && self.facts.is_none() && self.narrative.is_none() {
            return Err(EditError::Nothing);
        }
        if let Some(t) = &self.title {
            if t.trim().is_empty() {
                return Err(EditError::EmptyTitle);
            }
            if t.chars().count() > TITLE_MAX_CHARS {
                return Err(EditError::LongTitle);
            }
        }
        if self.narrative.as_ref().is_some_and(|n| n.chars().count() > NARRATIVE_MAX_CHARS) {
            return Err(EditError::LongNarrative);
        }
        if let Some(f) = &self.facts {
            if f.len() > FACTS_MAX {
                return Err(EditError::TooManyFacts);
            }
            if f.iter().any(|x| x.chars().count() > FACT_MAX_CHARS) {
                return Err(EditError::LongFact);
            }
        }
        Ok(())
    }
}

/// Applies `edit` to observation `id` (404 when there is none).
pub async fn edit_observation(svc: &Services, id: i64, edit: Edit) -> Result<(), MemoryError> {
    edit.check().map_err(|e| MemoryError::Invalid(e.to_string()))?;
    let pipeline = &svc.ingest.pipeline;
    let privacy = &pipeline.privacy;
    let mut counts = crate::pipeline::redact::RedactionCounts::default();
    let mut clean = |s: &str| {
        let c = privacy.clean_text(s);
        counts.merge(&c.redactions);
        c.text
    };
    let title = edit.title.as_deref().map(|t| bound(&clean(t.trim()), TITLE_MAX_CHARS).into_owned());
    let narrative = edit.narrative.as_deref().map(&mut clean);
    let facts = edit.facts.as_ref().map(|f| {
        let kept: Vec<String> = f.iter().map(|x| clean(x.trim())).filter(|x| !x.is_empty()).collect();
        serde_json::to_string(&kept).unwrap_or_else(|_| "[]".into())
    });
    pipeline.count(&counts);
    let edit = ObservationEdit { title, narrative, facts };
    let found = svc.storage.edit_observation(id, edit).await?;
    if !found {
        return Err(MemoryError::NotFound(format!("Observation #{id} not found")));
    }
    tracing::info!(observation_id = id, "observation edited");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_are_checked() {
        assert!(Edit::default().check().is_err());
        let t = |s: &str| Edit {
            title: Some(s.into()),
            ..Edit::default()
        };
        assert!(t("  ").check().is_err());
        assert!(t(&"x".repeat(201)).check().is_err());
        assert!(t("fine").check().is_ok());
        let facts = Edit {
            facts: Some(vec!["a".into(); 51]),
            ..Edit::default()
        };
        assert!(facts.check().is_err());
        let narrative = Edit {
            narrative: Some("n".repeat(8_001)),
            ..Edit::default()
        };
        assert!(narrative.check().is_err());
    }
}
