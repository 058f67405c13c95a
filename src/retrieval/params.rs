//! Query-string parameters of the read requests (docs/spec/api.md §4): repeated keys, aliases,
//! ranged numbers, booleans, lists, times. Every failure is [`RetrievalError::Invalid`] naming the
//! parameter (HTTP 400, MCP −32602). No HTTP types: the routes, `memd mcp`'s offline answers and
//! the CLI read the same pairs.

use super::RetrievalError;
use super::zone::{Zone, parse_time};
use crate::pipeline::platform::normalize_platform_source;

fn invalid(detail: String) -> RetrievalError {
    RetrievalError::Invalid(detail)
}

/// The raw pairs of a query string, in order (keys may repeat).
pub struct Params(pub Vec<(String, String)>);

impl Params {
    /// First non-empty value among the given names.
    pub fn get(&self, names: &[&str]) -> Option<&str> {
        names
            .iter()
            .find_map(|n| self.0.iter().find(|(k, v)| k == n && !v.trim().is_empty()).map(|(_, v)| v.as_str()))
    }

    /// Every value of a repeated key.
    pub fn all(&self, name: &str) -> Vec<String> {
        self.0.iter().filter(|(k, _)| k == name).map(|(_, v)| v.clone()).collect()
    }

    /// A comma list (any alias), trimmed, empties dropped.
    pub fn list(&self, names: &[&str]) -> Vec<String> {
        self.get(names)
            .map(|v| v.split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect())
            .unwrap_or_default()
    }

    /// An integer in `min..=max`, else 400.
    pub fn int(&self, names: &[&str], min: i64, max: i64) -> Result<Option<i64>, RetrievalError> {
        match self.get(names) {
            None => Ok(None),
            Some(v) => match v.trim().parse::<i64>() {
                Ok(n) if (min..=max).contains(&n) => Ok(Some(n)),
                _ => Err(invalid(format!("{} must be an integer in {min}..{max}", names[0]))),
            },
        }
    }

    /// `true` / `false` (also 1/0); absent → `default`.
    pub fn flag(&self, names: &[&str], default: bool) -> Result<bool, RetrievalError> {
        match self.get(names).map(|v| v.trim().to_ascii_lowercase()) {
            None => Ok(default),
            Some(v) if v == "true" || v == "1" => Ok(true),
            Some(v) if v == "false" || v == "0" => Ok(false),
            Some(_) => Err(invalid(format!("{} must be true or false", names[0]))),
        }
    }

    /// A time bound (ISO date or date-time, or epoch ms), else 400.
    pub fn time(&self, names: &[&str], zone: &Zone, end_of_day: bool) -> Result<Option<i64>, RetrievalError> {
        match self.get(names) {
            None => Ok(None),
            Some(v) => parse_time(v, zone, end_of_day)
                .map(Some)
                .ok_or_else(|| invalid(format!("{} is not an ISO date, date-time or epoch ms", names[0]))),
        }
    }

    /// `platformSource` when one is given (query, else the caller's header value), normalised;
    /// None = no filter.
    pub fn platform(&self, header: Option<&str>) -> Option<String> {
        self.get(&["platformSource", "platform_source"])
            .or(header.filter(|v| !v.trim().is_empty()))
            .map(|raw| normalize_platform_source(Some(raw)))
    }
}
