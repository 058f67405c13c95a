//! Work state per project and branch (issue 39), one feature in one folder: the tables and their
//! rows (`tables.rs`), the storage trait and its SQLite implementation (`storage.rs`), the
//! SessionStart section (`render.rs`) and the use-cases every adapter calls (`service.rs`: check,
//! clean, store, read, render). The routes (`ingress/work_routes.rs`), the MCP pair (`mcp/work.rs`)
//! and `memd work` are the glue, each a line in its adapter's table.

pub mod render;
pub mod service;
pub mod storage;
pub mod tables;
