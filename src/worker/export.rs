//! Export and import of whole observations (issue 39; `memd export`, `memd import-md`): pages out
//! by id, records in through the privacy pipeline again (a `<private>` region makes a record
//! refused, secrets are redacted) and the screen of injected text (`ObservationRecord::insert`),
//! then the supersession links with the ids the import gave.

use super::Services;
use crate::export::admit::admit;
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
/// Every text a person or an agent is shown is cleaned: title, subtitle, narrative, facts,
/// concepts and the file lists.
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
    for list in [&mut r.facts, &mut r.concepts, &mut r.files_read, &mut r.files_modified] {
        let items: Vec<String> = serde_json::from_str(list).unwrap_or_default();
        let mut out = Vec::with_capacity(items.len());
        for item in &items {
            let c = privacy.clean_text(item);
            if c.private {
                return None;
            }
            out.push(c.text);
        }
        *list = json_array(&out);
    }
    Some(e)
}

/// Imports one chunk of records; each answers what became of it. Each is admitted on the store's
/// terms first ([`crate::export::admit`]: whatever the file says, its trust is at most an
/// import's), cleaned, then stored on its own: one bad record is refused with its reason.
pub async fn import(svc: &Services, rows: Vec<ExportedObservation>) -> Result<Vec<ImportedAs>, StoreError> {
    let now = crate::clock::now_ms();
    let mut out = Vec::with_capacity(rows.len());
    let mut keep = Vec::with_capacity(rows.len());
    let refused = |from, why: String| ImportedAs {
        from,
        outcome: None,
        refused: Some(why),
    };
    for e in rows {
        let from = e.id;
        match admit(e, now).map(|a| cleaned(svc, a.record)) {
            Ok(Some(e)) => keep.push(e),
            Ok(None) => out.push(refused(from, "private content".into())),
            Err(why) => out.push(refused(from, why.to_string())),
        }
    }
    let froms: Vec<i64> = keep.iter().map(|e| e.id).collect();
    let done = svc.storage.import_observations(keep).await?;
    out.extend(froms.into_iter().zip(done).map(|(from, o)| match o {
        Ok(o) => ImportedAs {
            from,
            outcome: Some(o),
            refused: None,
        },
        Err(why) => refused(from, why.to_string()),
    }));
    let kept = out.iter().filter(|o| o.outcome.is_some()).count();
    tracing::info!(records = out.len(), kept, "observations imported");
    Ok(out)
}
