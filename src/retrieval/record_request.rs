//! The one request type of a record read (docs/spec/api.md §4.5): the body of
//! `POST /api/observations/batch`, built by the MCP tool `get_observations` and by `memd show`,
//! read by the route and by the MCP server's answer from the database when no worker runs. Ids in
//! every accepted form (`123`, `"#123"`, `"S12"`, `"P7"`, a comma list or a string holding a JSON
//! array), sent back as labels; each field's error names it.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use super::ids::{RecordId, parse_ids};

/// Ids one read may ask for.
pub const BATCH_MAX: usize = 500;

/// The body of a record read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordsParams {
    pub ids: RecordIds,
    /// Newest first unless `"date_asc"`; a value that is not a string reads as the default.
    #[serde(rename = "orderBy", default, deserialize_with = "order_or_default")]
    pub order_by: RecordOrder,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<Limit>,
    /// A project chain (`a,b`), else every project (a value that is not a string: every project).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "string_or_none")]
    pub project: Option<String>,
    /// Else the caller's platform (a value that is not a string: the caller's).
    #[serde(
        rename = "platformSource",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "string_or_none"
    )]
    pub platform_source: Option<String>,
}

fn order_or_default<'de, D: Deserializer<'de>>(d: D) -> Result<RecordOrder, D::Error> {
    match Value::deserialize(d)? {
        Value::String(s) => RecordOrder::try_from(s).map_err(serde::de::Error::custom),
        _ => Ok(RecordOrder::DateDesc),
    }
}

fn string_or_none<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::String(s) => Some(s),
        _ => None,
    })
}

impl RecordsParams {
    /// `ids`, oldest first: what the MCP tool and `memd show` ask.
    pub fn oldest_first(ids: impl IntoIterator<Item = impl Into<RecordId>>) -> Self {
        Self {
            ids: RecordIds(ids.into_iter().map(Into::into).collect()),
            order_by: RecordOrder::DateAsc,
            limit: None,
            project: None,
            platform_source: None,
        }
    }

    /// The body as JSON (what goes over HTTP).
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}

/// At most [`BATCH_MAX`] ids, as given (none is an empty answer).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "Value", into = "Vec<String>")]
pub struct RecordIds(pub Vec<RecordId>);

impl TryFrom<Value> for RecordIds {
    type Error = String;
    fn try_from(v: Value) -> Result<Self, String> {
        let ids = parse_ids(&v).map_err(|e| e.to_string())?;
        if ids.len() > BATCH_MAX {
            return Err(format!("more than {BATCH_MAX} ids"));
        }
        Ok(Self(ids))
    }
}

impl From<RecordIds> for Vec<String> {
    fn from(ids: RecordIds) -> Self {
        ids.0.iter().map(|r| r.kind.label(r.id)).collect()
    }
}

/// Newest first (the default) or oldest first.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "&'static str")]
pub enum RecordOrder {
    #[default]
    DateDesc,
    DateAsc,
}

impl TryFrom<String> for RecordOrder {
    type Error = &'static str;
    fn try_from(s: String) -> Result<Self, &'static str> {
        match s.as_str() {
            "date_desc" => Ok(Self::DateDesc),
            "date_asc" => Ok(Self::DateAsc),
            _ => Err("orderBy must be date_desc or date_asc"),
        }
    }
}

impl From<RecordOrder> for &'static str {
    fn from(o: RecordOrder) -> Self {
        match o {
            RecordOrder::DateDesc => "date_desc",
            RecordOrder::DateAsc => "date_asc",
        }
    }
}

/// At most this many records (≥ 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "Value", into = "u64")]
pub struct Limit(pub usize);

impl TryFrom<Value> for Limit {
    type Error = &'static str;
    fn try_from(v: Value) -> Result<Self, &'static str> {
        v.as_u64()
            .filter(|n| *n >= 1)
            .map(|n| Self(n as usize))
            .ok_or("limit must be an integer ≥ 1")
    }
}

impl From<Limit> for u64 {
    fn from(l: Limit) -> Self {
        l.0 as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retrieval::ids::parse_id;
    use serde_json::json;

    fn parse(v: Value) -> Result<RecordsParams, String> {
        serde_json::from_value(v).map_err(|e| crate::protocol::api::describe_json_error(&e))
    }

    #[test]
    fn a_body_reads_back_as_it_was_written_and_each_error_names_its_field() {
        let p = RecordsParams::oldest_first(["12", "S3", "P7"].map(|l| parse_id(l).unwrap()));
        assert_eq!(p.to_value(), json!({"ids": ["12", "S3", "P7"], "orderBy": "date_asc"}));
        assert_eq!(parse(p.to_value()).unwrap(), p);
        let lenient = parse(json!({"ids": "#12, s3", "limit": 2, "project": "a,b"})).unwrap();
        assert_eq!(lenient.ids.0.len(), 2);
        assert_eq!(
            (lenient.order_by, lenient.limit, lenient.project.as_deref()),
            (RecordOrder::DateDesc, Some(Limit(2)), Some("a,b"))
        );
        assert_eq!(parse(json!({})).unwrap_err(), "missing field ids");
        assert_eq!(parse(json!({"ids": ["X9"]})).unwrap_err(), "malformed id \"X9\"");
        assert_eq!(
            parse(json!({"ids": [1], "orderBy": "up"})).unwrap_err(),
            "orderBy must be date_desc or date_asc"
        );
        assert_eq!(parse(json!({"ids": [1], "limit": 0})).unwrap_err(), "limit must be an integer ≥ 1");
        let loose = parse(json!({"ids": [1], "orderBy": null, "project": 5, "platformSource": ["x"]})).unwrap();
        assert_eq!(
            (loose.order_by, loose.project, loose.platform_source),
            (RecordOrder::DateDesc, None, None)
        );
        assert_eq!(parse(json!({"ids": [], "limit": null})).unwrap().ids.0.len(), 0);
        let many: Vec<i64> = (1..=501).collect();
        assert_eq!(parse(json!({"ids": many})).unwrap_err(), "more than 500 ids");
    }
}
