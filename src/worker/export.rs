//! Export and import of whole observations (issue 39; `memd export`, `memd import-md`): pages out
//! by id, records in through the privacy pipeline again (a `<private>` region makes a record
//! refused, secrets are redacted) and the screen of injected text (`ObservationRecord::insert`),
//! then the supersession links with the ids the import gave.

use super::Services;
use crate::store::StoreError;
use crate::store::export_rows::{ExportedObservation, Imported};
use crate::store::observation_record::json_array;

/// A page of at most this many records.
pub const PAGE_MAX: usize = 500;

/// What the import of one record did, by the id it had where it came from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ImportedAs {
    pub from: i64,
    #[serde(flatten)]
    pub outcome: Option<Imported>,
    /// Why it was refused (None when it was imported or known).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

/// The record's text as the privacy pipeline leaves it; None when a `<private>` region covers it.
fn cleaned(svc: &Services, mut e: ExportedObservation) -> Option<ExportedObservation> {
    let privacy = &svc.ingest.pipeline.privacy;
    let r = &mut e.record;
    for field in [&mut r.title, &mut r.subtitle, &mut r.narrative] {
        if let Some(text) = field.as_deref() {
            let c = privacy.clean_text(text);
            if c.private {
                return None;
            }
            *field = Some(c.text);
        }
    }
    let facts: Vec<String> = serde_json::from_str(&r.facts).unwrap_or_default();
    r.facts = json_array(&facts.iter().map(|f| privacy.clean_text(f).text).collect::<Vec<_>>());
    Some(e)
}

/// Imports one chunk of records; each answers what became of it.
pub async fn import(svc: &Services, rows: Vec<ExportedObservation>) -> Result<Vec<ImportedAs>, StoreError> {
    let mut out = Vec::with_capacity(rows.len());
    let mut keep = Vec::with_capacity(rows.len());
    for e in rows {
        let from = e.id;
        match cleaned(svc, e) {
            Some(e) => keep.push(e),
            None => out.push(ImportedAs {
                from,
                outcome: None,
                refused: Some("private content".into()),
            }),
        }
    }
    let froms: Vec<i64> = keep.iter().map(|e| e.id).collect();
    let done = svc.storage.import_observations(keep).await?;
    out.extend(froms.into_iter().zip(done).map(|(from, o)| ImportedAs {
        from,
        outcome: Some(o),
        refused: None,
    }));
    let kept = out.iter().filter(|o| o.outcome.is_some()).count();
    tracing::info!(records = out.len(), kept, "observations imported");
    Ok(out)
}
