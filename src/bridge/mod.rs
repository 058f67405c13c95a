//! The bridge to Claude Code's own memory (issue 39; contract in `docs/spec/native-memory.md`):
//! where its memory files are ([`files`]); memd's note of newer evidence when the agent reads one
//! of them ([`note`]), the rows it cites ([`evidence_rows`]) and their storage trait
//! ([`storage`]); the auto-memory format `memd promote` writes ([`promote`]); Markdown notes
//! imported from configured roots ([`notes`], their table [`note_rows`]); the use-cases
//! ([`service`]). The rule that an observation only restates a
//! memory file's line is pure text, in `pipeline/restatement.rs` (retrieval applies it).

pub mod evidence_rows;
pub mod files;
pub mod note;
pub mod note_rows;
pub mod notes;
pub mod promote;
pub mod service;
pub mod storage;

pub use crate::pipeline::restatement::{RESTATE_SHARE, clean_line, memory_lines, restates, word_set};
