//! A corpus file (`docs/spec/corpus.md`): the JSON document claude-mem writes to
//! `<data>/corpora/<name>.corpus.json`, field for field, plus what memd adds (`excluded`, each
//! observation's `provenance` and `stale`, the provider of the primed session). And the build
//! request as the contract accepts it: arrays or comma-separated strings, `dateStart`/`dateEnd`
//! or `date_start`/`date_end`, a numeric string for `limit`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::KnowledgeError;

/// Observations in a corpus when the request names no `limit`.
pub const DEFAULT_LIMIT: u32 = 500;
/// The largest `limit` accepted.
pub const MAX_LIMIT: u32 = 2_000;

/// Which observations a corpus holds; kept in the file so `rebuild` re-runs it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct CorpusFilter {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub types: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub concepts: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date_start: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date_end: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
}

impl CorpusFilter {
    pub fn effective_limit(&self) -> u32 {
        self.limit.unwrap_or(DEFAULT_LIMIT)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct DateRange {
    pub earliest: String,
    pub latest: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct CorpusStats {
    pub observation_count: usize,
    pub token_estimate: i64,
    pub date_range: DateRange,
    pub type_breakdown: BTreeMap<String, usize>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct CorpusObservation {
    pub id: i64,
    #[serde(rename = "type")]
    pub obs_type: String,
    pub title: String,
    pub subtitle: Option<String>,
    pub narrative: Option<String>,
    pub facts: Vec<String>,
    pub concepts: Vec<String>,
    pub files_read: Vec<String>,
    pub files_modified: Vec<String>,
    pub project: String,
    pub created_at: String,
    pub created_at_epoch: i64,
    pub provenance: String,
    /// A later commit changed a file it is about (issue 38).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stale: bool,
}

/// What the filter matched but the trust rules kept out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Excluded {
    pub quarantined: usize,
    pub superseded: usize,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct CorpusFile {
    pub version: u32,
    pub name: String,
    pub description: String,
    pub created_at: String,
    pub updated_at: String,
    pub filter: CorpusFilter,
    pub stats: CorpusStats,
    pub system_prompt: String,
    pub session_id: Option<String>,
    /// The provider (`claude-cli`, `anthropic`, …) whose conversation `session_id` names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_provider: Option<String>,
    pub excluded: Excluded,
    pub observations: Vec<CorpusObservation>,
}

impl CorpusFile {
    /// The document without its observations (what `GET /api/corpus/:name` answers).
    pub fn metadata(&self) -> Value {
        let mut v = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Some(o) = v.as_object_mut() {
            o.remove("observations");
        }
        v
    }

    pub fn holds(&self, id: i64) -> bool {
        self.observations.iter().any(|o| o.id == id)
    }
}

/// Counts, dates and the type breakdown of `observations` (the token estimate is the renderer's).
pub fn stats_of(observations: &[CorpusObservation]) -> CorpusStats {
    let mut type_breakdown = BTreeMap::new();
    for o in observations {
        *type_breakdown.entry(o.obs_type.clone()).or_insert(0) += 1;
    }
    let at = |pick: fn(i64, i64) -> i64| observations.iter().map(|o| o.created_at_epoch).reduce(pick);
    let iso = |t: Option<i64>| t.map(crate::clock::iso).unwrap_or_default();
    CorpusStats {
        observation_count: observations.len(),
        token_estimate: 0,
        date_range: DateRange {
            earliest: iso(at(i64::min)),
            latest: iso(at(i64::max)),
        },
        type_breakdown,
    }
}

/// A corpus name: `[A-Za-z0-9._-]+`, at most 100 characters, not `.` or `..`; never trimmed.
pub fn check_name(name: &str) -> Result<(), KnowledgeError> {
    let ok = !name.is_empty()
        && name.len() <= 100
        && name != "."
        && name != ".."
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    match ok {
        true => Ok(()),
        false => Err(KnowledgeError::BadRequest(format!(
            "invalid corpus name {name:?}: use 1-100 of A-Z a-z 0-9 . _ - (not . or ..)"
        ))),
    }
}

/// A build request: the name, the description and the filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildRequest {
    pub name: String,
    pub description: String,
    pub filter: CorpusFilter,
}

/// Reads `POST /api/corpus`'s body (and `build_corpus`'s arguments).
pub fn build_request(body: &Value) -> Result<BuildRequest, KnowledgeError> {
    let bad = |m: String| KnowledgeError::BadRequest(m);
    if !body.is_object() {
        return Err(bad("the body must be a JSON object".into()));
    }
    let text = |keys: &[&str]| -> Result<Option<String>, KnowledgeError> {
        for k in keys {
            match &body[*k] {
                Value::Null => continue,
                Value::String(s) if s.trim().is_empty() => continue,
                Value::String(s) => return Ok(Some(s.clone())),
                other => return Err(bad(format!("{k} must be a string, not {other}"))),
            }
        }
        Ok(None)
    };
    let name = text(&["name"])?.ok_or_else(|| bad("name is required".into()))?;
    check_name(&name)?;
    let limit = match &body["limit"] {
        Value::Null => None,
        Value::String(s) if s.trim().is_empty() => None,
        v => {
            let n = v.as_u64().or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()));
            match n {
                Some(n) if (1..=u64::from(MAX_LIMIT)).contains(&n) => Some(n as u32),
                _ => return Err(bad(format!("limit must be a whole number from 1 to {MAX_LIMIT}, not {v}"))),
            }
        }
    };
    let filter = CorpusFilter {
        project: text(&["project"])?,
        types: list(body, "types")?,
        concepts: list(body, "concepts")?,
        files: list(body, "files")?,
        query: text(&["query"])?,
        date_start: text(&["date_start", "dateStart"])?,
        date_end: text(&["date_end", "dateEnd"])?,
        limit,
    };
    Ok(BuildRequest {
        name,
        description: text(&["description"])?.unwrap_or_default(),
        filter,
    })
}

/// An array of strings, a JSON array in a string, or a comma-separated string.
fn list(body: &Value, key: &str) -> Result<Vec<String>, KnowledgeError> {
    let items: Vec<Value> = match &body[key] {
        Value::Null => return Ok(Vec::new()),
        Value::Array(a) => a.clone(),
        Value::String(s) if s.trim_start().starts_with('[') => serde_json::from_str(s).unwrap_or_default(),
        Value::String(s) => s.split(',').map(|p| Value::String(p.to_string())).collect(),
        other => return Err(KnowledgeError::BadRequest(format!("{key} must be a list of strings, not {other}"))),
    };
    let mut out = Vec::new();
    for v in items {
        match v.as_str().map(str::trim) {
            Some("") => {}
            Some(s) => out.push(s.to_string()),
            None => return Err(KnowledgeError::BadRequest(format!("{key} must hold strings only, not {v}"))),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn both_date_spellings_lists_and_numeric_strings_are_read() {
        let r = build_request(
            &json!({"name": "hooks.v1", "types": "decision, bugfix", "concepts": "[\"a\",\"b\"]",
            "files": ["src/a.rs"], "dateStart": "2026-01-01", "date_end": "2026-02-01", "limit": "50"}),
        )
        .unwrap();
        assert_eq!(r.filter.types, ["decision", "bugfix"]);
        assert_eq!(r.filter.concepts, ["a", "b"]);
        assert_eq!(
            (r.filter.date_start.as_deref(), r.filter.date_end.as_deref()),
            (Some("2026-01-01"), Some("2026-02-01"))
        );
        assert_eq!((r.filter.limit, r.filter.effective_limit()), (Some(50), 50));
        assert_eq!(
            build_request(&json!({"name": "x"})).unwrap().filter.effective_limit(),
            DEFAULT_LIMIT
        );
    }

    #[test]
    fn bad_names_and_limits_are_refused_with_the_rule() {
        for name in [" bad ", "a/b", "..", "", "ü"] {
            let e = build_request(&json!({ "name": name })).unwrap_err().to_string();
            assert!(e.contains("name"), "{name:?}: {e}");
        }
        for limit in [json!(0), json!(-3), json!("many"), json!(MAX_LIMIT + 1)] {
            assert!(build_request(&json!({"name": "x", "limit": limit})).is_err(), "{limit}");
        }
        assert!(build_request(&json!({"name": "x", "types": [1]})).is_err());
        assert!(build_request(&json!(["x"])).is_err());
    }

    #[test]
    fn a_claude_mem_corpus_file_reads_and_stats_count_types_and_dates() {
        let v = json!({"version": 1, "name": "n", "description": "", "created_at": "", "updated_at": "",
            "filter": {"project": "p", "types": ["decision"]}, "stats": {"observation_count": 1, "token_estimate": 9,
            "date_range": {"earliest": "a", "latest": "b"}, "type_breakdown": {"decision": 1}},
            "system_prompt": "s", "session_id": null, "observations": [{"id": 4, "type": "decision", "title": "t",
            "subtitle": null, "narrative": null, "facts": [], "concepts": [], "files_read": [], "files_modified": [],
            "project": "p", "created_at": "", "created_at_epoch": 5}]});
        let c: CorpusFile = serde_json::from_value(v).unwrap();
        assert!(c.holds(4) && !c.holds(5));
        let s = stats_of(&c.observations);
        assert_eq!((s.observation_count, s.type_breakdown["decision"]), (1, 1));
        assert!(c.metadata().get("observations").is_none());
    }
}
