//! The document layout of docs/spec/retrieval.md §8.2: what is embedded for each stored row, under
//! which id, with which metadata. Shared by the embedded index and the Chroma mirror.

use rusqlite::{Connection, params_from_iter};
use serde_json::{Map, Value, json};

use crate::store::StoreError;

/// Characters of text embedded per document.
const TEXT_MAX_CHARS: usize = 8_000;
const TITLE_MAX_CHARS: usize = 200;
const LIST_MAX_CHARS: usize = 2_000;
const SUMMARY_FIELDS: [&str; 6] = ["request", "investigated", "learned", "completed", "next_steps", "notes"];

/// The three kinds of embedded rows (`vector_watermarks.doc_kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DocKind {
    Observation,
    Summary,
    Prompt,
}

impl DocKind {
    pub const ALL: [DocKind; 3] = [DocKind::Observation, DocKind::Summary, DocKind::Prompt];

    /// The `doc_kind` column value.
    pub fn as_str(self) -> &'static str {
        match self {
            DocKind::Observation => "observation",
            DocKind::Summary => "summary",
            DocKind::Prompt => "prompt",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// The metadata `doc_type` (Chroma).
    pub fn doc_type(self) -> &'static str {
        match self {
            DocKind::Observation => "observation",
            DocKind::Summary => "session_summary",
            DocKind::Prompt => "user_prompt",
        }
    }

    /// The table holding the rows.
    pub fn table(self) -> &'static str {
        match self {
            DocKind::Observation => "observations",
            DocKind::Summary => "session_summaries",
            DocKind::Prompt => "user_prompts",
        }
    }

    /// The prefix shared by every document id of row `id` (`obs_12_`, `summary_3_`, `prompt_7`).
    pub fn id_prefix(self, id: i64) -> String {
        match self {
            DocKind::Observation => format!("obs_{id}_"),
            DocKind::Summary => format!("summary_{id}_"),
            DocKind::Prompt => format!("prompt_{id}"),
        }
    }
}

/// One embeddable document.
#[derive(Debug, Clone)]
pub struct Document {
    pub doc_id: String,
    pub kind: DocKind,
    pub row_id: i64,
    /// `narrative`, `fact`, a summary field name, or `prompt`.
    pub field: String,
    pub text: String,
    pub project: String,
    pub platform_source: String,
    pub created_at_epoch: i64,
    /// The metadata of §8.2 (empty values omitted).
    pub metadata: Map<String, Value>,
}

fn cut(s: &str, max: usize) -> String {
    s.chars().take(max).collect()
}

fn json_list(s: &str) -> Vec<String> {
    serde_json::from_str::<Vec<Value>>(s)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|v| match v {
            Value::String(s) => Some(s),
            Value::Null => None,
            other => Some(other.to_string()),
        })
        .filter(|s| !s.trim().is_empty())
        .collect()
}

/// Common metadata of a row's documents.
struct RowMeta {
    row_id: i64,
    memory_session_id: String,
    project: String,
    merged_into_project: Option<String>,
    platform_source: String,
    created_at_epoch: i64,
    prompt_number: Option<i64>,
    extra: Map<String, Value>,
}

impl RowMeta {
    /// The columns id, memory_session_id, project, merged_into_project, platform_source,
    /// created_at_epoch and prompt_number of the observation and summary queries, by name.
    fn from_row(r: &rusqlite::Row<'_>, extra: Map<String, Value>) -> rusqlite::Result<Self> {
        Ok(Self {
            row_id: r.get("id")?,
            memory_session_id: r.get("memory_session_id")?,
            project: r.get("project")?,
            merged_into_project: r.get("merged_into_project")?,
            platform_source: r.get("platform_source")?,
            created_at_epoch: r.get("created_at_epoch")?,
            prompt_number: r.get("prompt_number")?,
            extra,
        })
    }

    fn document(&self, kind: DocKind, doc_id: String, field: &str, text: &str, fact_index: Option<usize>) -> Document {
        let mut m = Map::new();
        m.insert("sqlite_id".into(), json!(self.row_id));
        m.insert("doc_type".into(), json!(kind.doc_type()));
        let mut text_field = |k: &str, v: &str| {
            if !v.is_empty() {
                m.insert(k.into(), json!(v));
            }
        };
        text_field("memory_session_id", &self.memory_session_id);
        text_field("project", &self.project);
        text_field("merged_into_project", self.merged_into_project.as_deref().unwrap_or(""));
        text_field("platform_source", &self.platform_source);
        text_field("field_type", field);
        m.insert("created_at_epoch".into(), json!(self.created_at_epoch));
        if let Some(i) = fact_index {
            m.insert("fact_index".into(), json!(i));
        }
        if let Some(n) = self.prompt_number {
            m.insert("prompt_number".into(), json!(n));
        }
        m.extend(self.extra.clone());
        Document {
            doc_id,
            kind,
            row_id: self.row_id,
            field: field.to_string(),
            text: cut(text, TEXT_MAX_CHARS),
            project: self.project.clone(),
            platform_source: self.platform_source.clone(),
            created_at_epoch: self.created_at_epoch,
            metadata: m,
        }
    }
}

fn placeholders(n: usize) -> String {
    vec!["?"; n].join(",")
}

/// The documents of the given rows of one kind (rows that no longer exist yield none; a private
/// prompt yields none).
pub fn documents(conn: &Connection, kind: DocKind, ids: &[i64]) -> Result<Vec<Document>, StoreError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let ph = placeholders(ids.len());
    let mut out = Vec::new();
    match kind {
        DocKind::Observation => {
            let sql = format!(
                "SELECT id, memory_session_id, project, merged_into_project, platform_source, created_at_epoch, prompt_number,
                        type, title, subtitle, narrative, facts, concepts, files_read, files_modified
                 FROM observations WHERE id IN ({ph}) ORDER BY id"
            );
            let mut st = conn.prepare(&sql)?;
            let mut rows = st.query(params_from_iter(ids))?;
            while let Some(r) = rows.next()? {
                let title: Option<String> = r.get("title")?;
                let mut extra = Map::new();
                extra.insert("type".into(), json!(r.get::<_, String>("type")?));
                let title_s = title.clone().unwrap_or_default();
                if !title_s.is_empty() {
                    extra.insert("title".into(), json!(cut(&title_s, TITLE_MAX_CHARS)));
                }
                for key in ["concepts", "files_read", "files_modified"] {
                    let joined = json_list(&r.get::<_, String>(key)?).join(",");
                    if !joined.is_empty() {
                        extra.insert(key.into(), json!(cut(&joined, LIST_MAX_CHARS)));
                    }
                }
                let meta = RowMeta::from_row(r, extra)?;
                let parts: Vec<String> = [
                    title,
                    r.get::<_, Option<String>>("subtitle")?,
                    r.get::<_, Option<String>>("narrative")?,
                ]
                .into_iter()
                .flatten()
                .filter(|s| !s.trim().is_empty())
                .collect();
                let id = meta.row_id;
                // The title alone as well: a short text the query's intent meets without the
                // commands and outputs of the narrative around it (measured: docs/decisions.md
                // "Hybrid fusion").
                if parts.len() > 1 && !title_s.trim().is_empty() {
                    out.push(meta.document(kind, format!("obs_{id}_title"), "title", title_s.trim(), None));
                }
                out.push(meta.document(kind, format!("obs_{id}_narrative"), "narrative", &parts.join("\n"), None));
                for (i, fact) in json_list(&r.get::<_, String>("facts")?).iter().enumerate() {
                    out.push(meta.document(kind, format!("obs_{id}_fact_{i}"), "fact", fact, Some(i)));
                }
            }
        }
        DocKind::Summary => {
            let sql = format!(
                "SELECT id, memory_session_id, project, merged_into_project, platform_source, created_at_epoch, prompt_number,
                        request, investigated, learned, completed, next_steps, notes
                 FROM session_summaries WHERE id IN ({ph}) ORDER BY id"
            );
            let mut st = conn.prepare(&sql)?;
            let mut rows = st.query(params_from_iter(ids))?;
            while let Some(r) = rows.next()? {
                let meta = RowMeta::from_row(r, Map::new())?;
                for field in SUMMARY_FIELDS {
                    let text: Option<String> = r.get(field)?;
                    if let Some(t) = text.filter(|t| !t.trim().is_empty()) {
                        out.push(meta.document(kind, format!("summary_{}_{field}", meta.row_id), field, &t, None));
                    }
                }
            }
        }
        DocKind::Prompt => {
            let sql = format!(
                "SELECT p.id, s.memory_session_id, p.project, p.platform_source, p.created_at_epoch, p.prompt_number, p.prompt_text
                 FROM user_prompts p JOIN sdk_sessions s ON s.id = p.session_db_id
                 WHERE p.id IN ({ph}) AND p.is_private = 0 ORDER BY p.id"
            );
            let mut st = conn.prepare(&sql)?;
            let mut rows = st.query(params_from_iter(ids))?;
            while let Some(r) = rows.next()? {
                let meta = RowMeta {
                    row_id: r.get("id")?,
                    memory_session_id: r.get("memory_session_id")?,
                    project: r.get("project")?,
                    merged_into_project: None,
                    platform_source: r.get("platform_source")?,
                    created_at_epoch: r.get("created_at_epoch")?,
                    prompt_number: r.get("prompt_number")?,
                    extra: Map::new(),
                };
                let text: String = r.get("prompt_text")?;
                if !text.trim().is_empty() {
                    out.push(meta.document(kind, format!("prompt_{}", meta.row_id), "prompt", &text, None));
                }
            }
        }
    }
    Ok(out)
}

/// Row ids of `kind` above `after`, ascending, at most `limit`.
pub fn row_ids_after(conn: &Connection, kind: DocKind, after: i64, limit: usize) -> Result<Vec<i64>, StoreError> {
    let sql = format!("SELECT id FROM {} WHERE id > ?1 ORDER BY id LIMIT ?2", kind.table());
    let mut st = conn.prepare_cached(&sql)?;
    let ids = st
        .query_map(rusqlite::params![after, limit as i64], |r| r.get(0))?
        .collect::<Result<Vec<i64>, _>>()?;
    Ok(ids)
}
