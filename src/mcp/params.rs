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
use crate::store::forget::RecordRef;

/// Reads a call's arguments into `P` (the error names the field: `limit: must be …`).
pub fn parse<P: DeserializeOwned>(args: &Map<String, Value>) -> Result<P, ToolError> {
    serde_path_to_error::deserialize(Value::Object(args.clone())).map_err(|e| {
        let path = e.path().to_string();
        let msg = e.into_inner().to_string();
        ToolError::InvalidParams(if path == "." { msg } else { format!("{path}: {msg}") })
    })
}

/// The input schema of `P` (an object; the wrapper's title left out).
pub fn schema_of<P: JsonSchema + 'static>() -> Arc<JsonObject> {
    let mut schema = rmcp::handler::server::common::schema_for_type::<P>().as_ref().clone();
    schema.remove("title");
    schema.remove("description");
    Arc::new(schema)
}

macro_rules! inline_schema {
    ($ty:ty, $name:literal, $schema:tt) => {
        impl JsonSchema for $ty {
            fn inline_schema() -> bool {
                true
            }
            fn schema_name() -> Cow<'static, str> {
                $name.into()
            }
            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                json_schema!($schema)
            }
        }
    };
}

/// Why an argument is not of its type (the message JSON-RPC −32602 carries, after the field).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParamError {
    #[error("must hold strings")]
    NotStrings,
    #[error("must be a string or an array")]
    NotWords,
    #[error("must be an integer in {0}..{1}")]
    OutOfRange(i64, i64),
    #[error("malformed id {0}")]
    MalformedId(String),
    #[error("must hold 1..{0} ids")]
    IdCount(usize),
    #[error("must be an observation id")]
    NotObservationId,
    #[error("malformed observation id {0}")]
    MalformedObservationId(String),
    #[error("must be an ISO-8601 time or epoch milliseconds")]
    NotMoment,
}

/// A word, a number, or a list of them; the worker takes them as one comma list.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(try_from = "Value")]
pub struct Words(pub String);
inline_schema!(Words, "Words", {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]});

impl TryFrom<Value> for Words {
    type Error = ParamError;
    fn try_from(v: Value) -> Result<Self, ParamError> {
        let word = |v: &Value| match v {
            Value::String(s) => Ok(s.clone()),
            Value::Number(n) => Ok(n.to_string()),
            _ => Err(ParamError::NotStrings),
        };
        match &v {
            Value::Array(items) => Ok(Words(items.iter().map(word).collect::<Result<Vec<_>, _>>()?.join(","))),
            Value::String(_) | Value::Number(_) => word(&v).map(Words),
            _ => Err(ParamError::NotWords),
        }
    }
}

/// `Option<Words>` as the comma list ("" when absent).
pub fn words(w: &Option<Words>) -> String {
    w.as_ref().map(|w| w.0.clone()).unwrap_or_default()
}

/// An integer in `MIN..=MAX`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "Value")]
pub struct Bounded<const MIN: i64, const MAX: i64>(pub i64);

impl<const MIN: i64, const MAX: i64> TryFrom<Value> for Bounded<MIN, MAX> {
    type Error = ParamError;
    fn try_from(v: Value) -> Result<Self, ParamError> {
        match v.as_i64() {
            Some(n) if (MIN..=MAX).contains(&n) => Ok(Self(n)),
            _ => Err(ParamError::OutOfRange(MIN, MAX)),
        }
    }
}

impl<const MIN: i64, const MAX: i64> JsonSchema for Bounded<MIN, MAX> {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        format!("Bounded_{MIN}_{MAX}").into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "integer", "minimum": MIN, "maximum": MAX})
    }
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

/// A time: ISO-8601 text or epoch milliseconds (passed on to the worker, which reads it).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "Value")]
pub struct Moment(pub Value);
inline_schema!(Moment, "Moment", {"type": ["string", "integer"]});

impl TryFrom<Value> for Moment {
    type Error = ParamError;
    fn try_from(v: Value) -> Result<Self, ParamError> {
        match v {
            Value::String(_) | Value::Number(_) => Ok(Self(v)),
            _ => Err(ParamError::NotMoment),
        }
    }
}

/// `Option<Moment>` as query text ("" when absent).
pub fn moment(m: &Option<Moment>) -> String {
    match m {
        Some(Moment(Value::String(s))) => s.clone(),
        Some(Moment(v)) => v.to_string(),
        None => String::new(),
    }
}
