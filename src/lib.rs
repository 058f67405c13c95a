//! memd — a memory daemon for AI coding agents.
//!
//! Layout map (one concern per file; see `docs/design.md`):
//!
//! | module | what it holds |
//! |---|---|
//! | [`config`] | every `MEMD_*` setting with its default, loaded once from settings.json + env |
//! | [`data_dir`] | `<data>` layout, permissions, the worker lock, PID file, API token |
//! | [`logging`] | tracing to stderr and a rotating file in `<data>/logs/` |
//! | [`clock`] | epoch milliseconds, ISO-8601 and UTC day formatting |
//! | [`server`] | `memd serve`: start-up, lifetime, graceful shutdown |
//! | [`ingress`] | axum routes, request checks (Host/Origin/token/size), error mapping |
//! | [`status`] | the `GET /api/status` document |
//! | [`actors`] | the supervised actor tree: root, store, provider, session manager, sessions, reaper |
//! | [`store`] | SQLite: migrations, group-commit writer thread, read pool, one file per table family |
//! | [`ingest`] | the single ingest pipeline: filters → privacy → limits → store commands |
//! | [`pipeline`] | pure privacy and hygiene rules: tags, redaction, images, globs, limits, hashing, project identity |
//! | [`observer`] | observer domain types, file evidence, the extractive (no-LLM) observer |
//! | [`modes`] | observer modes (`modes/*.json`), lookup and deep merge |
//! | [`providers`] | observer backends: anthropic, openai, gemini, claude-cli subprocess, extractive |
//! | [`protocol`] | wire types: HTTP bodies, observer XML parser and classifier, observer prompt builder |
//! | [`retrieval`] | context injection, file context, search, timeline, records by id: the read side |
//! | [`replay`] | transcripts → hook event stream, load replay against a worker, report and loss check |
//! | [`client`] | a blocking loopback HTTP client, worker discovery, and worker auto-start (hook, MCP, CLI, tests) |
//! | [`import`] | `memd import-claude-mem`: reading, cleaning and chunking a claude-mem database |
//! | [`mcp`] | `memd mcp`: the stdio MCP server, a client of the worker's HTTP API |
//! | [`hook`] | `memd hook claude-code <handler>`: the thin, blocking hook process, spool writer (also on SIGTERM) |
//! | [`install`] | `memd install`: hooks and MCP entry in Claude Code's settings (order-preserving edits), plugin folder |
//! | [`vectors`] | embeddings (candle, all-MiniLM-L6-v2), the binary sqlite-vec index + exact re-rank, documents, model install |
//! | [`cli`] | one file per subcommand; `main.rs` only dispatches |

pub mod actors;
pub mod cli;
pub mod client;
pub mod clock;
pub mod config;
pub mod data_dir;
pub mod hook;
pub mod import;
pub mod ingest;
pub mod ingress;
pub mod install;
pub mod logging;
pub mod mcp;
pub mod modes;
pub mod observer;
pub mod pipeline;
pub mod protocol;
pub mod providers;
pub mod replay;
pub mod retrieval;
pub mod server;
pub mod status;
pub mod store;
pub mod vectors;
