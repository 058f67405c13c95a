//! Vector settings (docs/spec/retrieval.md §8.1), resolved from the raw settings once at start.

use std::path::{Path, PathBuf};

use crate::config::{RawSettings, Secret};

/// How embeddings are computed (`MEMD_EMBEDDINGS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmbeddingsMode {
    /// In-process all-MiniLM-L6-v2 from the model directory.
    Local,
    /// Vectors off: keyword search only.
    Off,
}

/// A Chroma server to mirror the vectors into (`MEMD_CHROMA_*`).
#[derive(Debug, Clone)]
pub struct ChromaSettings {
    pub url: String,
    pub tenant: String,
    pub database: String,
    /// Sent as `x-chroma-token`; hidden from `Debug`.
    pub token: Option<Secret>,
}

#[derive(Debug, Clone)]
pub struct VectorSettings {
    pub mode: EmbeddingsMode,
    pub model_dir: PathBuf,
    pub chroma: Option<ChromaSettings>,
    /// First retry delay of the Chroma mirror after a failure (doubles up to 5 min).
    pub chroma_retry_ms: u64,
}

/// `<data>/models/all-MiniLM-L6-v2`: where `memd models install` puts the model.
pub fn default_model_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("models").join(super::embedder::MODEL_NAME)
}

impl VectorSettings {
    pub fn resolve(data_dir: &Path, raw: &RawSettings, warnings: &mut Vec<String>) -> Self {
        let mode = match raw.get_or_default("MEMD_EMBEDDINGS").trim().to_ascii_lowercase().as_str() {
            "local" => EmbeddingsMode::Local,
            "none" | "off" | "false" => EmbeddingsMode::Off,
            other => {
                warnings.push(format!("MEMD_EMBEDDINGS={other:?} is not supported (local, none); vectors are off"));
                EmbeddingsMode::Off
            }
        };
        let model_dir = match raw.get("MEMD_EMBED_MODEL_DIR").map(str::trim).filter(|v| !v.is_empty()) {
            Some(v) => PathBuf::from(v),
            None => default_model_dir(data_dir),
        };
        let text = |key: &str| raw.get_or_default(key).trim().to_string();
        let url = text("MEMD_CHROMA_URL");
        let chroma = (!url.is_empty()).then(|| ChromaSettings {
            url: url.trim_end_matches('/').to_string(),
            tenant: text("MEMD_CHROMA_TENANT"),
            database: text("MEMD_CHROMA_DATABASE"),
            token: Secret::new(raw.get_or_default("MEMD_CHROMA_TOKEN")),
        });
        let chroma_retry_ms = raw
            .get_or_default("MEMD_CHROMA_RETRY_MS")
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|n| (10..=300_000).contains(n))
            .unwrap_or(5_000);
        Self {
            mode,
            model_dir,
            chroma,
            chroma_retry_ms,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_local_sqlite_in_the_data_dir() {
        let mut w = Vec::new();
        let s = VectorSettings::resolve(Path::new("/d"), &RawSettings::default(), &mut w);
        assert_eq!(s.mode, EmbeddingsMode::Local);
        assert_eq!(s.model_dir, PathBuf::from("/d/models/all-MiniLM-L6-v2"));
        assert!(s.chroma.is_none());
        assert!(w.is_empty());
    }

    #[test]
    fn chroma_token_stays_hidden_and_unknown_modes_warn() {
        let raw = RawSettings::from_pairs([
            ("MEMD_CHROMA_URL".to_string(), "http://127.0.0.1:8000/".to_string()),
            ("MEMD_CHROMA_TOKEN".into(), "tok-secret".into()),
            ("MEMD_EMBEDDINGS".into(), "magic".into()),
        ]);
        let mut w = Vec::new();
        let s = VectorSettings::resolve(Path::new("/d"), &raw, &mut w);
        let c = s.chroma.as_ref().unwrap();
        assert_eq!(c.url, "http://127.0.0.1:8000");
        assert_eq!(c.tenant, "default_tenant");
        assert!(!format!("{s:?}").contains("tok-secret"));
        assert_eq!(s.mode, EmbeddingsMode::Off);
        assert_eq!(w.len(), 1);
    }
}
