//! Memory management use-cases (docs/spec/api.md §5): save an explicit memory, forget one record,
//! forget in bulk. Every write goes through the store writer; saved text passes the privacy
//! pipeline (docs/spec/pipeline.md §17). Called by the HTTP routes.

use serde_json::{Map, Value};

use super::Services;
use crate::backend::Forgotten;
use crate::clock::now_ms;
use crate::observer::xml::normalize_concepts;
use crate::pipeline::limits::bound;
use crate::pipeline::project::UNKNOWN_PROJECT;
use crate::store::StoreError;
use crate::store::forget::{ForgetCounts, ForgetSelector, RecordKind, RecordRef};
use crate::store::memory::ManualMemory;
use crate::store::quarantine::Provenance;

pub const SAVE_TEXT_MAX_CHARS: usize = 100_000;
use crate::pipeline::field_limits::{NARRATIVE_CHARS as NARRATIVE_MAX_CHARS, TITLE_CHARS as TITLE_MAX_CHARS};
pub const REASON_MAX_CHARS: usize = 200;

#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    /// The request cannot be carried out as given (HTTP 400).
    #[error("{0}")]
    Invalid(String),
    /// No such record (HTTP 404).
    #[error("{0}")]
    NotFound(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

fn invalid(detail: impl Into<String>) -> MemoryError {
    MemoryError::Invalid(detail.into())
}

/// An explicit memory to save (`POST /api/memory/save`, `memd remember`, MCP `save_memory`).
#[derive(Debug, Clone, Default)]
pub struct SaveRequest {
    pub text: String,
    pub title: Option<String>,
    pub project: Option<String>,
    pub metadata: Option<Map<String, Value>>,
    pub obs_type: Option<String>,
    pub concepts: Option<Vec<String>>,
    /// Already resolved from the request (query, body, headers).
    pub platform: String,
    /// Whose words: the user's (`memd remember`, the viewer) or an agent's (the default).
    pub provenance: Provenance,
    /// The observation this memory replaces (issue 38): it is linked `superseded_by` the new one.
    pub supersedes: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Saved {
    pub id: i64,
    pub title: String,
    pub project: String,
    pub reinforced: bool,
    pub occurrence_count: i64,
    /// The observation it replaced, when the request named one.
    pub supersedes: Option<i64>,
}

/// Default title: the first 60 chars of the whitespace-collapsed text, `...` when longer.
pub fn default_title(text: &str) -> String {
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut title: String = collapsed.chars().take(60).collect();
    if collapsed.chars().count() > 60 {
        title.push_str("...");
    }
    title
}

/// Checks, cleans (tags, secrets) and stores an explicit memory; a duplicate reinforces.
pub async fn save(svc: &Services, req: SaveRequest) -> Result<Saved, MemoryError> {
    if req.text.trim().is_empty() {
        return Err(invalid("text must not be empty"));
    }
    if req.text.chars().count() > SAVE_TEXT_MAX_CHARS {
        return Err(invalid("text exceeds 100000 characters"));
    }
    if req.title.as_ref().is_some_and(|t| t.chars().count() > TITLE_MAX_CHARS) {
        return Err(invalid("title exceeds 200 characters"));
    }
    let obs_type = req.obs_type.as_deref().map(str::trim).unwrap_or("discovery").to_string();
    if !svc.mode.has_type(&obs_type) {
        return Err(invalid(format!("type must be one of {}", svc.mode.type_ids().join(", "))));
    }
    if let Some(old) = req.supersedes {
        let id = crate::retrieval::RecordId {
            kind: crate::retrieval::record_kind::Kind::Observation,
            id: old,
        };
        let found = svc.storage.records(vec![id], crate::retrieval::Scope::default()).await;
        if !found.is_ok_and(|m| m.contains_key(&id)) {
            return Err(MemoryError::NotFound(format!("supersedes: no observation #{old}")));
        }
    }
    let pipeline = &svc.ingest.pipeline;
    let privacy = &pipeline.privacy;
    let text = privacy.clean_text(&req.text);
    if text.private {
        return Err(invalid("text is empty after privacy processing (empty_after_privacy)"));
    }
    let mut counts = text.redactions.clone();
    let title = req.title.as_deref().map(|t| privacy.clean_text(t)).filter(|t| !t.private);
    if let Some(t) = &title {
        counts.merge(&t.redactions);
    }
    let title = title.map_or_else(|| default_title(&text.text), |t| t.text);
    let concepts: Vec<String> = req
        .concepts
        .unwrap_or_default()
        .iter()
        .map(|c| privacy.clean_text(c).text)
        .collect();
    let metadata = req.metadata.map(|m| privacy.clean_json(Value::Object(m)).0);
    let project = req
        .project
        .as_deref()
        .or_else(|| metadata.as_ref().and_then(|m| m.get("project")).and_then(Value::as_str))
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .unwrap_or(UNKNOWN_PROJECT)
        .to_string();
    pipeline.count(&counts);
    let memory = ManualMemory {
        platform_source: req.platform,
        project: project.clone(),
        concepts: normalize_concepts(&concepts, &obs_type).into_iter().take(10).collect(),
        obs_type,
        title: bound(&title, TITLE_MAX_CHARS).into_owned(),
        narrative: bound(&text.text, NARRATIVE_MAX_CHARS).into_owned(),
        metadata: metadata.map(|m| m.to_string()),
        provenance: req.provenance,
        supersedes: req.supersedes,
    };
    let title = memory.title.clone();
    let req_supersedes = memory.supersedes;
    let now = now_ms();
    let saved = svc.storage.save_memory(memory, now).await?;
    tracing::info!(observation_id = saved.id, reinforced = saved.reinforced, "manual memory saved");
    Ok(Saved {
        id: saved.id,
        title,
        project,
        reinforced: saved.reinforced,
        occurrence_count: saved.occurrence_count,
        supersedes: req_supersedes,
    })
}

/// What became of the vectors of a forgotten record: `deleted` (embedded store), `queued`
/// (Chroma, by the sync), `none` (vectors never written).
pub async fn forget_record(svc: &Services, r: RecordRef, reason: Option<String>) -> Result<&'static str, MemoryError> {
    if reason.as_ref().is_some_and(|r| r.chars().count() > REASON_MAX_CHARS) {
        return Err(invalid("reason exceeds 200 characters"));
    }
    let now = now_ms();
    let Forgotten { found, vector_target } = svc.storage.forget(r, reason, now).await?;
    if !found {
        let noun = match r.kind {
            RecordKind::Observation => "Observation",
            RecordKind::Summary => "Summary",
            RecordKind::Prompt => "Prompt",
        };
        return Err(MemoryError::NotFound(format!("{noun} {} not found", r.kind.label(r.id))));
    }
    tracing::info!(kind = r.kind.name(), id = r.id, "record forgotten");
    Ok(match vector_target.as_deref() {
        Some(t) if t.starts_with("chroma:") => "queued",
        Some(_) => "deleted",
        None => "none",
    })
}

/// Forgets every record the selector matches (or counts them, `dry_run`).
pub async fn forget_matching(
    svc: &Services,
    sel: ForgetSelector,
    dry_run: bool,
    reason: Option<String>,
) -> Result<ForgetCounts, MemoryError> {
    if reason.as_ref().is_some_and(|r| r.chars().count() > REASON_MAX_CHARS) {
        return Err(invalid("reason exceeds 200 characters"));
    }
    let now = now_ms();
    let counts = svc.storage.forget_matching(sel, dry_run, reason, now).await?;
    tracing::info!(
        dry_run,
        observations = counts.observations,
        summaries = counts.summaries,
        prompts = counts.prompts,
        "bulk forget"
    );
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_title_cuts_at_60() {
        assert_eq!(default_title("  short\n text "), "short text");
        let long = "a".repeat(61);
        assert_eq!(default_title(&long), format!("{}...", "a".repeat(60)));
    }
}
