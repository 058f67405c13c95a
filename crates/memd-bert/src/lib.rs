//! memd's CPU forward pass of a BERT encoder (all-MiniLM-L6-v2 and its kind), for sentence
//! embeddings: each text at its own length (several may be stacked into one pass), with f16
//! weights and f32 arithmetic, and no tensor library.
//!
//! | file | what it holds |
//! |---|---|
//! | [`weights`] | `config.json` sizes and the `model.safetensors` tensors, read one at a time |
//! | [`dense`] | the dense layer and its AVX2/FMA kernel (a portable loop elsewhere) |
//! | [`forward`] | embeddings, attention, layer norm, GELU: token ids → last hidden states |
//!
//! It is its own crate so that debug builds of memd (its tests) still compile it optimised
//! (`[profile.dev.package.memd-bert]`): an unoptimised forward pass takes seconds per sentence.

pub mod dense;
pub mod forward;
pub mod weights;

pub use forward::hidden_states;
pub use weights::BertWeights;

/// What can go wrong loading or running the model.
#[derive(Debug, thiserror::Error)]
pub enum BertError {
    #[error("{0}: {1}")]
    Io(&'static str, std::io::Error),
    /// The files are not the model this crate runs (a message names the part).
    #[error("{0}")]
    Format(String),
    /// An input the model cannot take (too long, an unknown token id).
    #[error("{0}")]
    Input(String),
}
