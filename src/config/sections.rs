//! Typed groups of settings used by one part of memd each: retention, the observer provider (with
//! its secret keys), context injection, the hooks, vectors.

use std::path::{Path, PathBuf};

use super::keys::{self, Key};
use super::{RawSettings, Settings};

/// Retention rules of docs/spec/storage.md §6 (0 disables a rule).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetentionSettings {
    pub tool_uses_days: u64,
    pub db_max_mb: u64,
    pub failed_days: u64,
    pub observations_days: u64,
    pub summaries_days: u64,
    pub prompts_days: u64,
    pub token_usage_days: u64,
    /// Hours between scheduled backups (0 = none) and how many are kept.
    pub backup_interval_hours: u64,
    pub backup_keep: u64,
    /// Code anchors and staleness from git (issue 38).
    pub freshness: bool,
    /// Hours between consolidation passes (0 = none scheduled).
    pub consolidate_interval_hours: u64,
}

/// A secret value (provider key): never printed by `Debug` or `Display`.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: &str) -> Option<Self> {
        let v = value.trim();
        (!v.is_empty()).then(|| Self(v.to_string()))
    }
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// Observer provider settings (docs/design.md "The observer").
#[derive(Debug, Clone, Default)]
pub struct ProviderSettings {
    pub provider: String,
    pub model: String,
    pub anthropic_api_key: Option<Secret>,
    pub anthropic_base_url: String,
    pub openai_api_key: Option<Secret>,
    pub openai_base_url: String,
    pub gemini_api_key: Option<Secret>,
    pub gemini_base_url: String,
    pub claude_path: String,
    pub timeout_ms: u64,
    pub max_attempts: u32,
    pub max_defer_ms: u64,
    pub field_max_chars: usize,
    /// Provider calls open at once across all sessions.
    pub concurrency: usize,
}

/// Retrieval settings of docs/spec/retrieval.md §9 used by the worker.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextSettings {
    pub observations: usize,
    pub summaries: usize,
    pub full_count: usize,
    pub full_field_facts: bool,
    pub show_stats: bool,
    pub show_last_summary: bool,
    pub max_chars: usize,
    pub reinforce_alpha: f64,
    pub semantic_limit: usize,
    /// The work-state section (issue 39): on, its cap, and the age that marks an item stale.
    pub work_state: bool,
    pub work_state_max_chars: usize,
    pub work_stale_days: u64,
    /// A record injected this many times and never used leaves the index (issue 53; 0: never).
    pub drop_unused_after: u64,
}

impl Default for ContextSettings {
    /// The values of [`DEFAULTS`].
    fn default() -> Self {
        Settings::resolve(PathBuf::new(), &RawSettings::default(), None).context
    }
}

/// Connection hygiene of the HTTP ingress (`MEMD_HTTP_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpSettings {
    pub max_connections: usize,
    pub header_timeout_ms: u64,
    pub body_timeout_ms: u64,
    pub idle_timeout_ms: u64,
}

/// The settings the hooks act on (docs/spec/hooks.md §2.5). The hook itself reads these keys through
/// the same [`RawSettings`] rules; the worker resolves them too so both say the same.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookSettings {
    pub autostart: bool,
    pub budget_ms: u64,
    pub async_budget_ms: u64,
    pub spool_max_files: u64,
    pub show_terminal_output: bool,
    pub semantic_inject: bool,
    pub file_context: bool,
    pub action_memory: bool,
    pub read_gate: bool,
    pub read_gate_min_bytes: u64,
}

impl HookSettings {
    pub fn resolve(raw: &RawSettings, w: &mut Vec<String>) -> Self {
        Self {
            autostart: raw.flag(&keys::AUTOSTART, w),
            budget_ms: raw.int(&keys::HOOK_BUDGET_MS, w),
            async_budget_ms: raw.int(&keys::HOOK_ASYNC_BUDGET_MS, w),
            spool_max_files: raw.int(&keys::SPOOL_MAX_FILES, w),
            show_terminal_output: raw.flag(&keys::CONTEXT_SHOW_TERMINAL_OUTPUT, w),
            semantic_inject: raw.flag(&keys::SEMANTIC_INJECT, w),
            file_context: raw.flag(&keys::FILE_CONTEXT, w),
            action_memory: raw.flag(&keys::ACTION_MEMORY, w),
            read_gate: raw.flag(&keys::READ_GATE, w),
            read_gate_min_bytes: raw.int(&keys::READ_GATE_MIN_BYTES, w),
        }
    }

    /// The resolved value of a hook flag key (None: not one of them).
    pub fn flag(&self, key: &Key) -> Option<bool> {
        Some(match key.name {
            n if n == keys::AUTOSTART.name => self.autostart,
            n if n == keys::CONTEXT_SHOW_TERMINAL_OUTPUT.name => self.show_terminal_output,
            n if n == keys::SEMANTIC_INJECT.name => self.semantic_inject,
            n if n == keys::FILE_CONTEXT.name => self.file_context,
            n if n == keys::ACTION_MEMORY.name => self.action_memory,
            n if n == keys::READ_GATE.name => self.read_gate,
            _ => return None,
        })
    }
}

/// The embedding model's directory name (and the model memd runs).
pub const EMBED_MODEL_NAME: &str = "all-MiniLM-L6-v2";

/// How embeddings are computed (`MEMD_EMBEDDINGS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmbeddingsMode {
    /// In-process all-MiniLM-L6-v2 from the model directory.
    Local,
    /// Vectors off: keyword search only.
    Off,
}

/// Which encoder turns text into vectors (`MEMD_EMBED_ENCODER`; docs/decisions.md "A static encoder
/// beside the transformer").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EncoderKind {
    /// The token table distilled from the model: a lookup per token.
    Static,
    /// The full transformer.
    Transformer,
}

impl EncoderKind {
    /// `MEMD_EMBED_ENCODER` by the settings table's rule (an unknown word warns and is the default).
    pub fn resolve(raw: &RawSettings, w: &mut Vec<String>) -> Self {
        match raw.choice(&keys::EMBED_ENCODER, w) {
            "static" => Self::Static,
            _ => Self::Transformer,
        }
    }

    /// The name recorded with every vector: a change re-embeds everything.
    pub fn model_name(self) -> &'static str {
        match self {
            Self::Static => "all-MiniLM-L6-v2-static",
            Self::Transformer => EMBED_MODEL_NAME,
        }
    }
}

/// The transformer's dense kernel (`MEMD_EMBED_KERNEL`; docs/decisions.md "Dense layers in 8-bit
/// integers"): `auto` is int8 where the CPU runs it natively (AVX-512 VNNI), else f16; `int8` asked
/// of a CPU without VNNI warns and runs f16 (its portable integer loop is many times slower). Not
/// part of the model name: the two kernels' vectors agree to a cosine of 0.996 or more, so a change does
/// not re-embed.
pub fn resolve_kernel(raw: &RawSettings, w: &mut Vec<String>) -> memd_bert::Kernel {
    use memd_bert::Kernel;
    match raw.choice(&keys::EMBED_KERNEL, w) {
        "f16" => Kernel::F16,
        "int8" if Kernel::best() != Kernel::Int8 => {
            w.push("MEMD_EMBED_KERNEL=int8 needs AVX-512 VNNI, which this CPU lacks; using f16".into());
            Kernel::F16
        }
        _ => Kernel::best(),
    }
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

/// How hybrid search fuses its keyword and vector lists (`MEMD_SEARCH_*`; chosen on the
/// benchmark, docs/decisions.md "Hybrid fusion"): Σ weight / (k + rank) over the lists a row is in,
/// vector candidates below the similarity floor left out.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fusion {
    pub keyword_weight: f64,
    pub vector_weight: f64,
    pub vector_floor: f32,
    /// The nearest vector candidate's similarity below which the keyword list's first row keeps
    /// first place in hybrid search.
    pub vector_confident: f32,
    pub rrf_k: f64,
}

impl Default for Fusion {
    fn default() -> Self {
        let d = |k: &keys::Key| k.default.parse::<f64>().unwrap_or(0.0);
        Self {
            keyword_weight: d(&keys::SEARCH_KEYWORD_WEIGHT),
            vector_weight: d(&keys::SEARCH_VECTOR_WEIGHT),
            vector_floor: d(&keys::SEARCH_VECTOR_FLOOR) as f32,
            vector_confident: d(&keys::SEARCH_VECTOR_CONFIDENT) as f32,
            rrf_k: d(&keys::SEARCH_RRF_K),
        }
    }
}

impl Fusion {
    pub fn resolve(raw: &RawSettings, w: &mut Vec<String>) -> Self {
        Self {
            keyword_weight: raw.float(&keys::SEARCH_KEYWORD_WEIGHT, w),
            vector_weight: raw.float(&keys::SEARCH_VECTOR_WEIGHT, w),
            vector_floor: raw.float(&keys::SEARCH_VECTOR_FLOOR, w) as f32,
            vector_confident: raw.float(&keys::SEARCH_VECTOR_CONFIDENT, w) as f32,
            rrf_k: raw.float(&keys::SEARCH_RRF_K, w),
        }
    }
}

/// Vector settings (docs/spec/retrieval.md §8.1).
#[derive(Debug, Clone)]
pub struct VectorSettings {
    pub mode: EmbeddingsMode,
    pub encoder: EncoderKind,
    /// The transformer's dense kernel.
    pub kernel: memd_bert::Kernel,
    pub model_dir: PathBuf,
    pub chroma: Option<ChromaSettings>,
    /// First retry delay of the Chroma mirror after a failure (doubles up to 5 min).
    pub chroma_retry_ms: u64,
    pub query_budget_ms: u64,
    pub fusion: Fusion,
}

/// `<data>/models/all-MiniLM-L6-v2`: where `memd models install` puts the model.
pub fn default_model_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("models").join(EMBED_MODEL_NAME)
}

impl VectorSettings {
    pub fn resolve(data_dir: &Path, raw: &RawSettings, w: &mut Vec<String>) -> Self {
        // Anything but `local` turns vectors off (an embedder memd does not have must not silently
        // become the local one); `off` and `false` are accepted for `none`.
        let mode = match raw.given(&keys::EMBEDDINGS).map(str::to_ascii_lowercase).as_deref() {
            None | Some("local") => EmbeddingsMode::Local,
            Some("none" | "off" | "false") => EmbeddingsMode::Off,
            Some(other) => {
                w.push(format!("MEMD_EMBEDDINGS={other:?} is not supported (local, none); vectors are off"));
                EmbeddingsMode::Off
            }
        };
        let model_dir = match raw.given(&keys::EMBED_MODEL_DIR) {
            Some(v) => PathBuf::from(v),
            None => default_model_dir(data_dir),
        };
        let url = raw.text(&keys::CHROMA_URL);
        let chroma = (!url.is_empty()).then(|| ChromaSettings {
            url: url.trim_end_matches('/').to_string(),
            tenant: raw.text(&keys::CHROMA_TENANT),
            database: raw.text(&keys::CHROMA_DATABASE),
            token: Secret::new(&raw.text(&keys::CHROMA_TOKEN)),
        });
        let encoder = EncoderKind::resolve(raw, w);
        Self {
            mode,
            encoder,
            kernel: resolve_kernel(raw, w),
            model_dir,
            chroma,
            chroma_retry_ms: raw.int(&keys::CHROMA_RETRY_MS, w),
            query_budget_ms: raw.int(&keys::VECTOR_QUERY_BUDGET_MS, w),
            fusion: Fusion::resolve(raw, w),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vector_defaults_are_local_sqlite_in_the_data_dir() {
        let mut w = Vec::new();
        let s = VectorSettings::resolve(Path::new("/d"), &RawSettings::default(), &mut w);
        assert_eq!(s.mode, EmbeddingsMode::Local);
        assert_eq!(s.model_dir, PathBuf::from("/d/models/all-MiniLM-L6-v2"));
        assert!(s.chroma.is_none());
        assert_eq!(s.encoder, EncoderKind::Transformer);
        assert_eq!(s.kernel, memd_bert::Kernel::best());
        assert!(w.is_empty());
    }

    #[test]
    fn the_dense_kernel_is_chosen_by_name_and_int8_only_where_it_runs() {
        let kernel = |v: &str, w: &mut Vec<String>| {
            let raw = RawSettings::from_pairs([("MEMD_EMBED_KERNEL".to_string(), v.to_string())]);
            VectorSettings::resolve(Path::new("/d"), &raw, w).kernel
        };
        let mut w = Vec::new();
        assert_eq!(kernel("F16", &mut w), memd_bert::Kernel::F16);
        assert_eq!(kernel("auto", &mut w), memd_bert::Kernel::best());
        assert!(w.is_empty(), "{w:?}");
        let int8 = kernel("int8", &mut w);
        if memd_bert::Kernel::best() == memd_bert::Kernel::Int8 {
            assert_eq!((int8, w.len()), (memd_bert::Kernel::Int8, 0));
        } else {
            assert_eq!((int8, w.len()), (memd_bert::Kernel::F16, 1), "int8 without VNNI warns and runs f16");
        }
        w.clear();
        assert_eq!(kernel("bf16", &mut w), memd_bert::Kernel::best(), "an unknown word is the default");
        assert_eq!(w.len(), 1, "and says so");
    }

    #[test]
    fn the_static_encoder_is_chosen_by_name_and_records_its_own_model_name() {
        let raw = RawSettings::from_pairs([("MEMD_EMBED_ENCODER".to_string(), "Static".to_string())]);
        let mut w = Vec::new();
        let s = VectorSettings::resolve(Path::new("/d"), &raw, &mut w);
        assert_eq!(s.encoder, EncoderKind::Static);
        assert!(w.is_empty(), "{w:?}");
        assert_ne!(EncoderKind::Static.model_name(), EncoderKind::Transformer.model_name());
        let raw = RawSettings::from_pairs([("MEMD_EMBED_ENCODER".to_string(), "onnx".to_string())]);
        let s = VectorSettings::resolve(Path::new("/d"), &raw, &mut w);
        assert_eq!(s.encoder, EncoderKind::Transformer, "an unknown encoder is the default");
        assert_eq!(w.len(), 1, "and says so");
    }

    #[test]
    fn chroma_token_stays_hidden_and_unknown_embedders_warn() {
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
