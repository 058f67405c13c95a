//! Ingest hygiene shared by the hook, the worker and the store: privacy processing
//! (`docs/spec/pipeline.md` §5), excluded-project globs (§3.1), size limits (§4, §6.1, §9, §14.2),
//! the dedup content hash (§15) and the identity functions of `docs/spec/api.md` §2.5–§2.6.
//!
//! Everything here is pure except [`project::identify`], which reads `.memd-project` and `.git`.

pub mod consolidation;
mod detector;
pub mod field_limits;
pub mod glob;
pub mod hash;
pub mod images;
pub mod instruction;
pub mod limits;
pub mod platform;
pub mod privacy;
pub mod project;
pub mod redact;
pub mod restatement;
pub mod secrets;
pub mod structure;
pub mod supersession;
pub mod tags;
pub mod terms;
