//! Each MCP tool's parameters as one type: serde reads a call's arguments into it and schemars
//! derives the tool's input schema from it (field docs become descriptions), so a parameter is
//! declared once. The value types below keep what clients send leniently (a word or a list, an id
//! as a number or a string) and check bounds while parsing; a bad argument names its field.

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::model::JsonObject;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::caller::ToolError;
pub use crate::protocol::params::{Bounded, Moment, ParamError, Words, moment, words};
use crate::protocol::params::{from_object, inline_schema};
use crate::store::forget::RecordRef;

/// Reads a call's arguments into `P` (the error names the field: `limit: must be …`).
pub fn parse<P: DeserializeOwned>(args: &Map<String, Value>) -> Result<P, ToolError> {
    from_object(args).map_err(|e| ToolError::InvalidParams(e.0))
}

/// The input schema of `P` (an object; the wrapper's title left out).
pub fn schema_of<P: JsonSchema + 'static>() -> Arc<JsonObject> {
    let mut schema = rmcp::handler::server::common::schema_for_type::<P>().as_ref().clone();
    schema.remove("title");
    schema.remove("description");
    Arc::new(schema)
}

/// A record id: `123`, `"#123"`, `"S12"` (summary), `"P7"` (prompt).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "Value")]
pub struct Id(pub RecordRef);
inline_schema!(Id, "Id", {"anyOf": [{"type": "integer"}, {"type": "string"}]});

impl TryFrom<Value> for Id {
    type Error = ParamError;
    fn try_from(v: Value) -> Result<Self, ParamError> {
        let s = match &v {
            Value::Number(n) => n.to_string(),
            Value::String(s) => s.clone(),
            _ => String::new(),
        };
        RecordRef::parse(&s).map(Id).ok_or_else(|| ParamError::MalformedId(v.to_string()))
    }
}

/// 1 to `MAX` ids, each once, in the order given.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "Vec<Id>")]
pub struct Ids<const MAX: usize>(pub Vec<RecordRef>);

impl<const MAX: usize> TryFrom<Vec<Id>> for Ids<MAX> {
    type Error = ParamError;
    fn try_from(ids: Vec<Id>) -> Result<Self, ParamError> {
        if ids.is_empty() || ids.len() > MAX {
            return Err(ParamError::IdCount(MAX));
        }
        let mut out: Vec<RecordRef> = Vec::with_capacity(ids.len());
        for Id(r) in ids {
            if !out.contains(&r) {
                out.push(r);
            }
        }
        Ok(Self(out))
    }
}

impl<const MAX: usize> JsonSchema for Ids<MAX> {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        format!("Ids_{MAX}").into()
    }
    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "array", "items": g.subschema_for::<Id>(), "minItems": 1, "maxItems": MAX})
    }
}

/// An observation id: `123` or `"#123"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "Value")]
pub struct ObservationId(pub i64);
inline_schema!(ObservationId, "ObservationId", {"type": ["integer", "string"], "description": "observation id, e.g. 123 or \"#123\""});

impl TryFrom<Value> for ObservationId {
    type Error = ParamError;
    fn try_from(v: Value) -> Result<Self, ParamError> {
        let raw = match &v {
            Value::Number(n) => n.to_string(),
            Value::String(s) => s.trim().trim_start_matches('#').to_string(),
            _ => return Err(ParamError::NotObservationId),
        };
        raw.parse()
            .ok()
            .filter(|n| *n > 0)
            .map(Self)
            .ok_or(ParamError::MalformedObservationId(raw))
    }
}
