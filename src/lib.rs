//! memd — a memory daemon for AI coding agents.
//!
//! Layout map (one concern per file; the design is `docs/design.md`, the contracts `docs/spec/`).
//! Dependencies point down the table's groups: adapters call the worker's rooms, the rooms call
//! the domain, the domain calls nothing above it.
//!
//! | module | what it holds |
//! |---|---|
//! | **adapters** | |
//! | [`cli`] | one file per subcommand (`memd open`: the viewer's one-time link; `memd quarantine`: review and release); `main.rs` only dispatches; `anyhow` lives here |
//! | [`server`] | `memd serve`: the listener, signals, and [`server::serve`], which calls the worker's builder, start and shutdown |
//! | [`ingress`] | the HTTP leaf: axum routes, request checks (Host/Origin/size), who may call (token, viewer cookie + CSRF), `/stream`, the embedded viewer page, typed errors → HTTP |
//! | [`hook`] | `memd hook claude-code|codex|gemini <event>`: the thin blocking hook process, host adapters, spool writer (also on SIGTERM) |
//! | [`mcp`] | `memd mcp`: the stdio MCP server (a framing task answers unparsable lines, `framing.rs`), a client of the worker's HTTP API; one table of tools (the work-state pair in `work.rs`, the corpus tools in `corpus.rs`), each with a parameter type that gives its schema (`tool_params.rs`, value types in `params.rs`); reads the database when no worker runs |
//! | [`install`] | `memd install`: hooks and MCP entry in Claude Code's settings (order-preserving edits), plugin folder; Codex and Gemini CLI (`--host`) |
//! | [`replay`] | transcripts → hook event stream, load replay against a worker (and `memd import-sessions`' backfill), report and loss check, what an LLM observer would cost (`observer_cost.rs`) |
//! | [`watch`] | the transcript watcher's passes (`memd watch`, and the worker's `TranscriptWatcher` actor when `MEMD_WATCH` is on): tails Claude Code session files and Codex rollouts, converts them with the replay converter, ingests new events exactly once (durable per-file state) |
//! | [`eval`] | `memd eval`: the retrieval benchmark — dataset generator from transcripts ("where did we change X?" questions: `where_changed.rs`), runs over the public API, metrics, report with the tune/held-out halves |
//! | **the worker's rooms** | |
//! | [`worker`] | the composition root (`builder.rs`: settings → a built worker; `running.rs`: start, supervised loops, shutdown); the worker's state (phase, token, counters, viewer codes and sessions) and services; use-cases: memory, work state, search (`search.rs`), corpora (`corpus.rs`), editing an observation, maintenance, redaction rescan, SIGHUP reload; the sd_notify link; allocator tuning |
//! | [`ingest`] | the ingest pipeline and its four commands (`init`, `observations`, `summarize`, `complete`), the spool ingester |
//! | [`status`] | the typed `GET /api/status` document, built from the worker, read back by the CLI |
//! | [`actors`] | the supervised actor tree: root, the one list of its children (`children.rs`), store, provider (and its knowledge-agent turns, `provider_conversation.rs`), session manager, sessions, reaper, vector and Chroma sync, transcript watcher; the backoff schedules; the fault-injection seam tests fill through the builder |
//! | [`retrieval`] | the read side: context injection (the work-state section: `work_render.rs`), file context, search (with the raw archive's index, `raw_search.rs`), timeline, records, the `/stream` feed, the viewer's paged lists and charts (`stats.rs`), an entity's neighbours in the graph (`related.rs`), request parameters; `sink.rs`, the one rule for stored text on agent and terminal surfaces |
//! | [`vectors`] | embeddings (all-MiniLM-L6-v2 on the `memd-bert` crate, int8 or f16 dense kernel, or the static token table distilled from it), the binary sqlite-vec index and its in-memory copy (sign codes) + exact re-rank, documents, Chroma, model install |
//! | [`backend`] | the store seam: the [`backend::Storage`] trait (ingest writes, pending work, observations and summaries, memories, forget, quarantine, keyword search, vector candidates, timeline, records, browse and feed, stats) and its SQLite implementation; services hold an `Arc<dyn Storage>`; `raw_drain.rs` indexes queued raw calls once ingest is quiet |
//! | [`freshness`] | memory that stays current (issue 38): code anchors read from git (`.git` directly for HEAD, one batched `git` call per work tree for blob ids), staleness when a later commit changes an anchored file, the service whose loop anchors and re-checks off every request path, the scheduled consolidation pass |
//! | [`import`] | `memd import-claude-mem`: reading, cleaning and chunking a claude-mem database |
//! | [`bridge`] | Claude Code's own memory (`docs/spec/native-memory.md`): where its files are (`files.rs`), their lines and the restatement rule, memd's note on a read one (`note.rs`), `memd promote`'s edits (`promote.rs`), which Markdown notes to import (`notes.rs`) |
//! | [`readgate`] | the opt-in read gate: which Reads it answers, the outline of a source file (`outline.rs`), the reason text, and its estimate over recorded sessions (`estimate.rs`, `memd replay --read-gate`) |
//! | [`alerts`] | alert bodies (generic JSON, Slack, Telegram) and the retry schedule; the worker's `alerts` loop queues and sends (`worker/alerts.rs`), the outbox is `store/alerts.rs` |
//! | [`folders`] | folder context files (opt-in): which folders and what their section shows (`plan.rs`), the splice that keeps a person's text outside memd's markers |
//! | [`graph`] | the graph of entities and relations (issue 41), from evidence only: what a batch of tool calls shows (`extract.rs`: co-edited files, symbols an edit defined or tested, a command and the error it failed with, the edits that made a failing command pass, concepts), canonical names (`names.rs`); the tables are `store/graph.rs`, `related` is `retrieval/related.rs` |
//! | [`knowledge`] | corpora and the knowledge agent (issue 41, `docs/spec/corpus.md`): the corpus file and the build request (`corpus.rs`), `<data>/corpora/` (`files.rs`), the corpus as a model reads it, its instructions and the citation check (`render.rs`), the requests of a primed conversation per provider (`agent.rs`); the use-cases are `worker/corpus.rs` |
//! | [`export`] | `memd export` / `memd import-md` files: an observation as Markdown (front matter of every field, the narrative as body) or JSON, and the index (`index.rs`) |
//! | **domain and infrastructure** | |
//! | [`observer`] | prompt, XML reply parser, batch job state machine, output bounds, file evidence, the extractive observer (what each edit added, removed and renamed: `extractive/changes.rs`), an LLM's names checked against the batch (`grounding.rs`) |
//! | [`providers`] | observer transports: anthropic, openai, gemini, the `claude` CLI subprocess, extractive |
//! | [`modes`] | observer modes (`modes/*.json`), lookup and deep merge |
//! | [`store`] | SQLite: migrations, group-commit writer thread, read pool, integrity, backups and salvage (a repaired copy swapped in crash-safely: `replace.rs`), rescan, the raw archive's index and its queue (`raw_index.rs`), provenance and quarantine (`quarantine.rs`), code anchors (`anchors.rs`), supersession and contradictions (`supersession.rs`), the consolidation plan and audit log (`consolidation.rs`), work state per project and branch (`work_state.rs`), the graph's tables and backfill (`graph.rs`), one file per table family |
//! | [`pipeline`] | pure privacy and hygiene rules: tags, redaction (fixed-prefix, context and structure-aware detectors), images, globs, limits, hashing, project identity, a call's search terms (`terms.rs`), the instruction screen (`instruction.rs`), supersession and contradiction rules (`supersession.rs`), consolidation rules (`consolidation.rs`) |
//! | [`protocol`] | wire types: HTTP bodies, every API path (`paths.rs`), the ingest route paths, the hook's stdin, the fence around recalled text (`fence.rs`) |
//! | [`client`] | a blocking loopback HTTP client, worker discovery, worker auto-start (hook, MCP, CLI, tests) |
//! | [`config`] | the settings table (key, default, kind, doc), the one rule per kind every process reads by, typed sections (the watcher's in `config/watch.rs`) |
//! | [`service`] | systemd units and the launchd agent (`memd service`), sd_notify, socket activation, which manager started us |
//! | [`data_dir`] | `<data>` layout, permissions, the worker lock, PID file, API token |
//! | [`logging`] | tracing to stderr and a rotating file in `<data>/logs/` |
//! | [`clock`] | the injectable `Clock` the actors read (system, manual, following tokio time), epoch milliseconds, ISO-8601 and UTC day formatting |

pub mod actors;
pub mod alerts;
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
pub mod worker;
