//! memd — a memory daemon for AI coding agents.
//!
//! Layout map (one concern per file; the design is `docs/design.md`, the contracts `docs/spec/`,
//! the threat model `docs/security.md`). **Dependencies point down the layers**: a module imports
//! only modules of its own layer or of layers below it, and no two modules import each other in a
//! cycle. `scripts/import-graph.py --check` (run by CI) and the `layout` unit test hold the code to
//! this table; a module not in it, or an edge up it, fails both.
//!
//! | module | what it holds |
//! |---|---|
//! | **1 foundation** | depends on nothing above it |
//! | [`clock`] | the injectable `Clock` the actors read (system, manual, following tokio time), epoch milliseconds, ISO-8601 and UTC day formatting |
//! | [`allocator`] | the worker's heap: glibc's thread caches off (one re-exec), `malloc_trim` after floods, resident and heap figures |
//! | [`data_dir`] | `<data>` layout, permissions, the worker lock, PID file, API token |
//! | [`guard`] | memd's edges with what it does not trust (`docs/security.md`): the one hardened way to start `git` (`git.rs`), the one way to write a file into a folder memd does not own (`write.rs`) |
//! | [`text`] | text every layer shares: hidden characters, the one rule for stored text on agent surfaces (`sink.rs`), lines and cuts (`lines.rs`), terminal-safe output (`terminal.rs`), text folded as a reader sees it for the screen (`fold.rs`), words, stems and stopwords (`words.rs`), source-code extensions |
//! | [`config`] | the settings table (key, default, kind, doc), the one rule per kind every process reads by, typed sections (the watcher's in `config/watch.rs`) |
//! | [`modes`] | observer modes (`modes/*.json`), lookup and deep merge |
//! | [`service`] | systemd units and the launchd agent (`memd service`), sd_notify, socket activation, which manager started us |
//! | [`logging`] | tracing to stderr and a rotating file in `<data>/logs/` |
//! | [`protocol`] | wire types: HTTP bodies, every API path (`paths.rs`), the ingest route paths, the hook's stdin, the fence around recalled text (`fence.rs`), the one request type of search and timeline (`search.rs`) and the lenient parameter types that read it from a tool call or a query string (`params.rs`) |
//! | **2 domain** | rules and transports, no storage |
//! | [`pipeline`] | pure privacy and hygiene rules: tags, redaction (fixed-prefix, context and structure-aware detectors), images, globs, limits (every stored field's bound once: `field_limits.rs`), hashing, project identity, a call's search terms (`terms.rs`), the instruction screen (`instruction.rs`), supersession and contradiction rules (`supersession.rs`), the restatement rule against a memory file's lines (`restatement.rs`), consolidation rules (`consolidation.rs`) |
//! | [`providers`] | observer transports: anthropic, openai, gemini, the `claude` CLI subprocess, extractive |
//! | [`observer`] | prompt, XML reply parser, batch job state machine, output bounds, file evidence, the extractive observer (what each edit added, removed and renamed: `extractive/changes.rs`), an LLM's names checked against the batch (`grounding.rs`) |
//! | [`graph`] | the graph of entities and relations (issue 41), from evidence only: what a batch of tool calls shows (`extract.rs`: co-edited files, symbols an edit defined or tested, a command and the error it failed with, the edits that made a failing command pass, concepts), canonical names (`names.rs`); the tables are `store/graph.rs`, `related` is `retrieval/related.rs` |
//! | [`knowledge`] | corpora and the knowledge agent (issue 41, `docs/spec/corpus.md`): the corpus file and the build request (`corpus.rs`), `<data>/corpora/` (`files.rs`), the corpus as a model reads it, its instructions and the citation check (`render.rs`), the requests of a primed conversation per provider (`agent.rs`); the use-cases are `worker/corpus.rs` |
//! | [`client`] | a blocking loopback HTTP client, worker discovery, worker auto-start (hook, MCP, CLI, tests) |
//! | **3 sources** | reading what the agents left behind |
//! | [`replay`] | transcripts → hook event stream, load replay against a worker (and `memd import-sessions`' backfill), report and loss check, what an LLM observer would cost (`observer_cost.rs`); the drain wait reads the status JSON's backlog (`loss.rs`) |
//! | [`watch`] | the transcript watcher's passes (`memd watch`, and the worker's `TranscriptWatcher` actor when `MEMD_WATCH` is on): tails Claude Code session files and Codex rollouts, converts them with the replay converter, ingests new events exactly once (durable per-file state) |
//! | **4 storage** | SQLite, vectors and the team server |
//! | [`store`] | SQLite: the record macro every row kind is read through (`record.rs`: struct, column list, reader by name, JSON derived), the observation's record with its inserts (`observation_record.rs`), the summary's and the prompt's (`summary_record.rs`), migrations, group-commit writer thread, read pool, integrity, backups and salvage (a repaired copy swapped in crash-safely: `replace.rs`), rescan, the raw archive's index and its queue (`raw_index.rs`), provenance and quarantine (`quarantine.rs`), supersession and contradictions (`supersession.rs`), the graph's tables and backfill (`graph.rs`: written inside the batch's own transaction, so the store's), one file per table family; a feature's own tables live in its folder |
//! | [`vectors`] | embeddings (all-MiniLM-L6-v2 on the `memd-bert` crate, int8 or f16 dense kernel, or the static token table distilled from it), the binary sqlite-vec index and its in-memory copy (sign codes) + exact re-rank, documents, Chroma, model install |
//! | [`team`] | team memory on PostgreSQL (`docs/spec/team.md`): the server's schema and migrations (`server_v1.sql`, `server_v2.sql`: members and grants), connecting with TLS through rustls (`tls.rs`) on a watched socket that never sends a password in clear (`plain_guard.rs`), push, pull, edits, tombstones (`server.rs`), the role's rights (`check.rs`); the local side's tables (`local/`) and its storage trait with the SQLite implementation (`storage.rs`); the loop is the `TeamSync` actor |
//! | [`alerts`] | a feature folder: alert bodies (generic JSON, Slack, Telegram) and the retry schedule, the outbox's table (`outbox.rs`), its storage trait and SQLite implementation (`storage.rs`), the pass that queues and sends (`service.rs`, a row of the worker's job table) |
//! | [`work_state`] | a feature folder: work state per project and branch — tables (`tables.rs`), storage trait and SQLite implementation (`storage.rs`), the SessionStart section (`render.rs`), the use-cases every adapter calls (`service.rs`) |
//! | [`freshness`] | memory that stays current (issue 38): code anchors read from git (`.git` directly for HEAD, one batched `git` call per work tree for blob ids), staleness when a later commit changes an anchored file, the service whose loop anchors and re-checks off every request path, the scheduled consolidation pass; the anchors' table (`anchor_rows.rs`) and their storage trait (`storage.rs`, what the service reads and writes through) and the consolidation plan, apply and audit log (`consolidation_plan.rs`) |
//! | [`import`] | `memd import-claude-mem`: reading, cleaning and chunking a claude-mem database |
//! | [`export`] | `memd export` / `memd import-md` files: an observation as Markdown (front matter of every field, the narrative as body) or JSON, and the index (`index.rs`) |
//! | **5 read side** |  |
//! | [`bridge`] | a feature folder: Claude Code's own memory (`docs/spec/native-memory.md`): where its files are (`files.rs`), memd's note on a read one (`note.rs`) with the rows it cites (`evidence_rows.rs`) and their storage trait (`storage.rs`), `memd promote`'s edits (`promote.rs`), which Markdown notes to import (`notes.rs`) and their table (`note_rows.rs`), the use-cases (`service.rs`: the lines a session loads, the note on a read, the notes pass) |
//! | [`retrieval`] | the read side: context injection, file context, search (with the raw archive's index, `raw_search.rs`), timeline, records, the `/stream` feed, the viewer's paged lists as typed rows (`browse_rows.rs`) and charts (`stats.rs`), an entity's neighbours in the graph (`related.rs`), the search and timeline requests built from their wire type (`requests.rs`), the one request type of a record read (`record_request.rs`) |
//! | [`folders`] | a feature folder: folder context files (opt-in): which folders and what their section shows (`plan.rs`), the splice that keeps a person's text outside memd's markers, the rows they are made from (`rows.rs`) and their storage trait (`storage.rs`), the pass (`service.rs`, a row of the worker's job table) |
//! | [`action`] | a feature folder: memory at the point of action (issue 53) — the command as it is compared (`normalize.rs`), the index of failed checks and of what is known about editing a file, kept at ingest in the call's own transaction (`rows.rs`), the warning text (`warning.rs`), its storage area (`storage.rs`) and use-case (`service.rs`), what memd injected into a session and the running totals (`injected.rs`), whether the agent used it, read from the transcript (`use_check.rs`), and what warnings would have done on recorded sessions (`estimate.rs`, `memd replay --action-memory`) |
//! | [`readgate`] | a feature folder: the opt-in read gate: which Reads it answers, the outline of a source file (`outline.rs`), the reason text, its estimate over recorded sessions (`estimate.rs`, `memd replay --read-gate`), the stored text it answers from (`rows.rs`) and its storage trait (`storage.rs`) |
//! | **6 seam** |  |
//! | [`backend`] | the store seam: one trait per area (ingest, work queue, memories, recall, browse, transfer, figures here; work states, team rows, the alert outbox, folder rows, the read gate's text and a memory note's evidence in their feature's folder, implemented there over the embedded store; [`backend::Storage`] is all of them), the SQLite implementation of each core area, the failing backend and the contract that calls every method (tests); services hold an `Arc<dyn Storage>`; `raw_drain.rs` indexes queued raw calls once ingest is quiet |
//! | **7 the worker** |  |
//! | [`ingest`] | the ingest pipeline and its four commands (`init`, `observations`, `summarize`, `complete`), the spool ingester; what it wakes is a `SessionDoorbell` the actor tree implements |
//! | [`actors`] | the supervised actor tree: root, the one list of its children (`children.rs`), store, provider (its decisions and counters, `provider_state.rs`; its knowledge-agent turns, `provider_conversation.rs`), session manager, sessions, reaper, vector and Chroma sync, transcript watcher; the backoff schedules; the fault-injection seam tests fill through the builder |
//! | [`worker`] | the composition root (`builder.rs`: settings → a built worker; `running.rs`: start, supervised loops, shutdown; `jobs.rs` and `job_table.rs`: every periodic job, one row each); the worker's state (phase, token, counters, viewer codes and sessions) and services (storage through the seam; the embedded file's own maintenance through its named handle, `embedded.rs`); use-cases: memory, search (`search.rs`), corpora (`corpus.rs`), editing an observation, maintenance, redaction rescan, SIGHUP reload; the sd_notify link; the team's use-cases and status (`team.rs`) |
//! | [`status`] | the typed `GET /api/status` document, built from the worker, read back by the CLI |
//! | **8 adapters** | leaves: nothing imports them but `cli` and each other |
//! | [`hook`] | `memd hook claude-code|codex|gemini <event>`: the thin blocking hook process, host adapters, spool writer (also on SIGTERM) |
//! | [`install`] | `memd install`: hooks and MCP entry in Claude Code's settings (order-preserving edits), plugin folder; Codex and Gemini CLI (`--host`) |
//! | [`mcp`] | `memd mcp`: the stdio MCP server (a framing task answers unparsable lines, `framing.rs`), a client of the worker's HTTP API; one table of tools (the work-state pair in `work.rs`, the corpus tools in `corpus.rs`), each with a parameter type that gives its schema (`tool_params.rs`; search and timeline share theirs with the route, `protocol/search.rs`) and says whether it runs without asking; reads the database when no worker runs |
//! | [`eval`] | `memd eval`: the retrieval benchmark — dataset generator from transcripts ("where did we change X?" questions: `where_changed.rs`), runs over the public API, metrics, report with the tune/held-out halves |
//! | [`ingress`] | the HTTP leaf: axum routes, request checks (Host/Origin/size), who may call (token, viewer cookie + CSRF), `/stream`, the embedded viewer page, typed errors → HTTP |
//! | [`server`] | `memd serve`: the listener, signals, and [`server::serve`], which calls the worker's builder, start and shutdown |
//! | [`cli`] | one file per subcommand (`memd open`: the viewer's one-time link; `memd quarantine`: review and release); `main.rs` only dispatches; `anyhow` lives here |

pub mod action;
pub mod actors;
pub mod alerts;
pub mod allocator;
pub mod backend;
pub mod bridge;
pub mod cli;
pub mod client;
pub mod clock;
pub mod config;
pub mod data_dir;
pub mod eval;
pub mod export;
pub mod folders;
pub mod freshness;
pub mod graph;
pub mod guard;
pub mod hook;
pub mod import;
pub mod ingest;
pub mod ingress;
pub mod install;
pub mod knowledge;
pub mod logging;
pub mod mcp;
pub mod modes;
pub mod observer;
pub mod pipeline;
pub mod protocol;
pub mod providers;
pub mod readgate;
pub mod replay;
pub mod retrieval;
pub mod server;
pub mod service;
pub mod status;
pub mod store;
pub mod team;
pub mod text;
pub mod vectors;
pub mod watch;
pub mod work_state;
pub mod worker;

#[cfg(test)]
mod layout_tests;
