//! The three record kinds as retrieval reads them (observation, summary, prompt): column lists,
//! row mapping, read-token estimates, and the claude-mem-compatible JSON rows of docs/spec/api.md §2.7
//! (array columns stay JSON-encoded strings).

use rusqlite::Row as SqlRow;
use serde_json::{Value, json};

use super::render::{SUMMARY_GLYPH, read_tokens_of_chars};

pub use crate::store::summary_record::{PROMPT_COLS, Prompt, SUMMARY_COLS, Summary};

pub use crate::store::observation_record::{OBS_COLS, ObservationRecord};

/// An observation as retrieval reads it: its id and [`ObservationRecord`], the one record every
/// writer stores (its fields read through `Deref`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Observation {
    pub id: i64,
    pub record: ObservationRecord,
}

impl std::ops::Deref for Observation {
    type Target = ObservationRecord;
    fn deref(&self) -> &ObservationRecord {
        &self.record
    }
}

pub use crate::store::observation_record::json_list;

impl Observation {
    /// A row selected with [`OBS_COLS`] (other columns may follow).
    pub fn from_row(r: &SqlRow) -> rusqlite::Result<Self> {
        Ok(Self {
            id: r.get("id")?,
            record: ObservationRecord::from_row(r)?,
        })
    }

    /// ceil(chars / 4) over title + subtitle + narrative + every fact.
    pub fn read_tokens(&self) -> i64 {
        let text = |s: &Option<String>| s.as_deref().map_or(0, |t| t.chars().count());
        let facts: usize = json_list(&self.facts).iter().map(|f| f.chars().count()).sum();
        read_tokens_of_chars(text(&self.title) + text(&self.subtitle) + text(&self.narrative) + facts)
    }

    /// The row of docs/spec/api.md §2.7 plus memd's provenance columns: the record's own fields
    /// (derived; `obs_type` as `type`, the staleness time as ISO `stale_at`) and what is computed.
    pub fn to_json(&self) -> Value {
        let mut v = derived_json(&self.record);
        if let Some(row) = v.as_object_mut() {
            if let Some(t) = row.remove("obs_type") {
                row.insert("type".into(), t);
            }
            row.remove("stale_at_epoch");
        }
        extend(
            v,
            json!({
                "id": self.id, "text": null, "read_tokens": self.read_tokens(),
                "stale": self.stale_commit.is_some(), "stale_at": self.stale_at_epoch.map(crate::clock::iso),
            }),
        )
    }

    /// The labels injected after the row's title: its source (` [tool]`, issue 36) and, when a
    /// later commit changed a file it is about or a newer record replaced it, a compact marker
    /// (` (changed since 1a2b3c4)`, ` (superseded by #12)`; issue 38).
    pub fn tags(&self) -> String {
        let mut t = self.source_tag();
        if let Some(c) = &self.stale_commit {
            t.push_str(&format!(" (changed since {})", &c[..c.len().min(7)]));
        }
        if let Some(n) = self.superseded_by {
            t.push_str(&format!(" (superseded by #{n})"));
        }
        t
    }

    /// ` [tool]`: the compact provenance label injected after the row's title (issue 36).
    /// A row pulled from the team server names its origin: ` [team alice@laptop]` (issue 40).
    pub fn source_tag(&self) -> String {
        match self.imported_from.as_deref().and_then(|f| f.strip_prefix("team:")) {
            Some(origin) => format!(" [team {}]", team_origin_label(origin)),
            None => source_tag(&self.provenance),
        }
    }

    /// [`Observation::to_json`] with `facts`, `concepts`, `files_read` and `files_modified` as
    /// JSON arrays: the shape of memd's own routes (the viewer's browse, session and edit
    /// answers); the claude-mem-compatible rows keep the strings (docs/spec/api.md §2.7).
    pub fn to_json_with_arrays(&self) -> Value {
        let mut v = self.to_json();
        for (key, col) in [
            ("facts", &self.facts),
            ("concepts", &self.concepts),
            ("files_read", &self.files_read),
            ("files_modified", &self.files_modified),
        ] {
            v[key] = json!(json_list(col));
        }
        v
    }
}

/// Another member's origin as shown to the agent: only `[A-Za-z0-9@._-]`, at most 64 characters
/// (it is text someone else chose; it must not read as an instruction).
pub fn team_origin_label(origin: &str) -> String {
    let kept: String = origin
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '@' | '.' | '_' | '-'))
        .take(64)
        .collect();
    if kept.is_empty() { "unknown".into() } else { kept }
}

/// ` [<label>]` of a stored provenance (an unknown value reads as the observer's).
pub fn source_tag(provenance: &str) -> String {
    use crate::store::quarantine::Provenance;
    format!(" [{}]", Provenance::parse(provenance).unwrap_or(Provenance::Observer).label())
}

impl Summary {
    fn fields(&self) -> [&Option<String>; 6] {
        [
            &self.request,
            &self.investigated,
            &self.learned,
            &self.completed,
            &self.next_steps,
            &self.notes,
        ]
    }

    pub fn read_tokens(&self) -> i64 {
        read_tokens_of_chars(self.fields().iter().map(|f| f.as_deref().map_or(0, |t| t.chars().count())).sum())
    }

    /// `request`, else `Session summary`.
    pub fn title(&self) -> String {
        match self.request.as_deref().map(str::trim) {
            Some(r) if !r.is_empty() => r.to_string(),
            _ => "Session summary".into(),
        }
    }

    pub fn glyph() -> &'static str {
        SUMMARY_GLYPH
    }

    /// The record's fields (derived) and its read tokens.
    pub fn to_json(&self) -> Value {
        extend(derived_json(self), json!({"read_tokens": self.read_tokens()}))
    }
}

impl Prompt {
    pub fn read_tokens(&self) -> i64 {
        read_tokens_of_chars(self.prompt_text.chars().count())
    }

    /// Prompt text (≤ 80 chars), `[private prompt]` when private.
    pub fn title(&self) -> String {
        if self.is_private {
            "[private prompt]".into()
        } else {
            super::render::title_or_untitled(Some(&self.prompt_text), 80)
        }
    }

    /// The record's fields (derived), its read tokens, and its provenance (a prompt is the user's).
    pub fn to_json(&self) -> Value {
        extend(derived_json(self), json!({"provenance": "user", "read_tokens": self.read_tokens()}))
    }
}

/// A record's serde form (a plain struct of strings, numbers and options: it always serializes).
fn derived_json<T: serde::Serialize>(record: &T) -> Value {
    serde_json::to_value(record).unwrap_or_default()
}

/// `row` with the keys of `more` added (or replaced).
fn extend(mut row: Value, more: Value) -> Value {
    if let (Some(row), Value::Object(more)) = (row.as_object_mut(), more) {
        row.extend(more);
    }
    row
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(v: &Value) -> Vec<String> {
        let mut k: Vec<String> = v.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default();
        k.sort();
        k
    }

    fn sorted(names: &str) -> Vec<String> {
        let mut k: Vec<String> = names.split_whitespace().map(str::to_string).collect();
        k.sort();
        k
    }

    #[test]
    fn the_derived_rows_keep_the_api_keys() {
        let mut o = Observation {
            id: 7,
            record: ObservationRecord::new("m", "shop", "claude", "bugfix", "observer"),
        };
        o.record.stale_at_epoch = Some(0);
        o.record.stale_commit = Some("1a2b3c4d".into());
        let v = o.to_json();
        assert_eq!(
            keys(&v),
            sorted(
                "id memory_session_id project merged_into_project platform_source text type title subtitle \
                 facts narrative concepts files_read files_modified prompt_number discovery_tokens read_tokens \
                 created_at created_at_epoch content_hash origin generated_by_model agent_type agent_id metadata \
                 occurrence_count reinforcement_dates last_reinforced_epoch provenance imported_from quarantined \
                 quarantine_reason stale stale_commit stale_file stale_at superseded_by supersede_reason"
            )
        );
        assert_eq!((v["type"].as_str(), v["stale"].as_bool()), (Some("bugfix"), Some(true)));
        assert_eq!(v["stale_at"], json!(crate::clock::iso(0)));
        assert!(v["text"].is_null());
        let s = Summary::default().to_json();
        assert_eq!(
            keys(&s),
            sorted(
                "id memory_session_id project merged_into_project platform_source request investigated learned \
                 completed next_steps notes files_read files_edited prompt_number discovery_tokens read_tokens \
                 created_at created_at_epoch provenance quarantined quarantine_reason"
            )
        );
        let p = Prompt::default().to_json();
        assert_eq!(
            keys(&p),
            sorted(
                "id content_session_id project platform_source prompt_number prompt_text is_private provenance \
                 read_tokens created_at created_at_epoch"
            )
        );
        assert_eq!(p["provenance"], "user");
    }
}
