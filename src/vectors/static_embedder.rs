//! The static embedder (`MEMD_EMBED_ENCODER=static`), the fast encoder: one vector per vocabulary token, distilled once from
//! all-MiniLM-L6-v2; a text's vector is the sum of its tokens' vectors, L2-normalised. Embedding is
//! a table lookup per token — microseconds where the transformer takes 15–25 ms per query here.
//!
//! Distillation (the model2vec recipe, docs/decisions.md "A static encoder beside the transformer"): every vocabulary
//! token goes through the transformer between the separator tokens and its three output states are
//! averaged; the table is centred (PCA without reduction is a centring plus a rotation, and a
//! rotation changes no cosine), and each row is weighted by SIF with token frequencies estimated
//! from the vocabulary rank by Zipf's law, so frequent pieces weigh little. The table is kept next
//! to the model files (`memd-static-v1.bin`, f16) so the distillation runs once per install.

use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use half::f16;
use tokenizers::Tokenizer;

use super::VectorError;
use super::embedder::{DIM, Embedder};

/// The distilled table beside the model files.
pub const TABLE_FILE: &str = "memd-static-v1.bin";
const MAGIC: &[u8; 8] = b"MEMDST01";
/// Tokens of a text that count (a longer text is read to here; its vector is their mean).
const MAX_TOKENS: usize = 2048;
/// Vocabulary rows per forward pass of the distillation.
const DISTILL_BATCH: usize = 512;
/// SIF's coefficient: 1e-3 measured better on `memd eval` than model2vec's 1e-4 (docs/decisions.md).
const SIF: f64 = 1e-3;

/// A loaded table with the tokenizer it indexes.
pub struct StaticEmbedder {
    /// Vocabulary × [`DIM`], row-major.
    rows: Vec<f16>,
    tokenizer: Tokenizer,
}

impl std::fmt::Debug for StaticEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StaticEmbedder({} tokens)", self.rows.len() / DIM)
    }
}

fn model_err(path: &Path, e: impl std::fmt::Display) -> VectorError {
    VectorError::Model(format!("{}: {e}", path.display()))
}

/// What the table was distilled from: the weights' length (a different model file re-distills).
fn source_len(dir: &Path) -> u64 {
    std::fs::metadata(dir.join("model.safetensors")).map(|m| m.len()).unwrap_or(0)
}

impl StaticEmbedder {
    /// Loads `dir/memd-static-v1.bin`, distilling it from the transformer in `dir` first when it is
    /// missing or was made from other weights. Blocking (a distillation takes 25–35 s in a release build
    /// on two cores; concurrent processes wait on a lock file for the first one's table). A directory that
    /// cannot be written gets an in-memory table and a warning.
    pub fn load_or_distill(dir: &Path) -> Result<Self, VectorError> {
        if !super::embedder::model_present(dir) {
            return Err(VectorError::NoModel(dir.display().to_string()));
        }
        let table = dir.join(TABLE_FILE);
        if let Some(e) = Self::load(dir, &table)? {
            return Ok(e);
        }
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join(".memd-static.lock"));
        let Ok(lock) = lock else {
            tracing::warn!(dir = %dir.display(), "model directory is read-only: the static table is distilled in memory at each start");
            return Self::distill_from(dir);
        };
        // SAFETY: flock on a valid, owned descriptor; released when `lock` drops.
        unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) };
        if let Some(e) = Self::load(dir, &table)? {
            return Ok(e);
        }
        let e = Self::distill_from(dir)?;
        if let Err(err) = e.save(&table, source_len(dir)) {
            tracing::warn!(error = %err, "cannot keep the static table; it is distilled again at the next start");
        }
        Ok(e)
    }

    /// `t` reading whole texts: no padding, no truncation (the table has no length limit).
    fn unbounded(mut t: Tokenizer, path: &Path) -> Result<Tokenizer, VectorError> {
        t.with_padding(None);
        t.with_truncation(None).map_err(|e| model_err(path, e))?;
        Ok(t)
    }

    /// The table at `path` if it exists and matches the model in `dir`.
    fn load(dir: &Path, path: &Path) -> Result<Option<Self>, VectorError> {
        let Ok(bytes) = std::fs::read(path) else { return Ok(None) };
        let tok_path = dir.join("tokenizer.json");
        let tokenizer = Tokenizer::from_file(&tok_path).map_err(|e| model_err(&tok_path, e))?;
        let tokenizer = Self::unbounded(tokenizer, &tok_path)?;
        let vocab = tokenizer.get_vocab_size(true);
        let header = 8 + 4 + 4 + 8;
        let fits = bytes.len() == header + vocab * DIM * 2
            && &bytes[..8] == MAGIC
            && u32::from_le_bytes(bytes[8..12].try_into().unwrap_or_default()) as usize == vocab
            && u32::from_le_bytes(bytes[12..16].try_into().unwrap_or_default()) as usize == DIM
            && u64::from_le_bytes(bytes[16..24].try_into().unwrap_or_default()) == source_len(dir);
        if !fits {
            tracing::info!(path = %path.display(), "static table missing or stale; distilling it");
            return Ok(None);
        }
        let rows = bytes[header..].chunks_exact(2).map(|b| f16::from_le_bytes([b[0], b[1]])).collect();
        Ok(Some(Self { rows, tokenizer }))
    }

    fn save(&self, path: &Path, source: u64) -> std::io::Result<()> {
        let tmp: PathBuf = path.with_extension("partial");
        let mut out = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
        out.write_all(MAGIC)?;
        out.write_all(&((self.rows.len() / DIM) as u32).to_le_bytes())?;
        out.write_all(&(DIM as u32).to_le_bytes())?;
        out.write_all(&source.to_le_bytes())?;
        for v in &self.rows {
            out.write_all(&v.to_le_bytes())?;
        }
        out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&tmp, path)
    }

    fn distill_from(dir: &Path) -> Result<Self, VectorError> {
        let started = std::time::Instant::now();
        // The f16 kernel whatever the CPU: the table is made once and read for months, so it is
        // made on the kernel closest to the model (an int8 table ranked a paraphrase fourth that
        // the f16 table ranks in the top three: docs/decisions.md "Dense layers in 8-bit integers").
        let model = Embedder::load_with(dir, memd_bert::Kernel::F16)?;
        let rows = distill(&model)?;
        // The transformer's tokenizer, already parsed, without its 128-token cut.
        let tokenizer = Self::unbounded(model.tokenizer().clone(), &dir.join("tokenizer.json"))?;
        tracing::info!(
            tokens = rows.len() / DIM,
            secs = started.elapsed().as_secs(),
            "static table distilled"
        );
        Ok(Self {
            rows: rows.into_iter().map(f16::from_f32).collect(),
            tokenizer,
        })
    }

    /// One L2-normalised vector per text, and the number of tokens read.
    pub fn embed_counted(&self, texts: &[String]) -> Result<(Vec<Vec<f32>>, u64), VectorError> {
        let mut tokens = 0u64;
        let mut out = Vec::with_capacity(texts.len());
        for text in texts {
            let enc = self
                .tokenizer
                .encode(text.as_str(), false)
                .map_err(|e| VectorError::Embed(e.to_string()))?;
            let mut v = vec![0f32; DIM];
            for &id in enc.get_ids().iter().take(MAX_TOKENS) {
                let at = id as usize * DIM;
                if let Some(row) = self.rows.get(at..at + DIM) {
                    v.iter_mut().zip(row).for_each(|(a, b)| *a += b.to_f32());
                    tokens += 1;
                }
            }
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            if norm > 1e-12 {
                for x in v.iter_mut() {
                    *x /= norm;
                }
            }
            out.push(v);
        }
        Ok((out, tokens))
    }
}

/// The distilled table (vocabulary × [`DIM`], row-major) of `model`.
pub fn distill(model: &Embedder) -> Result<Vec<f32>, VectorError> {
    let tok = model.tokenizer();
    let vocab = tok.get_vocab_size(true);
    let id = |t: &str| {
        tok.token_to_id(t)
            .ok_or_else(|| VectorError::Model(format!("the vocabulary has no {t}")))
    };
    let (cls, sep) = (id("[CLS]")?, id("[SEP]")?);
    let mut table = Vec::with_capacity(vocab * DIM);
    let ids: Vec<u32> = (0..vocab as u32).collect();
    for chunk in ids.chunks(DISTILL_BATCH) {
        // model2vec found the separators reversed around the token to work better.
        let rows: Vec<u32> = chunk.iter().flat_map(|&t| [sep, t, cls]).collect();
        for v in model.hidden_means(rows, 3)? {
            table.extend(v);
        }
    }
    // Centre on the mean of real tokens (not [PAD], [unused…] or the separators).
    let real: Vec<bool> = (0..vocab as u32)
        .map(|i| tok.id_to_token(i).is_some_and(|t| !(t.starts_with('[') && t.ends_with(']'))))
        .collect();
    let mut mean = vec![0f64; DIM];
    let n = real.iter().filter(|r| **r).count().max(1) as f64;
    for (row, _) in table.chunks_exact(DIM).zip(&real).filter(|(_, r)| **r) {
        mean.iter_mut().zip(row).for_each(|(m, x)| *m += f64::from(*x) / n);
    }
    let zipf_sum: f64 = (0..vocab).map(|i| 1.0 / (i as f64 + 2.0)).sum();
    for (i, row) in table.chunks_exact_mut(DIM).enumerate() {
        let p = (1.0 / (i as f64 + 2.0)) / zipf_sum;
        let w = SIF / (SIF + p);
        row.iter_mut().zip(&mean).for_each(|(x, m)| *x = ((f64::from(*x) - m) * w) as f32);
    }
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vectors::embedder::dot;

    #[test]
    fn a_missing_model_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(StaticEmbedder::load_or_distill(dir.path()), Err(VectorError::NoModel(_))));
        assert!(
            !dir.path().join(".memd-static.lock").exists(),
            "nothing is written beside a missing model"
        );
    }

    #[test]
    fn static_vectors_keep_paraphrases_closer_than_unrelated_text() {
        let Some(dir) = crate::vectors::embedder::tests::test_model_dir() else {
            return;
        };
        let e = StaticEmbedder::load_or_distill(&dir).unwrap();
        let mut texts = crate::vectors::embedder::tests::sample_texts();
        texts.push(String::new());
        let (v, tokens) = e.embed_counted(&texts).unwrap();
        assert!(tokens > 20);
        for x in &v[..5] {
            assert_eq!(x.len(), DIM);
            assert!((dot(x, x) - 1.0).abs() < 1e-3, "unit norm");
        }
        assert!(v[5].iter().all(|x| *x == 0.0), "an empty text has the zero vector, not NaN");
        let sim = |a: usize, b: usize| dot(&v[a], &v[b]);
        assert!(sim(0, 1) > sim(0, 2) + 0.2, "paraphrase {} vs unrelated {}", sim(0, 1), sim(0, 2));
        assert!(
            sim(3, 4) > sim(2, 4),
            "shutdown pair {} beats the unrelated one {}",
            sim(3, 4),
            sim(2, 4)
        );
        // The table was kept: a second load reads it instead of distilling.
        assert!(dir.join(TABLE_FILE).is_file());
        let again = StaticEmbedder::load_or_distill(&dir).unwrap();
        assert_eq!(again.embed_counted(&texts[..1]).unwrap().0[0], v[0]);
    }
}
