//! UserPromptSubmit related-work text (docs/spec/retrieval.md §2, docs/spec/api.md §4.2): natural-mode
//! keyword search over observations (vectors join later), leaving out the current session.

use rusqlite::{Connection, OptionalExtension};

use super::RetrievalError;
use super::fusion::Near;
use super::ids::{RecordId, fetch_records};
use super::query::natural;
use super::record_kind::{Kind, Record};
use super::render::utf16_len;
use super::scope::Scope;
use super::search_sql::{CANDIDATES, Filters, MatchSpec, candidates};
use super::zone::{Zone, local_date};
use crate::text::sink::inline;

/// Prompts shorter than this (trimmed) get nothing.
pub const MIN_PROMPT_CHARS: usize = 20;
const MAX_CHARS: usize = 10_000;
const HEADING: &str = "## Relevant Past Work (semantic match)";

#[derive(Debug, Clone, PartialEq)]
pub struct SemanticRequest {
    /// The prompt, already tag-stripped and redacted.
    pub q: String,
    pub scope: Scope,
    pub limit: usize,
    /// The current session (its rows are left out).
    pub content_session_id: Option<String>,
}

/// `(context, the observations it shows)`; empty for short prompts or no hits. Keyword only.
pub fn semantic_context(conn: &Connection, req: &SemanticRequest, zone: &Zone) -> Result<(String, Vec<i64>), RetrievalError> {
    semantic_context_with(conn, req, zone, None, 0.0)
}

/// Like [`semantic_context`], with the query's nearest rows (best first, those at or above the
/// similarity floor) fused in by RRF.
pub fn semantic_context_with(
    conn: &Connection,
    req: &SemanticRequest,
    zone: &Zone,
    vector: Option<&[Near]>,
    floor: f32,
) -> Result<(String, Vec<i64>), RetrievalError> {
    if req.q.trim().chars().count() < MIN_PROMPT_CHARS {
        return Ok((String::new(), Vec::new()));
    }
    let nat = natural(&req.q);
    let filters = Filters {
        scope: req.scope.clone(),
        ..Filters::default()
    };
    let mut ids: Vec<RecordId> = Vec::new();
    for m in [
        MatchSpec {
            words: nat.words,
            groups: nat.groups,
            ..MatchSpec::default()
        },
        MatchSpec {
            trigrams: nat.trigrams,
            ..MatchSpec::default()
        },
    ] {
        if m.is_empty() {
            continue;
        }
        for c in candidates(conn, Kind::Observation, &m, &filters, CANDIDATES)? {
            let rid = RecordId {
                kind: Kind::Observation,
                id: c.id,
            };
            if !ids.contains(&rid) {
                ids.push(rid);
            }
        }
    }
    let excluded: Option<String> = match &req.content_session_id {
        Some(cs) => conn
            .query_row(
                "SELECT memory_session_id FROM sdk_sessions WHERE content_session_id = ?1 ORDER BY id DESC LIMIT 1",
                [cs],
                |r| r.get(0),
            )
            .optional()?,
        None => None,
    };
    if let Some(v) = vector.filter(|v| !v.is_empty()) {
        let observations: Vec<RecordId> = v
            .iter()
            .filter(|n| n.rid.kind == Kind::Observation && n.similarity >= floor)
            .map(|n| n.rid)
            .collect();
        ids = super::fusion::merge_lists(&[&ids, &observations]);
    }
    // Vector-only rows were found with a loose project prefilter: the exact scope applies here.
    let mut found = fetch_records(conn, &ids, &req.scope)?;
    let mut hits = Vec::new();
    for rid in &ids {
        // Quarantined records are never injected (issue 36), nor superseded ones (issue 38).
        if let Some(Record::Observation(o)) = found.remove(rid)
            && excluded.as_deref() != Some(o.memory_session_id.as_str())
            && !o.quarantined
            && o.superseded_by.is_none()
        {
            hits.push(o);
        }
        if hits.len() >= req.limit {
            break;
        }
    }
    let mut blocks: Vec<String> = hits
        .iter()
        .map(|o| {
            let title = o.title.as_deref().map(inline).filter(|t| !t.is_empty());
            let title = title.unwrap_or_else(|| "Observation".into());
            let body = match o.narrative.as_deref().map(inline).filter(|n| !n.is_empty()) {
                Some(n) => n,
                None => inline(&super::records::json_list(&o.facts).join("; ")),
            };
            format!("### {title} ({}){}\n{body}\n", local_date(zone, o.created_at_epoch), o.tags())
        })
        .collect();
    loop {
        if blocks.is_empty() {
            return Ok((String::new(), Vec::new()));
        }
        let text = format!("{HEADING}\n\n{}", blocks.join("\n"));
        if utf16_len(&text) <= MAX_CHARS {
            return Ok((text, hits.iter().take(blocks.len()).map(|o| o.id).collect()));
        }
        blocks.pop();
    }
}
