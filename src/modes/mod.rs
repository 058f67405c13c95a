//! Observer modes (`docs/spec/pipeline.md` §18).
//!
//! A mode is a JSON document: a name, the ordered observation types (the first one is the default
//! type and the legend order), the observation concepts, and the prompt texts the observer request
//! is built from (the observer's `prompt.rs`). Mode texts are never templated, so the fixed part of
//! every observer request (Part A) depends on the mode alone.
//!
//! Loading (`load_mode`) looks in the given directories first (callers pass `MEMD_MODES_DIR`, then
//! `<data>/modes/`, see [`mode_search_dirs`]) and then in the files built into the binary from the
//! repository's `modes/`. `parent--override` ids deep-merge the override over the parent; language
//! variants without a file are synthesised. Every fallback is reported as a warning string so the
//! caller can log it and show it in `memd status`.

mod load;

pub use load::{BUILTIN_MODES, DEFAULT_MODE_ID, LANGUAGES, deep_merge, is_valid_mode_id, language_name, load_mode, mode_search_dirs};

use serde::{Deserialize, Deserializer, Serialize};
use std::collections::BTreeMap;

/// Every prompt key the pipeline reads from a mode (§18). Unknown keys in a file are ignored,
/// missing ones read as empty.
pub const PROMPT_KEYS: &[&str] = &[
    "system_identity",
    "observer_role",
    "spatial_awareness",
    "recording_focus",
    "skip_guidance",
    "type_guidance",
    "concept_guidance",
    "field_guidance",
    "output_format_header",
    "format_examples",
    "footer",
    "xml_title_placeholder",
    "xml_subtitle_placeholder",
    "xml_fact_placeholder",
    "xml_narrative_placeholder",
    "xml_concept_placeholder",
    "xml_file_placeholder",
    "xml_summary_request_placeholder",
    "xml_summary_investigated_placeholder",
    "xml_summary_learned_placeholder",
    "xml_summary_completed_placeholder",
    "xml_summary_next_steps_placeholder",
    "xml_summary_notes_placeholder",
    "header_memory_start",
    "header_memory_continued",
    "continuation_greeting",
    "continuation_instruction",
    "header_summary_checkpoint",
    "summary_instruction",
    "summary_context_label",
    "summary_format_instruction",
    "summary_footer",
];

/// One observation type: `{id, label, description, emoji, work_emoji}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObservationType {
    pub id: String,
    #[serde(default)]
    pub label: String,
    #[serde(default)]
    pub description: String,
    /// Legend glyph (BMP only in the built-in modes).
    #[serde(default)]
    pub emoji: String,
    /// Glyph used for work-in-progress lines in injected context.
    #[serde(default)]
    pub work_emoji: String,
}

/// One observation concept: `{id, description, label?}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObservationConcept {
    pub id: String,
    #[serde(default)]
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// A fully resolved mode (after any `parent--override` merge).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mode {
    /// The id this mode was resolved as (`code`, `code--chill`, …); not part of the file.
    #[serde(skip)]
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Free-form version; numbers in a file are accepted and kept as text.
    #[serde(default, deserialize_with = "string_or_number")]
    pub version: String,
    pub observation_types: Vec<ObservationType>,
    #[serde(default)]
    pub observation_concepts: Vec<ObservationConcept>,
    /// Prompt texts; non-string values (unknown keys of other shapes) are dropped.
    #[serde(default, deserialize_with = "string_map")]
    pub prompts: BTreeMap<String, String>,
}

/// Fallback glyph for a type the mode does not define (unknown types are kept by the parser).
pub const UNKNOWN_TYPE_GLYPH: &str = "•";

impl Mode {
    /// Type ids in mode order (the first is the default type).
    pub fn type_ids(&self) -> Vec<&str> {
        self.observation_types.iter().map(|t| t.id.as_str()).collect()
    }

    /// Concept ids in mode order.
    pub fn concept_ids(&self) -> Vec<&str> {
        self.observation_concepts.iter().map(|c| c.id.as_str()).collect()
    }

    /// The default observation type: the first type of the mode.
    pub fn default_type(&self) -> &str {
        self.observation_types.first().map_or("", |t| t.id.as_str())
    }

    /// Whether `type_id` is one of the mode's types.
    pub fn has_type(&self, type_id: &str) -> bool {
        self.observation_types.iter().any(|t| t.id == type_id)
    }

    /// Whether `concept_id` is one of the mode's concepts.
    pub fn has_concept(&self, concept_id: &str) -> bool {
        self.observation_concepts.iter().any(|c| c.id == concept_id)
    }

    /// A prompt text; missing keys read as empty.
    pub fn prompt(&self, key: &str) -> &str {
        self.prompts.get(key).map_or("", String::as_str)
    }

    /// The type's definition, when the mode has it.
    pub fn observation_type(&self, type_id: &str) -> Option<&ObservationType> {
        self.observation_types.iter().find(|t| t.id == type_id)
    }

    /// Legend glyph of a type; [`UNKNOWN_TYPE_GLYPH`] for unknown types.
    pub fn glyph(&self, type_id: &str) -> &str {
        match self.observation_type(type_id) {
            Some(t) if !t.emoji.is_empty() => &t.emoji,
            _ => UNKNOWN_TYPE_GLYPH,
        }
    }

    /// Work glyph of a type; falls back to the legend glyph, then [`UNKNOWN_TYPE_GLYPH`].
    pub fn work_glyph(&self, type_id: &str) -> &str {
        match self.observation_type(type_id) {
            Some(t) if !t.work_emoji.is_empty() => &t.work_emoji,
            _ => self.glyph(type_id),
        }
    }

    /// Human label of a type; the id itself for unknown types.
    pub fn type_label<'a>(&'a self, type_id: &'a str) -> &'a str {
        match self.observation_type(type_id) {
            Some(t) if !t.label.is_empty() => &t.label,
            _ => type_id,
        }
    }
}

fn string_or_number<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Version {
        Text(String),
        Number(serde_json::Number),
    }
    Ok(match Option::<Version>::deserialize(d)? {
        Some(Version::Text(s)) => s,
        Some(Version::Number(n)) => n.to_string(),
        None => String::new(),
    })
}

fn string_map<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<String, String>, D::Error> {
    let raw = BTreeMap::<String, serde_json::Value>::deserialize(d)?;
    Ok(raw
        .into_iter()
        .filter_map(|(k, v)| match v {
            serde_json::Value::String(s) => Some((k, s)),
            _ => None,
        })
        .collect())
}

#[cfg(test)]
mod tests;
