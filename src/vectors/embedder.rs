//! The in-process sentence embedder: all-MiniLM-L6-v2 (BERT, 6 layers, 384 dims) run by memd's own
//! CPU forward pass (the `memd-bert` crate).
//!
//! Mean pooling over the text's tokens, then L2 normalisation — the same vectors as
//! sentence-transformers. Each text runs at its own length (nothing is padded); a batch's texts
//! run in groups whose token rows are stacked, the groups side by side on rayon's pool (low
//! priority, [`super::service`]), a single text (a search query) on the calling thread. Loading
//! and inference are CPU-bound and blocking: callers run them on a blocking thread
//! ([`super::service::EmbedService`] does).

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use tokenizers::{Tokenizer, TruncationParams};

use memd_bert::forward::hidden_states_of_texts;
use memd_bert::{BertWeights, Kernel};

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
    weights: BertWeights,
    tokenizer: Tokenizer,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Embedder(all-MiniLM-L6-v2, {})", self.kernel().name())
    }
}

fn model_err(dir: &Path, e: impl std::fmt::Display) -> VectorError {
    VectorError::Model(format!("{}: {e}", dir.display()))
}

impl Embedder {
    /// Loads the model from `dir` (`model.safetensors`, `tokenizer.json`, `config.json`), its dense
    /// layers on `kernel` (`Kernel::best()` is this CPU's fastest). Blocking.
    pub fn load_with(dir: &Path, kernel: Kernel) -> Result<Self, VectorError> {
        let path = |f: &str| -> PathBuf { dir.join(f) };
        let mut tokenizer = Tokenizer::from_file(path("tokenizer.json")).map_err(|e| model_err(dir, e))?;
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..Default::default()
            }))
            .map_err(|e| model_err(dir, e))?;
        let weights = BertWeights::load_with(dir, kernel).map_err(|e| model_err(dir, e))?;
        if weights.config.hidden_size != DIM {
            return Err(model_err(
                dir,
                format!("hidden size {}, memd stores {DIM}", weights.config.hidden_size),
            ));
        }
        Ok(Self { weights, tokenizer })
    }

    /// The dense kernel the model runs on.
    pub fn kernel(&self) -> Kernel {
        self.weights.kernel()
    }

    /// Embeds `texts`: one L2-normalised vector of [`DIM`] floats per text.
    pub fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, VectorError> {
        self.embed_counted(texts).map(|(v, _)| v)
    }

    /// Like [`Embedder::embed`], also returning the number of tokens it read.
    pub fn embed_counted(&self, texts: &[String]) -> Result<(Vec<Vec<f32>>, u64), VectorError> {
        let inputs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let enc = self
            .tokenizer
            .encode_batch(inputs, true)
            .map_err(|e| VectorError::Embed(e.to_string()))?;
        let ids: Vec<&[u32]> = enc.iter().map(|e| e.get_ids()).collect();
        let tokens: u64 = ids.iter().map(|i| i.len() as u64).sum();
        let mut vectors = self.mean_states(&ids)?;
        for v in &mut vectors {
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
            for x in v.iter_mut() {
                *x /= norm;
            }
        }
        Ok((vectors, tokens))
    }

    /// The mean of each text's last hidden states, not normalised. Texts run in groups of
    /// consecutive texts (see [`groups`]); the groups side by side on rayon's pool, a single
    /// group (a search query) on the calling thread.
    fn mean_states(&self, ids: &[&[u32]]) -> Result<Vec<Vec<f32>>, VectorError> {
        let run = |g: &std::ops::Range<usize>| -> Result<Vec<Vec<f32>>, VectorError> {
            let states = hidden_states_of_texts(&self.weights, &ids[g.clone()]).map_err(|e| VectorError::Embed(e.to_string()))?;
            Ok(states.iter().map(|s| mean_rows(s)).collect())
        };
        let groups = groups(ids, GROUP_ROWS);
        match groups.as_slice() {
            [one] => run(one),
            _ => Ok(groups.par_iter().map(run).collect::<Result<Vec<_>, _>>()?.concat()),
        }
    }
}

/// Token rows a group of texts may stack: the dense kernel reads its weights once per block of 24
/// rows, so a group of short texts shares one read. Larger groups gained nothing (measured with
/// the earlier dot-product kernel, `cargo bench --bench vectors`, 16 short sentences: 221/s at 128
/// rows against 284/s one text at a time and 293/s at 24; docs/decisions.md).
const GROUP_ROWS: usize = 24;

/// Consecutive ranges of `ids` holding at most `max_rows` tokens each (a longer text alone), and
/// at least two ranges when there are two texts or more (two cores).
fn groups(ids: &[&[u32]], max_rows: usize) -> Vec<std::ops::Range<usize>> {
    let total: usize = ids.iter().map(|i| i.len()).sum();
    let cap = if ids.len() > 1 { max_rows.min(total.div_ceil(2)) } else { max_rows }.max(1);
    let mut out = Vec::new();
    let (mut start, mut rows) = (0, 0);
    for (i, t) in ids.iter().enumerate() {
        if i > start && rows + t.len() > cap {
            out.push(start..i);
            (start, rows) = (i, 0);
        }
        rows += t.len();
    }
    if start < ids.len() || out.is_empty() {
        out.push(start..ids.len());
    }
    out
}

/// The mean of the `DIM`-wide rows of `states` (zeros for none).
fn mean_rows(states: &[f32]) -> Vec<f32> {
    let mut mean = vec![0f32; DIM];
    for row in states.chunks_exact(DIM) {
        mean.iter_mut().zip(row).for_each(|(m, v)| *m += v);
    }
    let n = (states.len() / DIM).max(1) as f32;
    for m in &mut mean {
        *m /= n;
    }
    mean
}

impl Embedder {
    /// The tokenizer (the static embedder shares its vocabulary).
    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }

    /// The mean of the last hidden states of each row of `ids` (all rows `width` long, no padding),
    /// not normalised: the distillation of the static table reads the model this way.
    pub fn hidden_means(&self, ids: Vec<u32>, width: usize) -> Result<Vec<Vec<f32>>, VectorError> {
        let rows: Vec<&[u32]> = ids.chunks(width.max(1)).collect();
        self.mean_states(&rows)
    }
}

/// Cosine similarity of two L2-normalised vectors (their dot product).
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The model directory of the tests (`MEMD_TEST_MODEL_DIR`, set by `.ci/run`), or None with a
    /// note — a failure under `MEMD_REQUIRE_FIXTURES=1` (CI), as the integration tests' fixtures.
    pub(crate) fn test_model_dir() -> Option<PathBuf> {
        match std::env::var("MEMD_TEST_MODEL_DIR") {
            Ok(d) if model_present(Path::new(&d)) => Some(PathBuf::from(d)),
            _ if std::env::var("MEMD_REQUIRE_FIXTURES").is_ok_and(|v| v == "1") => {
                panic!("MEMD_TEST_MODEL_DIR does not hold the all-MiniLM-L6-v2 files; MEMD_REQUIRE_FIXTURES=1 makes that a failure")
            }
            _ => {
                eprintln!("skipped: MEMD_TEST_MODEL_DIR does not hold the all-MiniLM-L6-v2 files");
                None
            }
        }
    }

    #[test]
    fn groups_cover_every_text_in_order_within_the_row_cap() {
        let t = |n: usize| vec![0u32; n];
        let texts = [t(10), t(50), t(70), t(200), t(5), t(5)];
        let ids: Vec<&[u32]> = texts.iter().map(|v| v.as_slice()).collect();
        let g = groups(&ids, 128);
        assert_eq!(g, vec![0..2, 2..3, 3..4, 4..6]);
        // Two short texts still make two groups (two cores); one text is one group.
        assert_eq!(groups(&ids[4..], 128), vec![0..1, 1..2]);
        assert_eq!(groups(&ids[..1], 128), vec![0..1]);
        assert_eq!(groups(&[], 128), vec![0..0]);
    }

    #[test]
    fn a_missing_model_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!model_present(dir.path()));
        assert!(matches!(
            Embedder::load_with(dir.path(), Kernel::best()),
            Err(VectorError::Model(_))
        ));
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

    /// Each kernel's vectors: unit length, paraphrases near, the unrelated far, a text's vector the
    /// same alone as in a batch, and the reference cosines — to 0.0005 in f16, to the integer
    /// kernel's rounding (0.01) in 8 bits, whose vectors are also within 0.998 of the f16 ones.
    #[test]
    fn embeddings_match_reference_similarities() {
        let Some(dir) = test_model_dir() else { return };
        let texts = sample_texts();
        let mut by_kernel = Vec::new();
        for (kernel, tolerance) in [(Kernel::F16, 0.0005), (Kernel::Int8, 0.01)] {
            let e = Embedder::load_with(&dir, kernel).unwrap();
            assert_eq!(e.kernel(), kernel);
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
                assert!((got - want).abs() < tolerance, "{kernel:?} pair {a},{b}: {got} vs reference {want}");
            }
            by_kernel.push(v);
        }
        for (f16, int8) in by_kernel[0].iter().zip(&by_kernel[1]) {
            assert!(dot(f16, int8) > 0.998, "int8 against f16: cosine {}", dot(f16, int8));
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
