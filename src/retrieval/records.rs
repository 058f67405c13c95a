//! The three record kinds as retrieval reads them (observation, summary, prompt): column lists,
//! row mapping, read-token estimates, and the claude-mem-compatible JSON rows of docs/spec/api.md §2.7
//! (array columns stay JSON-encoded strings).

use rusqlite::Row as SqlRow;
use serde_json::{Value, json};

use super::render::{SUMMARY_GLYPH, read_tokens_of_chars};

/// One list per record kind: each field with its column. From it come the struct, the
/// `SELECT` column list (`<alias>.<column>, …`) and `from_row`, which reads every column by
/// name — a column added anywhere in the list cannot shift another.
macro_rules! record {
    (
        $(#[$meta:meta])* $name:ident, $cols:ident = $alias:literal {
            $first:ident: $first_ty:ty = $first_col:literal
            $(, $field:ident: $ty:ty = $col:literal)* $(,)?
        }
    ) => {
        pub const $cols: &str = concat!($alias, ".", $first_col $(, ", ", $alias, ".", $col)*);

        $(#[$meta])*
        #[derive(Debug, Clone, Default, PartialEq)]
        pub struct $name {
            pub $first: $first_ty,
            $(pub $field: $ty,)*
        }

        impl $name {
            /// A row selected with this kind's column list (other columns may follow).
            pub fn from_row(r: &SqlRow) -> rusqlite::Result<Self> {
                Ok(Self {
                    $first: r.get($first_col)?,
                    $($field: r.get($col)?,)*
                })
            }
        }
    };
}

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

    /// The row of docs/spec/api.md §2.7 plus memd's provenance columns.
    pub fn to_json(&self) -> Value {
        json!({
            "id": self.id, "memory_session_id": self.memory_session_id, "project": self.project,
            "merged_into_project": self.merged_into_project, "platform_source": self.platform_source, "text": null,
            "type": self.obs_type, "title": self.title, "subtitle": self.subtitle, "facts": self.facts,
            "narrative": self.narrative, "concepts": self.concepts, "files_read": self.files_read,
            "files_modified": self.files_modified, "prompt_number": self.prompt_number,
            "discovery_tokens": self.discovery_tokens, "read_tokens": self.read_tokens(),
            "created_at": self.created_at, "created_at_epoch": self.created_at_epoch,
            "content_hash": self.content_hash, "origin": self.origin, "generated_by_model": self.generated_by_model,
            "agent_type": self.agent_type, "agent_id": self.agent_id, "metadata": self.metadata,
            "occurrence_count": self.occurrence_count, "reinforcement_dates": self.reinforcement_dates,
            "last_reinforced_epoch": self.last_reinforced_epoch,
            "provenance": self.provenance, "imported_from": self.imported_from,
            "quarantined": self.quarantined, "quarantine_reason": self.quarantine_reason,
            "stale": self.stale_commit.is_some(), "stale_commit": self.stale_commit, "stale_file": self.stale_file,
            "stale_at": self.stale_at_epoch.map(crate::clock::iso),
            "superseded_by": self.superseded_by, "supersede_reason": self.supersede_reason,
        })
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

record! {
    Summary, SUMMARY_COLS = "s" {
        id: i64 = "id",
        memory_session_id: String = "memory_session_id",
        project: String = "project",
        merged_into_project: Option<String> = "merged_into_project",
        platform_source: String = "platform_source",
        request: Option<String> = "request",
        investigated: Option<String> = "investigated",
        learned: Option<String> = "learned",
        completed: Option<String> = "completed",
        next_steps: Option<String> = "next_steps",
        notes: Option<String> = "notes",
        files_read: String = "files_read",
        files_edited: String = "files_edited",
        prompt_number: Option<i64> = "prompt_number",
        discovery_tokens: i64 = "discovery_tokens",
        created_at: String = "created_at",
        created_at_epoch: i64 = "created_at_epoch",
        provenance: String = "provenance",
        quarantined: bool = "quarantined",
        quarantine_reason: Option<String> = "quarantine_reason",
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

    pub fn to_json(&self) -> Value {
        json!({
            "id": self.id, "memory_session_id": self.memory_session_id, "project": self.project,
            "merged_into_project": self.merged_into_project, "platform_source": self.platform_source,
            "request": self.request, "investigated": self.investigated, "learned": self.learned,
            "completed": self.completed, "next_steps": self.next_steps, "notes": self.notes,
            "files_read": self.files_read, "files_edited": self.files_edited, "prompt_number": self.prompt_number,
            "discovery_tokens": self.discovery_tokens, "read_tokens": self.read_tokens(),
            "created_at": self.created_at, "created_at_epoch": self.created_at_epoch,
            "provenance": self.provenance, "quarantined": self.quarantined, "quarantine_reason": self.quarantine_reason,
        })
    }
}

record! {
    Prompt, PROMPT_COLS = "p" {
        id: i64 = "id",
        content_session_id: String = "content_session_id",
        project: String = "project",
        platform_source: String = "platform_source",
        prompt_number: i64 = "prompt_number",
        prompt_text: String = "prompt_text",
        is_private: bool = "is_private",
        created_at: String = "created_at",
        created_at_epoch: i64 = "created_at_epoch",
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

    pub fn to_json(&self) -> Value {
        json!({
            "id": self.id, "content_session_id": self.content_session_id, "project": self.project,
            "platform_source": self.platform_source, "prompt_number": self.prompt_number,
            "prompt_text": self.prompt_text, "is_private": self.is_private, "provenance": "user", "read_tokens": self.read_tokens(),
            "created_at": self.created_at, "created_at_epoch": self.created_at_epoch,
        })
    }
}
