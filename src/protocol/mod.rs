//! Wire types only, no I/O: HTTP bodies, the observer's XML reply, the observer prompt.

pub mod api;
pub mod hook_wire;
pub mod observer_xml;
pub mod prompt;
