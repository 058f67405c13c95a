//! Wire types only, no I/O: HTTP bodies, every API path, the ingest route paths, the hook's stdin,
//! the read requests (search, timeline) and their lenient parameter types.

pub mod api;
pub mod fence;
pub mod hook_wire;
pub mod paths;
pub mod routes;

pub use routes::IngestRoute;
pub mod params;
pub mod search;
