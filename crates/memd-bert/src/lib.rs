//! memd's CPU forward pass of a BERT encoder (all-MiniLM-L6-v2 and its kind), for sentence
//! embeddings: each text at its own length (several may be stacked into one pass), with 8-bit
//! integer dense layers where the CPU has AVX-512 VNNI and f16 weights in f32 arithmetic elsewhere,
//! and no tensor library.
//!
//! | file | what it holds |
//! |---|---|
//! | [`weights`] | `config.json` sizes and the `model.safetensors` tensors, read one at a time |
//! | [`dense`] | the dense layer, and which kernel runs it |
//! | [`dense_int8`] | the 8-bit integer kernel (AVX-512 VNNI, a portable loop elsewhere) |
//! | [`dense_f16`] | the f16 kernel (AVX2/FMA/F16C, a portable loop elsewhere) |
//! | [`forward`] | embeddings, layer norm, GELU: token ids → last hidden states |
//! | [`attention`] | self-attention, its softmax, and the lane-wise sums the layer norms use |
//!
//! It is its own crate so that debug builds of memd (its tests) still compile it optimised
//! (`[profile.dev.package.memd-bert]`): an unoptimised forward pass takes seconds per sentence.

mod attention;
pub mod dense;
mod dense_f16;
mod dense_int8;
pub mod forward;
pub mod weights;

pub use dense::Kernel;
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
