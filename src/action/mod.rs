//! Memory at the point of action (issue 53), one feature in one folder. So far: the command as it
//! is compared (`normalize.rs`: the working part of a shell line, paths relative to the project,
//! temporary paths, times, ports and long ids folded), which the index of failed commands and the
//! PreToolUse warning will key on. Nothing calls it yet; the issue stays open.

pub mod normalize;
