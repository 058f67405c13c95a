//! The kind of a record (observation, summary, prompt) and a record of any kind, with the
//! accessors the mixed lists (search results, timeline, batch) need.

use serde_json::Value;

use super::records::{Observation, Prompt, Summary};

/// Which table a record comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Observation,
    Summary,
    Prompt,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Observation => "observation",
            Kind::Summary => "summary",
            Kind::Prompt => "prompt",
        }
    }
    /// `4411`, `S812`, `P3310`.
    pub fn label(self, id: i64) -> String {
        match self {
            Kind::Observation => id.to_string(),
            Kind::Summary => format!("S{id}"),
            Kind::Prompt => format!("P{id}"),
        }
    }
}

/// A record of any kind.
#[derive(Debug, Clone, PartialEq)]
// An observation carries more columns than a summary (provenance, quarantine); records come in
// pages of at most a few hundred, so the larger variant costs less than a box per row.
#[allow(clippy::large_enum_variant)]
pub enum Record {
    Observation(Observation),
    Summary(Summary),
    Prompt(Prompt),
}

impl Record {
    pub fn kind(&self) -> Kind {
        match self {
            Record::Observation(_) => Kind::Observation,
            Record::Summary(_) => Kind::Summary,
            Record::Prompt(_) => Kind::Prompt,
        }
    }
    pub fn id(&self) -> i64 {
        match self {
            Record::Observation(o) => o.id,
            Record::Summary(s) => s.id,
            Record::Prompt(p) => p.id,
        }
    }
    pub fn at_ms(&self) -> i64 {
        match self {
            Record::Observation(o) => o.created_at_epoch,
            Record::Summary(s) => s.created_at_epoch,
            Record::Prompt(p) => p.created_at_epoch,
        }
    }
    pub fn read_tokens(&self) -> i64 {
        match self {
            Record::Observation(o) => o.read_tokens(),
            Record::Summary(s) => s.read_tokens(),
            Record::Prompt(p) => p.read_tokens(),
        }
    }
    /// The JSON row with its `kind`.
    pub fn to_json_with_kind(&self) -> Value {
        let mut v = match self {
            Record::Observation(o) => o.to_json(),
            Record::Summary(s) => s.to_json(),
            Record::Prompt(p) => p.to_json(),
        };
        if let Some(m) = v.as_object_mut() {
            m.insert("kind".into(), Value::from(self.kind().name()));
        }
        v
    }
}
