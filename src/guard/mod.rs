//! memd's edges with what it does not trust (issue 50, `docs/security.md`): a repository's git
//! configuration and a folder's links. [`git`] is the one way memd starts `git`; [`write`] the one
//! way it writes a file into a folder it does not own. Both sit below everything else: they depend
//! on nothing in the crate.

pub mod git;
pub mod write;
