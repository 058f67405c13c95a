//! The two inserts of an import chunk that decide duplicates: observations (skipped when their
//! `(memory_session_id, content_hash)` exists or is tombstoned, never reinforced) and summaries
//! (the newest of a prompt wins), and the rows they insert. Used by `import_rows`.

use rusqlite::{Connection, OptionalExtension, params};

use super::StoreError;
use super::observation_record::ObservationRecord;
use crate::clock::iso;
use crate::pipeline::hash::content_hash;

/// A cleaned claude-mem observation.
#[derive(Debug, Clone)]
pub struct ImportObservation {
    pub src_id: i64,
    pub src_session_id: i64,
    pub project: String,
    pub merged_into_project: Option<String>,
    pub obs_type: String,
    pub title: Option<String>,
    pub subtitle: Option<String>,
    pub narrative: Option<String>,
    /// JSON arrays, serialised.
    pub facts: String,
    pub concepts: String,
    pub files_read: String,
    pub files_modified: String,
    pub prompt_number: Option<i64>,
    pub discovery_tokens: i64,
    pub created_at_epoch: i64,
    pub agent_id: Option<String>,
    pub agent_type: Option<String>,
    pub generated_by_model: Option<String>,
    pub metadata: Option<String>,
    pub reinforcement_dates: String,
    pub occurrence_count: i64,
}

/// A cleaned claude-mem session summary.
#[derive(Debug, Clone)]
pub struct ImportSummary {
    pub src_id: i64,
    pub src_session_id: i64,
    pub project: String,
    pub merged_into_project: Option<String>,
    /// request, investigated, learned, completed, next_steps, notes.
    pub fields: [Option<String>; 6],
    pub files_read: String,
    pub files_edited: String,
    pub prompt_number: Option<i64>,
    pub discovery_tokens: i64,
    pub created_at_epoch: i64,
}

/// Inserts unless `(msid, hash)` exists or is tombstoned.
pub(super) fn observation(conn: &Connection, o: &ImportObservation, msid: &str, platform: &str) -> Result<Option<i64>, StoreError> {
    let hash = content_hash(msid, o.title.as_deref(), o.narrative.as_deref());
    let tomb = conn
        .prepare_cached("SELECT 1 FROM tombstones WHERE memory_session_id = ?1 AND content_hash = ?2")?
        .query_row(params![msid, hash], |_| Ok(()))
        .optional()?;
    if tomb.is_some() {
        return Ok(None);
    }
    let record = ObservationRecord {
        merged_into_project: o.merged_into_project.clone(),
        title: o.title.clone(),
        subtitle: o.subtitle.clone(),
        narrative: o.narrative.clone(),
        facts: o.facts.clone(),
        concepts: o.concepts.clone(),
        files_read: o.files_read.clone(),
        files_modified: o.files_modified.clone(),
        prompt_number: o.prompt_number,
        discovery_tokens: o.discovery_tokens,
        content_hash: hash,
        generated_by_model: o.generated_by_model.clone(),
        agent_id: o.agent_id.clone(),
        agent_type: o.agent_type.clone(),
        metadata: o.metadata.clone(),
        occurrence_count: o.occurrence_count,
        reinforcement_dates: o.reinforcement_dates.clone(),
        imported_from: Some("claude-mem".into()),
        ..ObservationRecord::new(msid, &o.project, platform, &o.obs_type, "import").created(o.created_at_epoch)
    };
    Ok(record.insert(conn)?)
}

/// Inserts, or replaces an older summary of the same prompt (the newest wins).
pub(super) fn summary(conn: &Connection, s: &ImportSummary, msid: &str, platform: &str) -> Result<Option<i64>, StoreError> {
    let [request, investigated, learned, completed, next_steps, notes] = &s.fields;
    let id: Option<i64> = conn
        .prepare_cached("INSERT INTO session_summaries(memory_session_id, project, platform_source, merged_into_project, request, investigated, learned,
               completed, next_steps, notes, files_read, files_edited, prompt_number, discovery_tokens, origin, created_at, created_at_epoch)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, 'import', ?15, ?16)
             ON CONFLICT(memory_session_id, prompt_number) DO UPDATE SET request = excluded.request, investigated = excluded.investigated,
               learned = excluded.learned, completed = excluded.completed, next_steps = excluded.next_steps, notes = excluded.notes,
               files_read = excluded.files_read, files_edited = excluded.files_edited, created_at = excluded.created_at,
               created_at_epoch = excluded.created_at_epoch
             WHERE excluded.created_at_epoch >= session_summaries.created_at_epoch
             RETURNING id")?
        .query_row(
            params![
                msid,
                s.project,
                platform,
                s.merged_into_project,
                request,
                investigated,
                learned,
                completed,
                next_steps,
                notes,
                s.files_read,
                s.files_edited,
                s.prompt_number,
                s.discovery_tokens,
                iso(s.created_at_epoch),
                s.created_at_epoch
            ],
            |r| r.get(0),
        )
        .optional()?;
    if let Some(id) = id {
        super::quarantine::screen_summary(conn, id)?;
    }
    Ok(id)
}
