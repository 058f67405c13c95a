//! The graph of entities and relations (issue 41), from evidence only: [`extract`] reads what a
//! batch of tool calls shows (files, symbols, commands, error signatures, concepts and the
//! relations between them), [`names`] gives each entity its canonical name. The store keeps the
//! graph with the observations that are its evidence (`store/graph.rs`); `retrieval/related.rs`
//! answers `related`.

pub mod extract;
pub mod names;
