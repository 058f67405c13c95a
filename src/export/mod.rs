//! `memd export` / `memd import-md` files (issue 39): one file per observation — Markdown with a
//! front matter of every field (one `key: <JSON value>` line each, which YAML reads too) and the
//! narrative as its body, or the same record as JSON — plus an index. Pure: the CLI reads and
//! writes the files, the worker stores the records.

use serde_json::{Map, Value};

use crate::store::export_rows::ExportedObservation;

pub mod admit;
pub mod index;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ExportError {
    #[error("no front matter (the file must start with a --- line)")]
    NoFrontMatter,
    #[error("front matter line {0}: expected `key: <JSON value>`")]
    BadLine(usize),
    #[error("not an exported observation: {0}")]
    BadRecord(String),
}

/// The file formats of `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Md,
    Json,
}

impl Format {
    pub fn ext(self) -> &'static str {
        match self {
            Format::Md => "md",
            Format::Json => "json",
        }
    }
}

/// Where each observation's file goes, under the export directory.
pub const OBSERVATIONS_DIR: &str = "observations";

/// `000123-prices-are-cents.md`: the id (sorted), then a slug of the title.
pub fn file_name(e: &ExportedObservation, format: Format) -> String {
    let title = e.record.title.as_deref().unwrap_or("untitled").to_lowercase();
    let mut slug = String::new();
    for c in title.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c);
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
        if slug.len() >= 48 {
            break;
        }
    }
    let slug = slug.trim_end_matches('-');
    let slug = if slug.is_empty() { "untitled" } else { slug };
    format!("{:06}-{slug}.{}", e.id, format.ext())
}

/// The record's fields as the front matter names them (`type` for `obs_type`).
fn fields(e: &ExportedObservation) -> Map<String, Value> {
    let mut m = match serde_json::to_value(e) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    };
    if let Some(t) = m.remove("obs_type") {
        m.insert("type".into(), t);
    }
    m
}

/// One observation as Markdown.
pub fn to_markdown(e: &ExportedObservation) -> String {
    let mut m = fields(e);
    let narrative = m.remove("narrative");
    let mut out = String::from("---\n");
    let id = m.remove("id").unwrap_or(Value::Null);
    out.push_str(&format!("id: {id}\n"));
    for (k, v) in &m {
        out.push_str(&format!("{k}: {v}\n"));
    }
    match narrative {
        Some(Value::String(text)) => out.push_str(&format!("---\n\n{text}")),
        _ => out.push_str("narrative: null\n---\n"),
    }
    out
}

/// One observation as JSON.
pub fn to_json(e: &ExportedObservation) -> String {
    serde_json::to_string_pretty(e).unwrap_or_default() + "\n"
}

/// Reads back what [`to_markdown`] wrote.
pub fn from_markdown(text: &str) -> Result<ExportedObservation, ExportError> {
    let rest = text.strip_prefix("---\n").ok_or(ExportError::NoFrontMatter)?;
    let mut m = Map::new();
    let mut body = None;
    let mut consumed = 0;
    for (n, line) in rest.split_inclusive('\n').enumerate() {
        consumed += line.len();
        let line = line.strip_suffix('\n').unwrap_or(line);
        if line == "---" {
            body = Some(&rest[consumed..]);
            break;
        }
        let (k, v) = line.split_once(": ").ok_or(ExportError::BadLine(n + 2))?;
        let v: Value = serde_json::from_str(v).map_err(|_| ExportError::BadLine(n + 2))?;
        m.insert(k.to_string(), v);
    }
    let body = body.ok_or(ExportError::NoFrontMatter)?;
    if !m.contains_key("narrative") {
        m.insert(
            "narrative".into(),
            Value::String(body.strip_prefix('\n').unwrap_or(body).to_string()),
        );
    }
    if let Some(t) = m.remove("type") {
        m.insert("obs_type".into(), t);
    }
    record(Value::Object(m))
}

/// Reads back what [`to_json`] wrote.
pub fn from_json(text: &str) -> Result<ExportedObservation, ExportError> {
    record(serde_json::from_str(text).map_err(|e| ExportError::BadRecord(e.to_string()))?)
}

fn record(v: Value) -> Result<ExportedObservation, ExportError> {
    let e: ExportedObservation = serde_json::from_value(v).map_err(|e| ExportError::BadRecord(e.to_string()))?;
    let r = &e.record;
    if r.memory_session_id.is_empty() || r.content_hash.is_empty() || r.project.is_empty() || r.obs_type.is_empty() {
        return Err(ExportError::BadRecord(
            "memory_session_id, content_hash, project and type are required".into(),
        ));
    }
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::observation_record::ObservationRecord;

    fn sample() -> ExportedObservation {
        let mut r = ObservationRecord::new("m-1", "shop", "claude", "decision", "manual").created(1_780_000_000_000);
        r.title = Some("Prices are integer cents: no floats!".into());
        r.narrative = Some("We store cents.\n\n---\nA line of three dashes stays in the body.\n".into());
        r.facts = r#"["a","b"]"#.into();
        r.files_modified = r#"["src/price.rs"]"#.into();
        r.content_hash = "abc".into();
        r.superseded_by = Some(9);
        ExportedObservation {
            id: 42,
            record: r,
            session: Default::default(),
        }
    }

    #[test]
    fn markdown_and_json_read_back_the_same_record() {
        let e = sample();
        let md = to_markdown(&e);
        assert!(md.starts_with("---\nid: 42\n"), "{md}");
        assert!(
            md.contains("\ntype: \"decision\"\n") && md.contains("\nprovenance: \"user\"\n"),
            "{md}"
        );
        assert_eq!(from_markdown(&md).unwrap(), e);
        assert_eq!(from_json(&to_json(&e)).unwrap(), e);
        let mut none = sample();
        none.record.narrative = None;
        assert_eq!(from_markdown(&to_markdown(&none)).unwrap(), none);
        assert_eq!(file_name(&e, Format::Md), "000042-prices-are-integer-cents-no-floats.md");
    }

    #[test]
    fn a_broken_file_is_refused_with_its_line() {
        assert_eq!(from_markdown("# notes\n"), Err(ExportError::NoFrontMatter));
        assert_eq!(from_markdown("---\nid 42\n---\n"), Err(ExportError::BadLine(2)));
        assert_eq!(from_markdown("---\nid: {\n---\n"), Err(ExportError::BadLine(2)));
        assert!(matches!(from_markdown("---\nid: 1\n---\nbody"), Err(ExportError::BadRecord(_))));
        assert!(matches!(from_json("[]"), Err(ExportError::BadRecord(_))));
    }
}
