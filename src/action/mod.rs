//! Memory at the point of action (issue 53), one feature in one folder. So far: the command as it
//! is compared (`normalize.rs`: the working part of a shell line, paths relative to the project,
//! temporary paths, times, ports and long ids folded), which the index of failed commands and the
//! PreToolUse warning will key on, and what those warnings would have done on recorded sessions
//! (`estimate.rs`, `memd replay --action-memory`). The index and the hook are not built yet.

pub mod estimate;
pub mod normalize;
