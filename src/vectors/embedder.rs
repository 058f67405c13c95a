//! The in-process sentence embedder: all-MiniLM-L6-v2 (BERT, 6 layers, 384 dims) on candle.
//!
//! Mean pooling over the attention mask, then L2 normalisation — the same vectors as
//! sentence-transformers. Loading and inference are CPU-bound and blocking: callers run them on a
//! blocking thread ([`super::service::EmbedService`] does).

use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

use super::VectorError;

/// The model name recorded with every vector (`vectors.model`, Chroma metadata).
pub const MODEL_NAME: &str = crate::config::EMBED_MODEL_NAME;
/// Output dimension of the model.
pub const DIM: usize = 384;
/// Tokens per text: the length all-MiniLM-L6-v2 was trained on (sentence-transformers' default
/// `max_seq_length` is 256). Measured on `memd eval` (docs/decisions.md "Memory quality"): 1.8× the
/// backfill rate of 256 with equal or better recall.
const MAX_TOKENS: usize = 128;
/// The files a model directory must hold.
pub const MODEL_FILES: [&str; 3] = ["model.safetensors", "tokenizer.json", "config.json"];

/// True when `dir` holds every file of [`MODEL_FILES`].
pub fn model_present(dir: &Path) -> bool {
    MODEL_FILES.iter().all(|f| dir.join(f).is_file())
}

/// A loaded model with its tokenizer.
pub struct Embedder {
    model: BertModel,
    tokenizer: Tokenizer,
    device: Device,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Embedder(all-MiniLM-L6-v2)")
    }
}

fn model_err(dir: &Path, e: impl std::fmt::Display) -> VectorError {
    VectorError::Model(format!("{}: {e}", dir.display()))
}

impl Embedder {
    /// Loads the model from `dir` (`model.safetensors`, `tokenizer.json`, `config.json`). Blocking.
    pub fn load(dir: &Path) -> Result<Self, VectorError> {
        let path = |f: &str| -> PathBuf { dir.join(f) };
        let config_text = std::fs::read_to_string(path("config.json")).map_err(|e| model_err(dir, e))?;
        let config: Config = serde_json::from_str(&config_text).map_err(|e| model_err(dir, e))?;
        let mut tokenizer = Tokenizer::from_file(path("tokenizer.json")).map_err(|e| model_err(dir, e))?;
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..Default::default()
        }));
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..Default::default()
            }))
            .map_err(|e| model_err(dir, e))?;
        let weights = std::fs::read(path("model.safetensors")).map_err(|e| model_err(dir, e))?;
        let device = Device::Cpu;
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &device).map_err(|e| model_err(dir, e))?;
        let model = BertModel::load(vb, &config).map_err(|e| model_err(dir, e))?;
        Ok(Self { model, tokenizer, device })
    }

    /// Embeds `texts` in one forward pass: one L2-normalised vector of [`DIM`] floats per text.
    pub fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, VectorError> {
        self.embed_counted(texts).map(|(v, _)| v)
    }

    /// Like [`Embedder::embed`], also returning the number of real (unpadded) tokens it read.
    pub fn embed_counted(&self, texts: &[String]) -> Result<(Vec<Vec<f32>>, u64), VectorError> {
        if texts.is_empty() {
            return Ok((Vec::new(), 0));
        }
        let inputs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let enc = self
            .tokenizer
            .encode_batch(inputs, true)
            .map_err(|e| VectorError::Embed(e.to_string()))?;
        let rows = enc.len();
        let width = enc.first().map(|e| e.get_ids().len()).unwrap_or(0).max(1);
        let mut ids = Vec::with_capacity(rows * width);
        let mut mask = Vec::with_capacity(rows * width);
        for e in &enc {
            ids.extend(e.get_ids().iter().copied().chain(std::iter::repeat(0)).take(width));
            mask.extend(e.get_attention_mask().iter().copied().chain(std::iter::repeat(0)).take(width));
        }
        let tokens: u64 = mask.iter().map(|m| u64::from(*m)).sum();
        let run = || -> candle_core::Result<Vec<Vec<f32>>> {
            let ids = Tensor::from_vec(ids, (rows, width), &self.device)?;
            let mask = Tensor::from_vec(mask, (rows, width), &self.device)?;
            let types = ids.zeros_like()?;
            let hidden = self.model.forward(&ids, &types, Some(&mask))?;
            // Mean pooling over real tokens.
            let mask_f = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
            let summed = hidden.broadcast_mul(&mask_f)?.sum(1)?;
            let counts = mask_f.sum(1)?.clamp(1e-9f32, f32::MAX)?;
            let mean = summed.broadcast_div(&counts)?;
            let norm = mean.sqr()?.sum_keepdim(1)?.sqrt()?.clamp(1e-12f32, f32::MAX)?;
            mean.broadcast_div(&norm)?.to_vec2::<f32>()
        };
        run().map(|v| (v, tokens)).map_err(|e| VectorError::Embed(e.to_string()))
    }
}

impl Embedder {
    /// The tokenizer (the static embedder shares its vocabulary).
    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }

    /// The mean of the last hidden states of each row of `ids` (all rows `width` long, no padding),
    /// not normalised: the distillation of the static table reads the model this way.
    pub fn hidden_means(&self, ids: Vec<u32>, width: usize) -> Result<Vec<Vec<f32>>, VectorError> {
        let rows = ids.len() / width.max(1);
        let run = || -> candle_core::Result<Vec<Vec<f32>>> {
            let ids = Tensor::from_vec(ids, (rows, width), &self.device)?;
            let types = ids.zeros_like()?;
            let mask = ids.ones_like()?;
            let hidden = self.model.forward(&ids, &types, Some(&mask))?;
            hidden.mean(1)?.to_vec2::<f32>()
        };
        run().map_err(|e| VectorError::Embed(e.to_string()))
    }
}

/// Cosine similarity of two L2-normalised vectors (their dot product).
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The model directory of the tests (`MEMD_TEST_MODEL_DIR`, set by `.ci/run`), or None with a note.
    pub(crate) fn test_model_dir() -> Option<PathBuf> {
        match std::env::var("MEMD_TEST_MODEL_DIR") {
            Ok(d) if model_present(Path::new(&d)) => Some(PathBuf::from(d)),
            _ => {
                eprintln!("skipped: MEMD_TEST_MODEL_DIR does not hold the all-MiniLM-L6-v2 files");
                None
            }
        }
    }

    #[test]
    fn a_missing_model_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!model_present(dir.path()));
        assert!(matches!(Embedder::load(dir.path()), Err(VectorError::Model(_))));
    }

    /// Two paraphrase pairs and an unrelated sentence (the reference cosines index these).
    pub(crate) fn sample_texts() -> Vec<String> {
        [
            "A man is playing a guitar.",
            "Someone is strumming a guitar.",
            "The stock market fell sharply today.",
            "graceful shutdown on SIGTERM: drain requests, flush the store",
            "how do we stop the daemon cleanly",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }

    #[test]
    fn embeddings_match_reference_similarities() {
        let Some(dir) = test_model_dir() else { return };
        let e = Embedder::load(&dir).unwrap();
        let texts = sample_texts();
        let v = e.embed(&texts).unwrap();
        assert_eq!(v.len(), 5);
        for x in &v {
            assert_eq!(x.len(), DIM);
            assert!((dot(x, x) - 1.0).abs() < 1e-4, "unit norm");
        }
        let sim = |a: usize, b: usize| dot(&v[a], &v[b]);
        assert!(sim(0, 1) > 0.65, "paraphrase {}", sim(0, 1));
        assert!(sim(0, 2) < 0.3, "unrelated {}", sim(0, 2));
        assert!(sim(3, 4) > sim(2, 4), "shutdown pair beats the unrelated one");
        // Batching does not change a text's vector (padding is masked out).
        let alone = e.embed(&texts[2..3]).unwrap();
        assert!(dot(&alone[0], &v[2]) > 0.9999);
        for (a, b, want) in reference_similarities() {
            let got = sim(a, b);
            assert!((got - want).abs() < 0.005, "pair {a},{b}: {got} vs reference {want}");
        }
    }

    /// Reference cosines computed once by `.ci/embed_reference.py` (plain numpy BERT over the same
    /// wheel's files; indices into the test's texts).
    fn reference_similarities() -> Vec<(usize, usize, f32)> {
        vec![
            (0, 1, 0.7185),
            (0, 2, -0.0540),
            (0, 3, -0.1071),
            (0, 4, 0.0060),
            (1, 2, -0.0186),
            (1, 3, -0.0534),
            (1, 4, 0.0278),
            (2, 3, 0.1514),
            (2, 4, -0.0035),
            (3, 4, 0.3083),
        ]
    }
}
