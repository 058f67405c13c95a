//! Wire types only, no I/O: HTTP bodies, every API path, the ingest route paths, the hook's stdin.

pub mod api;
pub mod fence;
pub mod hook_wire;
pub mod paths;
pub mod routes;

pub use routes::IngestRoute;
