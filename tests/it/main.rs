//! The one integration-test binary (`autotests = false`): one module per area, real `memd`
//! processes where a process matters (signals, kill -9, hooks, the MCP stdio server), the worker
//! served in this process (`TestWorker::start_in_process`, through `server::serve`) where it does
//! not (`worker_ingest`, `memory_api`, `retrieval_search`), helpers in [`support`]. Run one area with `cargo test --test it hook_`; fixtures the default run cannot
//! assume (the embedding model, a Chroma server, the full transcript set) are found through
//! environment variables and skip with one line unless `MEMD_REQUIRE_FIXTURES=1` (CI) makes a
//! missing fixture a failure.
//!
//! | module | what it checks |
//! |---|---|
//! | `claude_code` | the real Claude Code CLI against a fake Anthropic API, memd installed |
//! | `claude_code_action` | the real Claude Code CLI: a check that failed in an earlier session is warned in the model's request; editing the named file marks the warning used |
//! | `codex_cli` | the real Codex CLI against a fake Responses API, memd installed with `--host codex` |
//! | `gemini_cli` | the real Gemini CLI against a fake Gemini API, memd installed with `--host gemini` |
//! | `worker_ingest` | ingest over HTTP: acknowledgement after commit, batching, reaping, status |
//! | `worker_hostile` | idle, slowloris and stalled clients under a 1,024 fd limit; health and ingest still answer |
//! | `worker_memory` | RSS falls back after 4,000 sessions are reaped |
//! | `worker_integrity` | a damaged database: read-only, reported, repaired; backups |
//! | `schema_upgrade` | a database of each older schema version opens with every row; a worker killed while migrating |
//! | `hostile_input` | import files that claim trust, a huge id, a forged date, a bad record among good ones; private exports and a planted link; promote of a quarantined record; an alert redirected elsewhere; escapes in every printing command |
//! | `hostile_repo` | a repository whose git config names a program for every setting that runs one, a nested repo, an include, a `.git` file, planted links and FIFOs: a whole session runs none of them and writes nothing outside or through a link |
//! | `data_dir_links` | symbolic links where memd writes (logs, spool, backups, token) are refused, never followed |
//! | `crash_safe` | maintenance commands killed at several points: never a partial store, a rerun reaches the exact state |
//! | `service_manager` | unit files (`systemd-analyze verify`), the plist, sd_notify, socket activation, SIGHUP |
//! | `worker_durability` | kill -9 and SIGTERM under load: nothing acknowledged is lost |
//! | `hook_events` | every hook handler against a real worker: payloads in, protocol replies out |
//! | `hook_hosts` | Codex CLI and Gemini CLI hooks (recorded payloads) against a real worker; `memd install --host` |
//! | `hook_spool` | worker down: the hook spools, the worker ingests the spool once |
//! | `hook_signal` | SIGTERM/SIGINT/SIGHUP during a delivery: the event is spooled, exit 0 |
//! | `hook_autostart` | a hook starts the worker once, under the spawn lock |
//! | `hook_install` | `memd install` / `--uninstall` edit Claude Code's settings exactly |
//! | `hook_replay` | a real transcript replayed through hook processes; the next SessionStart injects |
//! | `replay_conversion` | transcript → hook events counts (docs/spec/hooks.md §6) |
//! | `replay_hook`, `replay_http` | `memd replay` in both modes, with the loss check |
//! | `observer_http` | the LLM observer against fake provider servers with scripted failures |
//! | `observer_claude_cli` | the `claude` CLI observer against a fake `claude` |
//! | `privacy_corpus` | every secret kind × every Claude Code payload shape, over HTTP and the spool: nothing planted survives |
//! | `privacy_secrets` | planted secrets never reach a table, a log or an answer |
//! | `poisoning` | 41 planted instructions through the hook, spool, import, MCP and an LLM observer: quarantined, never injected, every row labelled |
//! | `memory_api`, `memory_cli` | save / forget over HTTP and the CLI |
//! | `mcp_stdio` | `memd mcp` over stdio: every tool, and answers without a worker |
//! | `import_claude_mem` | the claude-mem import, idempotent, through the worker and in-process |
//! | `retrieval_context`, `retrieval_search` | context injection and search over seeded rows |
//! | `vectors_sync`, `vectors_search`, `vectors_chroma` | embeddings, hybrid search, the Chroma mirror |
//! | `team_hostile` | a hostile member on a real PostgreSQL: forged origin and squatted ids refused, unshared projects never stored, future dates clamped, grants; no clear-text password |
//! | `trust` | hidden and split instructions, screened work state, an agent's `memd remember`, no bidi in MCP or JSON output, fenced context APIs |
//! | `viewer_access` | the viewer's access rules (401/403, one-time code, CSRF), `/stream` exactly once across reconnects, closed on shutdown |
//! | `viewer_browser` | the viewer in a real headless Chromium: feed, live update, search, detail, forget; Performance API figures |
//! | `watch_transcripts` | `memd watch`: kill -9 of the worker mid-file, exactly once; hook and watcher on one session |
//! | `action_memory` | the PreToolUse warning before a repeated failure (matcher, silence rules, the edit case, the worker down, the route's checks) and the use tracker's injected/used counts |
//! | `alerts` | alerts to a fake webhook: delivered once across a restart, retried, redacted, other types never sent |
//! | `corpus`, `corpus_claude_cli`, `corpus_viewer` | corpora and the knowledge agent: build, prime, query with citations, over the fake providers, the real Claude Code CLI and the viewer in Chromium |
//! | `doctor` | `memd doctor`'s checks and the cases it got wrong before |
//! | `export_import` | `memd export` / `memd import-md` between two real workers: the same records, nothing twice, a broken file named |
//! | `folder_files` | folder context files in a real git work tree: a person's text kept, vendored and ignored folders skipped |
//! | `freshness` | a real git repository's commits make observations stale; supersession; consolidation |
//! | `graph` | the graph of entities and relations from recorded sessions: `related` over HTTP, MCP and the CLI |
//! | `native_memory` | Claude Code's own memory files: restated lines left out, notes on reads, `memd promote` |
//! | `port_collision` | a port held by another program or another memd named in one line; a free port picked |
//! | `read_gate` | the opt-in read gate through the real PreToolUse hook |
//! | `team`, `team_crash`, `team_viewer` | team memory on a real PostgreSQL: sharing, forgets, outages, a worker killed mid-push, the viewer's Team card |
//! | `work_state` | the work-state MCP pair and routes, per branch; its SessionStart section |
//! | `eval_benchmark` | `memd eval` on the shipped dataset: hybrid ≥ keyword; the dataset is its generator's output |
#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stdout, clippy::print_stderr, clippy::exit)] // a test or a bench: a failed assumption fails it, and it reports by printing

mod support;

mod action_memory;
mod alerts;
mod claude_code;
mod claude_code_action;
mod codex_cli;
mod corpus;
mod corpus_claude_cli;
mod corpus_viewer;
mod crash_safe;
mod data_dir_links;
mod doctor;
mod eval_benchmark;
mod export_import;
mod folder_files;
mod freshness;
mod gemini_cli;
mod graph;
mod hook_autostart;
mod hook_events;
mod hook_hosts;
mod hook_install;
mod hook_replay;
mod hook_signal;
mod hook_spool;
mod hostile_input;
mod hostile_repo;
mod import_claude_mem;
mod mcp_stdio;
mod memory_api;
mod memory_cli;
mod native_memory;
mod observer_claude_cli;
mod observer_http;
mod poisoning;
mod port_collision;
mod privacy_corpus;
mod privacy_secrets;
mod read_gate;
mod replay_conversion;
mod replay_hook;
mod replay_http;
mod retrieval_context;
mod retrieval_search;
mod schema_upgrade;
mod service_manager;
mod team;
mod team_crash;
mod team_hostile;
mod team_viewer;
mod trust;
mod vectors_chroma;
mod vectors_search;
mod vectors_sync;
mod viewer_access;
mod viewer_browser;
mod watch_transcripts;
mod work_state;
mod worker_durability;
mod worker_hostile;
mod worker_ingest;
mod worker_integrity;
mod worker_memory;

/// The index above names every test module (issue 52: it had lost 16 of 56).
#[test]
fn the_index_names_every_test_module() {
    let main = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/main.rs")).unwrap();
    let indexed: std::collections::BTreeSet<String> = main
        .lines()
        .filter(|l| l.starts_with("//! | `"))
        .flat_map(|l| {
            l.split('|')
                .nth(1)
                .unwrap_or("")
                .split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect();
    let missing: Vec<&str> = main
        .lines()
        .filter_map(|l| l.strip_prefix("mod ")?.strip_suffix(';'))
        .filter(|m| *m != "support" && !indexed.contains(*m))
        .collect();
    assert!(missing.is_empty(), "tests/it/main.rs does not index: {missing:?}");
}
