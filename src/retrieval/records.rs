//! The three record kinds as retrieval reads them (observation, summary, prompt): column lists,
//! row mapping, read-token estimates, and the claude-mem-compatible JSON rows of docs/spec/api.md §2.7
//! (array columns stay JSON-encoded strings).

use rusqlite::Row as SqlRow;
use serde_json::{Value, json};

use super::render::{SUMMARY_GLYPH, read_tokens_of_chars};

pub const OBS_COLS: &str = "o.id, o.memory_session_id, o.project, o.merged_into_project, o.platform_source, o.type, o.title, \
    o.subtitle, o.narrative, o.facts, o.concepts, o.files_read, o.files_modified, o.prompt_number, o.discovery_tokens, \
    o.content_hash, o.origin, o.generated_by_model, o.agent_id, o.agent_type, o.metadata, o.occurrence_count, \
    o.reinforcement_dates, o.last_reinforced_epoch, o.created_at, o.created_at_epoch";

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Observation {
    pub id: i64,
    pub memory_session_id: String,
    pub project: String,
    pub merged_into_project: Option<String>,
    pub platform_source: String,
    pub obs_type: String,
    pub title: Option<String>,
    pub subtitle: Option<String>,
    pub narrative: Option<String>,
    pub facts: String,
    pub concepts: String,
    pub files_read: String,
    pub files_modified: String,
    pub prompt_number: Option<i64>,
    pub discovery_tokens: i64,
    pub content_hash: String,
    pub origin: String,
    pub generated_by_model: Option<String>,
    pub agent_id: Option<String>,
    pub agent_type: Option<String>,
    pub metadata: Option<String>,
    pub occurrence_count: i64,
    pub reinforcement_dates: String,
    pub last_reinforced_epoch: Option<i64>,
    pub created_at: String,
    pub created_at_epoch: i64,
}

/// A JSON array column as strings (malformed → empty).
pub fn json_list(s: &str) -> Vec<String> {
    serde_json::from_str::<Vec<Value>>(s)
        .map(|v| v.into_iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

impl Observation {
    pub fn from_row(r: &SqlRow) -> rusqlite::Result<Self> {
        Ok(Self {
            id: r.get(0)?,
            memory_session_id: r.get(1)?,
            project: r.get(2)?,
            merged_into_project: r.get(3)?,
            platform_source: r.get(4)?,
            obs_type: r.get(5)?,
            title: r.get(6)?,
            subtitle: r.get(7)?,
            narrative: r.get(8)?,
            facts: r.get(9)?,
            concepts: r.get(10)?,
            files_read: r.get(11)?,
            files_modified: r.get(12)?,
            prompt_number: r.get(13)?,
            discovery_tokens: r.get(14)?,
            content_hash: r.get(15)?,
            origin: r.get(16)?,
            generated_by_model: r.get(17)?,
            agent_id: r.get(18)?,
            agent_type: r.get(19)?,
            metadata: r.get(20)?,
            occurrence_count: r.get(21)?,
            reinforcement_dates: r.get(22)?,
            last_reinforced_epoch: r.get(23)?,
            created_at: r.get(24)?,
            created_at_epoch: r.get(25)?,
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
        })
    }
}

pub const SUMMARY_COLS: &str = "s.id, s.memory_session_id, s.project, s.merged_into_project, s.platform_source, s.request, \
    s.investigated, s.learned, s.completed, s.next_steps, s.notes, s.files_read, s.files_edited, s.prompt_number, \
    s.discovery_tokens, s.created_at, s.created_at_epoch";

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    pub id: i64,
    pub memory_session_id: String,
    pub project: String,
    pub merged_into_project: Option<String>,
    pub platform_source: String,
    pub request: Option<String>,
    pub investigated: Option<String>,
    pub learned: Option<String>,
    pub completed: Option<String>,
    pub next_steps: Option<String>,
    pub notes: Option<String>,
    pub files_read: String,
    pub files_edited: String,
    pub prompt_number: Option<i64>,
    pub discovery_tokens: i64,
    pub created_at: String,
    pub created_at_epoch: i64,
}

impl Summary {
    pub fn from_row(r: &SqlRow) -> rusqlite::Result<Self> {
        Ok(Self {
            id: r.get(0)?,
            memory_session_id: r.get(1)?,
            project: r.get(2)?,
            merged_into_project: r.get(3)?,
            platform_source: r.get(4)?,
            request: r.get(5)?,
            investigated: r.get(6)?,
            learned: r.get(7)?,
            completed: r.get(8)?,
            next_steps: r.get(9)?,
            notes: r.get(10)?,
            files_read: r.get(11)?,
            files_edited: r.get(12)?,
            prompt_number: r.get(13)?,
            discovery_tokens: r.get(14)?,
            created_at: r.get(15)?,
            created_at_epoch: r.get(16)?,
        })
    }

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
        })
    }
}

pub const PROMPT_COLS: &str = "p.id, p.content_session_id, p.project, p.platform_source, p.prompt_number, p.prompt_text, \
    p.is_private, p.created_at, p.created_at_epoch";

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Prompt {
    pub id: i64,
    pub content_session_id: String,
    pub project: String,
    pub platform_source: String,
    pub prompt_number: i64,
    pub prompt_text: String,
    pub is_private: bool,
    pub created_at: String,
    pub created_at_epoch: i64,
}

impl Prompt {
    pub fn from_row(r: &SqlRow) -> rusqlite::Result<Self> {
        Ok(Self {
            id: r.get(0)?,
            content_session_id: r.get(1)?,
            project: r.get(2)?,
            platform_source: r.get(3)?,
            prompt_number: r.get(4)?,
            prompt_text: r.get(5)?,
            is_private: r.get::<_, i64>(6)? != 0,
            created_at: r.get(7)?,
            created_at_epoch: r.get(8)?,
        })
    }

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
            "prompt_text": self.prompt_text, "is_private": self.is_private, "read_tokens": self.read_tokens(),
            "created_at": self.created_at, "created_at_epoch": self.created_at_epoch,
        })
    }
}
