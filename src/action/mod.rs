//! Memory at the point of action (issue 53), one feature in one folder: the command as it is
//! compared (`normalize.rs`: the working part of a shell line, paths relative to the project,
//! temporary paths, times, ports and long ids folded); the index of failed commands and of what
//! is known about editing a file, kept at ingest (`rows.rs`); the warning text (`warning.rs`);
//! the storage area (`storage.rs`) and the use-case the route calls (`service.rs`); what memd
//! injected into a session and whether it was used (`injected.rs`); and what those warnings would
//! have done on recorded sessions (`estimate.rs`, `memd replay --action-memory`).

pub mod estimate;
pub mod injected;
pub mod normalize;
pub mod rows;
pub mod service;
pub mod storage;
pub mod use_check;
pub mod warning;
