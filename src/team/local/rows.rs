//! A shared row: a local observation or session summary as it is pushed (its text redacted again,
//! never raw tool I/O or prompts) and a pulled row as it is stored locally (`import` provenance
//! naming its origin).

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use crate::store::observation_record::json_list;

use crate::pipeline::redact::Redactor;
use crate::store::observation_record::ObservationRecord;

/// The local row a shared row is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocalRef {
    Observation(i64),
    Summary(i64),
    /// A project and branch's work state at this version (its `updated_at_epoch`).
    Work(i64),
}

/// A row on its way to the server.
#[derive(Debug, Clone, PartialEq)]
pub struct Outgoing {
    pub gid: String,
    pub local: LocalRef,
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

/// The shared fields of a session summary.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SummaryBody {
    pub request: Option<String>,
    pub investigated: Option<String>,
    pub learned: Option<String>,
    pub completed: Option<String>,
    pub next_steps: Option<String>,
    pub notes: Option<String>,
    pub files_read: Vec<String>,
    pub files_edited: Vec<String>,
    pub created_at: String,
}

impl SummaryBody {
    /// Every text through the redactor once more.
    pub fn redacted(mut self, redactor: &Redactor) -> Self {
        let fields = [
            &mut self.request,
            &mut self.investigated,
            &mut self.learned,
            &mut self.completed,
            &mut self.next_steps,
            &mut self.notes,
        ];
        let lists = self.files_read.iter_mut().chain(self.files_edited.iter_mut());
        redact_each(redactor, fields.into_iter().flatten().chain(lists));
        self
    }
}

/// A work state as shared: the task, notes and items of one project and branch.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct WorkBody {
    pub branch: String,
    pub task: Option<String>,
    pub notes: Option<String>,
    pub items: Vec<WorkItemBody>,
    pub updated_at_epoch: i64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct WorkItemBody {
    pub key: String,
    pub text: String,
    pub status: String,
    pub updated_at_epoch: i64,
}

impl WorkBody {
    /// Every text through the redactor once more.
    pub fn redacted(mut self, redactor: &Redactor) -> Self {
        let items = self.items.iter_mut().map(|i| &mut i.text);
        redact_each(redactor, [&mut self.task, &mut self.notes].into_iter().flatten().chain(items));
        self
    }
}

impl Body {
    /// Every text through the redactor once more.
    pub fn redacted(mut self, redactor: &Redactor) -> Self {
        let fields = [&mut self.title, &mut self.subtitle, &mut self.narrative];
        let lists = [&mut self.facts, &mut self.concepts, &mut self.files_read, &mut self.files_modified];
        redact_each(redactor, fields.into_iter().flatten().chain(lists.into_iter().flatten()));
        self
    }
}

/// Puts each text through the redactor, in place.
fn redact_each<'a>(redactor: &Redactor, texts: impl Iterator<Item = &'a mut String>) {
    for t in texts {
        *t = redactor.redact(t).0;
    }
}

/// `body` read as a `T`, redacted by `redact` and written back; an unreadable body becomes `{}`.
fn redact_as<T: serde::de::DeserializeOwned + Serialize>(body: Value, redact: impl FnOnce(T) -> T) -> Value {
    serde_json::from_value::<T>(body)
        .ok()
        .and_then(|b| serde_json::to_value(redact(b)).ok())
        .unwrap_or_else(|| Value::Object(Default::default()))
}

impl Incoming {
    /// The row with its body through this machine's redactor: what another member's memd (or
    /// anyone with the server's credentials) wrote is not trusted to be clean.
    pub fn redacted(mut self, redactor: &Redactor) -> Self {
        let body = std::mem::take(&mut self.body);
        self.body = match self.kind.as_str() {
            "summary" => redact_as(body, |b: SummaryBody| b.redacted(redactor)),
            "work_state" => redact_as(body, |b: WorkBody| b.redacted(redactor)),
            _ => redact_as(body, |b: Body| b.redacted(redactor)),
        };
        self
    }
}

/// The body of `r`, every text through the redactor once more.
pub fn body_of(r: &ObservationRecord, redactor: &Redactor) -> Body {
    Body {
        obs_type: r.obs_type.clone(),
        title: r.title.clone(),
        subtitle: r.subtitle.clone(),
        narrative: r.narrative.clone(),
        facts: json_list(&r.facts),
        concepts: json_list(&r.concepts),
        files_read: json_list(&r.files_read),
        files_modified: json_list(&r.files_modified),
        created_at: r.created_at.clone(),
    }
    .redacted(redactor)
}

/// The global id of a local observation: this data directory's install id and the row's id, so
/// a retried push names the same row.
pub fn observation_gid(install_id: &str, id: i64) -> String {
    format!("{install_id}-{id}")
}

/// The global id of a local session summary (`S<id>`).
pub fn summary_gid(install_id: &str, id: i64) -> String {
    format!("{install_id}-S{id}")
}

/// The global id of a project and branch's work state (one row, re-sent as it changes).
pub fn work_gid(install_id: &str, project: &str, branch: &str) -> String {
    let key = crate::pipeline::hash::sha256_hex(format!("{project}\0{branch}").as_bytes());
    format!("{install_id}-W{}", &key[..16])
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
        assert_eq!(observation_gid("abc", 7), "abc-7");
        assert_eq!(summary_gid("abc", 7), "abc-S7");
        let s = SummaryBody {
            learned: Some("key ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8".into()),
            ..Default::default()
        };
        assert!(!s.redacted(&Redactor::default()).learned.unwrap().contains("ghp_A1b2"));
        let pulled = Incoming {
            gid: "x-1".into(),
            seq: 1,
            kind: "observation".into(),
            project: "shop".into(),
            origin: "mallory@box".into(),
            provenance: "agent".into(),
            content_hash: "h".into(),
            body: serde_json::json!({"type": "discovery", "narrative": "use ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"}),
            created_at_epoch: 0,
            deleted: false,
        };
        let clean = pulled.redacted(&Redactor::default());
        assert!(!clean.body.to_string().contains("ghp_A1b2"), "{}", clean.body);
    }
}
