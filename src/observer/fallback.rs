//! The extractive observer over a claimed batch (what the job and the provider actor fall back to):
//! deterministic observations from the tool events
//! themselves (docs/spec/pipeline.md §16), bounded and re-redacted like any observer output.

use super::bounds::finish_output;
use super::extractive;
use super::types::{BatchOutput, BatchWork, ClaimedBatch, ToolEvent};
use crate::pipeline::privacy::Privacy;

/// Extractive output for a whole claimed batch.
pub fn observe_batch(batch: &ClaimedBatch, types: &[&str], concepts: &[&str], privacy: &Privacy) -> BatchOutput {
    match &batch.work {
        BatchWork::Observations(events) => observe_events(events, &batch.meta.project_root, types, concepts, privacy),
        BatchWork::Summary {
            last_assistant_message,
            observation_titles,
            ..
        } => {
            let summary = extractive::summarize(batch.meta.prompt_text.as_deref(), observation_titles, last_assistant_message);
            finish_output(BatchOutput::extractive(Vec::new(), summary, Vec::new()), privacy)
        }
    }
}

/// Extractive output for some events of a batch.
pub fn observe_events(events: &[ToolEvent], project_root: &str, types: &[&str], concepts: &[&str], privacy: &Privacy) -> BatchOutput {
    let observations = extractive::observe(events, project_root, types, concepts);
    let rows = events.iter().map(|e| e.row_id).collect();
    finish_output(BatchOutput::extractive(observations, None, rows), privacy)
}
