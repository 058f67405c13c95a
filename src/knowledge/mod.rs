//! Corpora and the knowledge agent (issue 41, `docs/spec/corpus.md`): a named, filtered set of
//! observations kept as a file (`corpus.rs`, `files.rs`), rendered for a model with the rule to
//! answer only from it and cite it (`render.rs`), and the requests of a primed conversation
//! (`agent.rs`). The use-cases that search, call the provider and write the files are the
//! worker's (`worker/corpus.rs`).

pub mod agent;
pub mod corpus;
pub mod files;
pub mod render;

/// What the knowledge room refuses or cannot do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KnowledgeError {
    #[error("{0}")]
    BadRequest(String),
    #[error("corpus {name:?} not found (available: {})", if available.is_empty() { "none".to_string() } else { available.join(", ") })]
    NotFound { name: String, available: Vec<String> },
    #[error("corpus files: {0}")]
    Files(String),
}
