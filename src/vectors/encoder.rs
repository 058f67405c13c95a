//! [`Encoder`]: the text → vector function the worker runs, chosen by `MEMD_EMBED_ENCODER` — the
//! transformer all-MiniLM-L6-v2 (default) or the static table distilled from it. Both give
//! L2-normalised vectors of [`super::embedder::DIM`] floats; they are not comparable with each
//! other, so each records its own model name and a change re-embeds everything.

use std::path::Path;

use super::VectorError;
use super::embedder::Embedder;
use super::static_embedder::StaticEmbedder;
use crate::config::EncoderKind;
use memd_bert::Kernel;

#[derive(Debug)]
pub enum Encoder {
    Static(Box<StaticEmbedder>),
    Transformer(Box<Embedder>),
}

impl Encoder {
    /// Loads the encoder of `kind` from the model directory `dir`, the transformer on `kernel`.
    /// Blocking.
    pub fn load(dir: &Path, kind: EncoderKind, kernel: Kernel) -> Result<Self, VectorError> {
        Ok(match kind {
            EncoderKind::Static => Self::Static(Box::new(StaticEmbedder::load_or_distill(dir)?)),
            EncoderKind::Transformer => Self::Transformer(Box::new(Embedder::load_with(dir, kernel)?)),
        })
    }

    /// One vector per text, and the real tokens read.
    pub fn embed_counted(&self, texts: &[String]) -> Result<(Vec<Vec<f32>>, u64), VectorError> {
        match self {
            Self::Static(e) => e.embed_counted(texts),
            Self::Transformer(e) => e.embed_counted(texts),
        }
    }

    /// One vector per text.
    pub fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, VectorError> {
        self.embed_counted(texts).map(|(v, _)| v)
    }
}
