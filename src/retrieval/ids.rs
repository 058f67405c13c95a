//! Record ids in every accepted form (docs/spec/retrieval.md §0): `123`, `"123"`, `"#123"`, `"S12"`,
//! `"#S12"`, `"P7"`, `"#P7"`; and fetching records by id within a scope.

use std::collections::HashMap;

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, params_from_iter};
use serde_json::Value;

use super::RetrievalError;
use super::record_kind::{Kind, Record};
use super::records::{OBS_COLS, Observation, PROMPT_COLS, Prompt, SUMMARY_COLS, Summary};
use super::scope::{Conditions, Scope, placeholders};

/// A typed record id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RecordId {
    pub kind: Kind,
    pub id: i64,
}

impl RecordId {
    /// `#412`, `#S12`, `#P7`.
    pub fn hash_label(&self) -> String {
        format!("#{}", self.kind.label(self.id))
    }
}

/// The store's reference to a record (what forgetting and the MCP ids hold) and the read side's
/// id are one id: the same three kinds.
impl From<crate::store::forget::RecordRef> for RecordId {
    fn from(r: crate::store::forget::RecordRef) -> Self {
        use crate::store::forget::RecordKind as K;
        let kind = match r.kind {
            K::Observation => Kind::Observation,
            K::Summary => Kind::Summary,
            K::Prompt => Kind::Prompt,
        };
        Self { kind, id: r.id }
    }
}

impl From<RecordId> for crate::store::forget::RecordRef {
    fn from(r: RecordId) -> Self {
        use crate::store::forget::RecordKind as K;
        let kind = match r.kind {
            Kind::Observation => K::Observation,
            Kind::Summary => K::Summary,
            Kind::Prompt => K::Prompt,
        };
        Self { kind, id: r.id }
    }
}

/// Parses one id string; `None` when malformed.
pub fn parse_id(raw: &str) -> Option<RecordId> {
    let s = raw.trim();
    let s = s.strip_prefix('#').unwrap_or(s);
    let (kind, digits) = match s.as_bytes().first()? {
        b'S' | b's' => (Kind::Summary, &s[1..]),
        b'P' | b'p' => (Kind::Prompt, &s[1..]),
        _ => (Kind::Observation, s),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let id: i64 = digits.parse().ok()?;
    (id > 0).then_some(RecordId { kind, id })
}

/// Parses an `ids` value: an array of numbers / id strings, or a string holding a JSON array or a
/// comma list. Errors name the first malformed id.
pub fn parse_ids(v: &Value) -> Result<Vec<RecordId>, RetrievalError> {
    let bad = |x: &dyn std::fmt::Display| RetrievalError::Invalid(format!("malformed id {x}"));
    let items: Vec<Value> = match v {
        Value::Array(a) => a.clone(),
        Value::String(s) if s.trim_start().starts_with('[') => {
            serde_json::from_str(s).map_err(|_| RetrievalError::Invalid("ids is not a JSON array".into()))?
        }
        Value::String(s) => s
            .split(',')
            .filter(|p| !p.trim().is_empty())
            .map(|p| Value::from(p.trim()))
            .collect(),
        Value::Number(_) => vec![v.clone()],
        _ => return Err(RetrievalError::Invalid("ids must be an array".into())),
    };
    items
        .iter()
        .map(|item| match item {
            Value::Number(n) => n
                .as_i64()
                .filter(|i| *i > 0)
                .map(|id| RecordId {
                    kind: Kind::Observation,
                    id,
                })
                .ok_or_else(|| bad(n)),
            Value::String(s) => parse_id(s).ok_or_else(|| bad(&format!("{s:?}"))),
            other => Err(bad(other)),
        })
        .collect()
}

/// Loads the records of `ids` that exist in `scope`, keyed by id (order is the caller's).
pub fn fetch_records(conn: &Connection, ids: &[RecordId], scope: &Scope) -> Result<HashMap<RecordId, Record>, RetrievalError> {
    let mut out = HashMap::with_capacity(ids.len());
    for kind in [Kind::Observation, Kind::Summary, Kind::Prompt] {
        let wanted: Vec<i64> = ids.iter().filter(|r| r.kind == kind).map(|r| r.id).collect();
        for chunk in wanted.chunks(500) {
            let (cols, table, a, merged) = match kind {
                Kind::Observation => (OBS_COLS, "observations", "o", true),
                Kind::Summary => (SUMMARY_COLS, "session_summaries", "s", true),
                Kind::Prompt => (PROMPT_COLS, "user_prompts", "p", false),
            };
            let mut c = Conditions::default();
            c.push(
                &format!("{a}.id IN ({})", placeholders(chunk.len())),
                chunk.iter().map(|i| SqlValue::Integer(*i)),
            );
            scope.conditions(a, merged, &mut c);
            let sql = format!("SELECT {cols} FROM {table} {a} WHERE 1=1{}", c.sql);
            let mut stmt = conn.prepare(&sql)?;
            let rows = stmt.query_map(params_from_iter(c.params.iter()), |r| {
                Ok(match kind {
                    Kind::Observation => Record::Observation(Observation::from_row(r)?),
                    Kind::Summary => Record::Summary(Summary::from_row(r)?),
                    Kind::Prompt => Record::Prompt(Prompt::from_row(r)?),
                })
            })?;
            for rec in rows {
                let rec = rec?;
                out.insert(RecordId { kind, id: rec.id() }, rec);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn id_forms() {
        let obs = |id| {
            Some(RecordId {
                kind: Kind::Observation,
                id,
            })
        };
        assert_eq!(parse_id("412"), obs(412));
        assert_eq!(parse_id("#412"), obs(412));
        assert_eq!(parse_id("S12").map(|r| (r.kind, r.id)), Some((Kind::Summary, 12)));
        assert_eq!(parse_id("#P7").map(|r| (r.kind, r.id)), Some((Kind::Prompt, 7)));
        for bad in ["", "#", "S", "x1", "-3", "0", "1.5", "S-1"] {
            assert_eq!(parse_id(bad), None, "{bad}");
        }
    }

    #[test]
    fn ids_values() {
        assert_eq!(parse_ids(&json!(["#12", "S4", "P9", 99])).map(|v| v.len()).ok(), Some(4));
        assert_eq!(parse_ids(&json!("[1, \"S2\"]")).map(|v| v.len()).ok(), Some(2));
        assert_eq!(parse_ids(&json!("1, 2,#3")).map(|v| v.len()).ok(), Some(3));
        assert!(parse_ids(&json!(["abc"])).is_err());
        assert!(parse_ids(&json!([true])).is_err());
    }
}
