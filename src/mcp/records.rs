//! `get_observations` (docs/spec/retrieval.md §6): rows from `POST /api/observations/batch`, grouped
//! by kind in the requested order, JSON-string arrays turned into real arrays, absent ids listed;
//! `get_tool_uses`: an observation's raw tool calls (docs/spec/viewer.md §3).

use crate::protocol::paths;
use crate::retrieval::record_request::RecordsParams;
use serde_json::{Value, json};

use super::caller::{CallerContext, ToolError, ToolText, fail};
use super::params::{Ids, ObservationId};
use super::tool_params::{GetObservationsParams, GetToolUsesParams};
use crate::store::forget::{RecordKind, RecordRef};

fn kind_of(row: &Value) -> RecordKind {
    match row.get("kind").and_then(Value::as_str) {
        Some("summary") => RecordKind::Summary,
        Some("prompt") => RecordKind::Prompt,
        _ => RecordKind::Observation,
    }
}

/// A row with its JSON-encoded array columns decoded and the `kind` marker dropped.
fn decode(row: &Value) -> Value {
    let mut v = crate::protocol::api::with_array_columns(row);
    if let Some(obj) = v.as_object_mut() {
        obj.remove("kind");
    }
    v
}

/// Groups `rows` in the order of `wanted`; ids without a row go to `missing`.
pub fn group(wanted: &[RecordRef], rows: &[Value]) -> Value {
    let (mut observations, mut summaries, mut prompts, mut missing) = (vec![], vec![], vec![], vec![]);
    for r in wanted {
        let found = rows
            .iter()
            .find(|row| kind_of(row) == r.kind && row.get("id").and_then(Value::as_i64) == Some(r.id));
        match (found, r.kind) {
            (None, k) => missing.push(json!(k.label(r.id))),
            (Some(row), RecordKind::Observation) => observations.push(decode(row)),
            (Some(row), RecordKind::Summary) => summaries.push(decode(row)),
            (Some(row), RecordKind::Prompt) => prompts.push(decode(row)),
        }
    }
    json!({"observations": observations, "summaries": summaries, "prompts": prompts, "missing": missing})
}

pub fn get_observations(ctx: &CallerContext, p: GetObservationsParams) -> Result<ToolText, ToolError> {
    let Ids(wanted) = p.ids;
    let req = RecordsParams::oldest_first(wanted.iter().copied());
    let rows = match ctx.fetch("POST", paths::OBSERVATIONS_BATCH, Some(&req.to_value()))? {
        Ok(ans) => match ans.json() {
            Some(Value::Array(rows)) => rows,
            _ => {
                return Ok(ToolText {
                    text: "the worker answered something other than a list of rows".into(),
                    is_error: true,
                });
            }
        },
        // No worker: the records straight from the database (they are the same rows).
        Err(e) => match super::offline::batch_rows(&ctx.link.dir, &req) {
            Some(rows) => rows,
            None => return fail(e),
        },
    };
    Ok(ToolText {
        text: serde_json::to_string_pretty(&group(&wanted, &rows)).unwrap_or_default(),
        is_error: false,
    })
}

/// `get_tool_uses`: the raw tool calls an observation was made from (`GET /api/tool-uses`), as
/// stored (secrets redacted, long texts cut).
pub fn get_tool_uses(ctx: &CallerContext, p: GetToolUsesParams) -> Result<ToolText, ToolError> {
    let ObservationId(id) = p.id;
    let v = match ctx.fetch("GET", &format!("{}?observation={id}", paths::TOOL_USES), None)? {
        Ok(ans) => ans.json().unwrap_or_default(),
        Err(e) => match super::offline::tool_uses(&ctx.link.dir, id) {
            Some(v) => v,
            None => return fail(e),
        },
    };
    Ok(ToolText {
        text: serde_json::to_string_pretty(&v).unwrap_or_default(),
        is_error: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_in_request_order_and_decodes_arrays() {
        let wanted: Vec<RecordRef> = ["#2", "S1", "1", "#9"].iter().filter_map(|s| RecordRef::parse(s)).collect();
        let rows = vec![
            json!({"kind": "observation", "id": 1, "facts": "[\"a\"]"}),
            json!({"kind": "observation", "id": 2, "facts": "[]"}),
            json!({"kind": "summary", "id": 1, "files_edited": "[\"x\"]"}),
        ];
        let g = group(&wanted, &rows);
        assert_eq!(g["observations"][0]["id"], 2);
        assert_eq!(g["observations"][1]["facts"], json!(["a"]));
        assert_eq!(g["summaries"][0]["files_edited"], json!(["x"]));
        assert_eq!(g["missing"], json!(["#9"]));
        assert!(g["observations"][0].get("kind").is_none());
    }
}
