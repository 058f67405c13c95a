//! Observer domain: the types handed between batching, the observer (LLM or
//! extractive) and the store, file-evidence extraction and correction
//! (`docs/spec/pipeline.md` §14 item 1), and the deterministic extractive observer
//! used when no LLM is available (`docs/spec/pipeline.md` §16).
//!
//! Everything here is pure: no I/O, no filesystem access, no clock.

pub mod evidence;
pub mod extractive;
pub mod types;
