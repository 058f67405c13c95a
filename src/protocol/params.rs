//! The lenient value types of request parameters, and the two ways a request arrives: a JSON
//! object (an MCP tool call's arguments) or query-string pairs (`GET /api/search?…`). Both are
//! read by serde into the same request type ([`super::search`]), so a parameter is declared once;
//! a bad one names its field (`limit: must be an integer in 1..100`). schemars derives a tool's
//! input schema from the same type (field docs become descriptions).

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A schema written by hand for a value type that reads several JSON shapes.
macro_rules! inline_schema {
    ($ty:ty, $name:literal, $schema:tt) => {
        impl schemars::JsonSchema for $ty {
            fn inline_schema() -> bool {
                true
            }
            fn schema_name() -> std::borrow::Cow<'static, str> {
                $name.into()
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!($schema)
            }
        }
    };
}
pub(crate) use inline_schema;

/// Why an argument is not of its type (the message after the field's name).
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

/// A request that did not parse: the field's path and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Invalid(pub String);

/// Reads a JSON object (an MCP call's arguments) into `P`.
pub fn from_object<P: DeserializeOwned>(args: &Map<String, Value>) -> Result<P, Invalid> {
    serde_path_to_error::deserialize(Value::Object(args.clone())).map_err(|e| {
        let path = e.path().to_string();
        let msg = e.into_inner().to_string();
        Invalid(if path == "." { msg } else { format!("{path}: {msg}") })
    })
}

/// Reads query-string pairs into `P`: empty values are absent, the first of a repeated key wins.
pub fn from_pairs<P: DeserializeOwned>(pairs: &[(String, String)]) -> Result<P, Invalid> {
    let mut args = Map::new();
    for (k, v) in pairs {
        if !v.trim().is_empty() && !args.contains_key(k) {
            args.insert(k.clone(), Value::String(v.clone()));
        }
    }
    from_object(&args)
}

/// The query-string pairs of a request (absent fields left out, lists as comma lists): what a
/// client sends for `P` and [`from_pairs`] reads back.
pub fn to_pairs<P: Serialize>(p: &P) -> Vec<(String, String)> {
    let Ok(Value::Object(fields)) = serde_json::to_value(p) else {
        return Vec::new();
    };
    fields
        .into_iter()
        .filter_map(|(k, v)| {
            let text = match v {
                Value::Null => return None,
                Value::String(s) => s,
                other => other.to_string(),
            };
            (!text.is_empty()).then_some((k, text))
        })
        .collect()
}

/// A word, a number, or a list of them; kept as one comma list.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(try_from = "Value", into = "String")]
pub struct Words(pub String);
inline_schema!(Words, "Words", {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]});

impl From<Words> for String {
    fn from(w: Words) -> String {
        w.0
    }
}

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

impl Words {
    /// The items, trimmed, empties dropped.
    pub fn items(&self) -> Vec<String> {
        self.0
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect()
    }
}

/// `Option<Words>` as the comma list ("" when absent).
pub fn words(w: &Option<Words>) -> String {
    w.as_ref().map(|w| w.0.clone()).unwrap_or_default()
}

/// `Option<Words>` as its items (none when absent).
pub fn items(w: &Option<Words>) -> Vec<String> {
    w.as_ref().map(Words::items).unwrap_or_default()
}

/// The text of an `Option<Words>` when it holds any (blank is absent).
pub fn given(w: &Option<Words>) -> Option<&str> {
    w.as_ref().map(|w| w.0.as_str()).filter(|s| !s.trim().is_empty())
}

/// An integer in `MIN..=MAX` (a number, or its digits as a query string sends them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(try_from = "Value", into = "i64")]
pub struct Bounded<const MIN: i64, const MAX: i64>(pub i64);

impl<const MIN: i64, const MAX: i64> From<Bounded<MIN, MAX>> for i64 {
    fn from(b: Bounded<MIN, MAX>) -> i64 {
        b.0
    }
}

impl<const MIN: i64, const MAX: i64> TryFrom<Value> for Bounded<MIN, MAX> {
    type Error = ParamError;
    fn try_from(v: Value) -> Result<Self, ParamError> {
        let n = match &v {
            Value::String(s) => s.trim().parse::<i64>().ok(),
            other => other.as_i64(),
        };
        match n {
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

/// A time: ISO-8601 text or epoch milliseconds (read by the side that answers).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(try_from = "Value", into = "Value")]
pub struct Moment(pub Value);
inline_schema!(Moment, "Moment", {"type": ["string", "integer"]});

impl From<Moment> for Value {
    fn from(m: Moment) -> Value {
        m.0
    }
}

impl TryFrom<Value> for Moment {
    type Error = ParamError;
    fn try_from(v: Value) -> Result<Self, ParamError> {
        match v {
            Value::String(_) | Value::Number(_) => Ok(Self(v)),
            _ => Err(ParamError::NotMoment),
        }
    }
}

impl Moment {
    /// The time as text (epoch milliseconds as digits).
    pub fn text(&self) -> String {
        match &self.0 {
            Value::String(s) => s.clone(),
            v => v.to_string(),
        }
    }
}

/// `Option<Moment>` as text ("" when absent).
pub fn moment(m: &Option<Moment>) -> String {
    m.as_ref().map(Moment::text).unwrap_or_default()
}
