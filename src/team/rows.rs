//! A shared row: a local observation as it is pushed (its text redacted again, never raw tool I/O
//! or prompts) and a pulled row as it is stored locally (`import` provenance naming its origin).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::pipeline::redact::Redactor;
use crate::store::observation_record::ObservationRecord;

/// A row on its way to the server.
#[derive(Debug, Clone, PartialEq)]
pub struct Outgoing {
    pub gid: String,
    pub observation_id: i64,
    pub kind: &'static str,
    pub project: String,
    pub provenance: String,
    pub content_hash: String,
    pub body: Value,
    pub created_at_epoch: i64,
}

/// A row from the server (`deleted`: a tombstone).
#[derive(Debug, Clone, PartialEq)]
pub struct Incoming {
    pub gid: String,
    pub seq: i64,
    pub kind: String,
    pub project: String,
    pub origin: String,
    pub provenance: String,
    pub content_hash: String,
    pub body: Value,
    pub created_at_epoch: i64,
    pub deleted: bool,
}

/// The shared fields of an observation (the derived memory, nothing of the raw calls).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Body {
    #[serde(rename = "type")]
    pub obs_type: String,
    pub title: Option<String>,
    pub subtitle: Option<String>,
    pub narrative: Option<String>,
    pub facts: Vec<String>,
    pub concepts: Vec<String>,
    pub files_read: Vec<String>,
    pub files_modified: Vec<String>,
    pub created_at: String,
}

fn list(s: &str) -> Vec<String> {
    serde_json::from_str(s).unwrap_or_default()
}

/// The body of `r`, every text through the redactor once more.
pub fn body_of(r: &ObservationRecord, redactor: &Redactor) -> Body {
    let clean = |s: &str| redactor.redact(s).0;
    let opt = |s: &Option<String>| s.as_deref().map(clean);
    let many = |s: &str| list(s).iter().map(|x| clean(x)).collect();
    Body {
        obs_type: r.obs_type.clone(),
        title: opt(&r.title),
        subtitle: opt(&r.subtitle),
        narrative: opt(&r.narrative),
        facts: many(&r.facts),
        concepts: many(&r.concepts),
        files_read: many(&r.files_read),
        files_modified: many(&r.files_modified),
        created_at: r.created_at.clone(),
    }
}

/// The global id of a local observation: this data directory's install id and the row's id, so
/// a retried push names the same row.
pub fn gid_of(install_id: &str, observation_id: i64) -> String {
    format!("{install_id}-{observation_id}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_body_is_redacted_again_and_holds_no_raw_call() {
        let mut r = ObservationRecord::new("m", "shop", "claude", "decision", "observer");
        r.title = Some("Deploy token".into());
        r.narrative = Some("token ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8 in use".into());
        r.facts = r#"["a fact"]"#.into();
        let b = body_of(&r, &Redactor::default());
        assert!(!b.narrative.unwrap().contains("ghp_A1b2"));
        assert_eq!(b.facts, ["a fact"]);
        let v = serde_json::to_value(Body::default()).unwrap();
        assert!(v.get("tool_input").is_none());
        assert_eq!(gid_of("abc", 7), "abc-7");
    }
}
