//! The settings table: every `MEMD_*` key once, with its default, its kind (and bounds) and its
//! meaning. The worker, the hook and the CLI all read values through [`super::RawSettings`] with
//! these kinds, so a key means the same in every process; the settings table of docs/settings.md is generated
//! from this one (a unit test compares them).

/// What a value may be; the parse rules are in [`super::RawSettings`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    /// `true|1|yes|on` or `false|0|no|off` (any case).
    Flag,
    /// An integer; values outside `min..=max` are clamped.
    Int { min: u64, max: u64 },
    /// A decimal number; values outside `min..=max` are clamped.
    Float { min: f64, max: f64 },
    /// One of these words (any case).
    Choice(&'static [&'static str]),
    /// Free text (a path, a URL, a name, a JSON document).
    Text,
    /// A comma-separated list.
    List,
    /// A credential: never printed, never logged.
    Secret,
}

/// One setting.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Key {
    pub name: &'static str,
    /// The default as docs/settings.md shows it; computed defaults (`37800 + uid % 100`) are described.
    pub default: &'static str,
    pub kind: Kind,
    pub doc: &'static str,
}

const fn int(min: u64, max: u64) -> Kind {
    Kind::Int { min, max }
}

macro_rules! settings_table {
    ($( $(#[$meta:meta])* $id:ident = ($name:literal, $default:literal, $kind:expr, $doc:literal); )*) => {
        $( $(#[$meta])* pub const $id: Key = Key { name: $name, default: $default, kind: $kind, doc: $doc }; )*
        /// Every key, in the order docs/settings.md lists them.
        pub const KEYS: &[Key] = &[$($id),*];
    };
}

settings_table! {
    DATA_DIR = ("MEMD_DATA_DIR", "~/.memd", Kind::Text, "data directory (environment only)");
    PORT = ("MEMD_PORT", "37800 + uid % 100", int(0, 65535), "worker port on 127.0.0.1");
    LOG = ("MEMD_LOG", "info", Kind::Text, "log filter (tracing env-filter syntax)");
    DB_SYNCHRONOUS = ("MEMD_DB_SYNCHRONOUS", "FULL", Kind::Choice(&["FULL", "NORMAL"]), "SQLite synchronous mode: FULL or NORMAL");
    DB_READERS = ("MEMD_DB_READERS", "4", int(1, 64), "read-only connections in the pool (1-64)");
    GROUP_COMMIT_MS = ("MEMD_GROUP_COMMIT_MS", "2", int(0, 50), "group-commit window of the writer (0-50 ms)");
    STORE_QUEUE_MAX = ("MEMD_STORE_QUEUE_MAX", "10000", int(16, 1_000_000), "pending writes before ingest answers 503 overloaded");
    BATCH_MAX_EVENTS = ("MEMD_OBSERVER_BATCH_MAX_EVENTS", "20", int(1, 500), "events per observer batch (1-500)");
    BATCH_MAX_CHARS = ("MEMD_OBSERVER_BATCH_MAX_CHARS", "40000", int(1_000, 10_000_000), "characters per observer batch");
    BATCH_DEBOUNCE_MS = ("MEMD_OBSERVER_BATCH_DEBOUNCE_MS", "2000", int(0, 600_000), "quiet time that closes a batch");
    BATCH_MAX_WAIT_MS = ("MEMD_OBSERVER_BATCH_MAX_WAIT_MS", "30000", int(0, 3_600_000), "age of the oldest event that closes a batch");
    SESSION_IDLE_MS = ("MEMD_SESSION_IDLE_MS", "600000", int(100, 86_400_000), "idle session actors with an empty queue stop after this");
    REAPER_INTERVAL_MS = ("MEMD_REAPER_INTERVAL_MS", "60000", int(50, 86_400_000), "how often the orphan reaper runs");
    EXCLUDED_PROJECTS = ("MEMD_EXCLUDED_PROJECTS", "", Kind::List, "comma list of cwd globs never captured");
    SKIP_TOOLS = ("MEMD_SKIP_TOOLS", "ListMcpResourcesTool,SlashCommand,Skill,TodoWrite,AskUserQuestion", Kind::List, "tool names never captured");
    REDACT = ("MEMD_REDACT", "true", Kind::Flag, "redact secrets before storing or sending");
    REDACT_DISABLED_BUILTINS = ("MEMD_REDACT_DISABLED_BUILTINS", "", Kind::List, "comma list of built-in detectors to skip");
    REDACT_CUSTOM_PATTERNS = ("MEMD_REDACT_CUSTOM_PATTERNS", "[]", Kind::Text, "JSON array of {name, regex}");
    TOOL_USE_MAX_CHARS = ("MEMD_TOOL_USE_MAX_CHARS", "262144", int(1_024, 100_000_000), "cap per stored tool_input / tool_response");
    MODE = ("MEMD_MODE", "code", Kind::Text, "observer mode");
    MODES_DIR = ("MEMD_MODES_DIR", "", Kind::Text, "extra directory searched first for mode files");
    PROVIDER = ("MEMD_PROVIDER", "auto", Kind::Text, "observer provider: auto, anthropic, openai, gemini, claude-cli, extractive");
    MODEL = ("MEMD_MODEL", "", Kind::Text, "model id passed verbatim (empty = the provider's default)");
    ANTHROPIC_API_KEY = ("MEMD_ANTHROPIC_API_KEY", "", Kind::Secret, "Anthropic key (else ANTHROPIC_API_KEY)");
    ANTHROPIC_BASE_URL = ("MEMD_ANTHROPIC_BASE_URL", "https://api.anthropic.com", Kind::Text, "Messages API base URL");
    OPENAI_API_KEY = ("MEMD_OPENAI_API_KEY", "", Kind::Secret, "OpenAI-compatible key (else OPENAI_API_KEY)");
    OPENAI_BASE_URL = ("MEMD_OPENAI_BASE_URL", "https://api.openai.com/v1", Kind::Text, "any OpenAI-compatible base URL");
    GEMINI_API_KEY = ("MEMD_GEMINI_API_KEY", "", Kind::Secret, "Gemini key (else GEMINI_API_KEY)");
    GEMINI_BASE_URL = ("MEMD_GEMINI_BASE_URL", "https://generativelanguage.googleapis.com", Kind::Text, "Gemini API base URL");
    CLAUDE_PATH = ("MEMD_CLAUDE_PATH", "", Kind::Text, "the Claude Code CLI for claude-cli (empty = claude on PATH)");
    DAILY_TOKEN_BUDGET = ("MEMD_DAILY_TOKEN_BUDGET", "2000000", int(0, u64::MAX), "observer tokens per UTC day; 0 = unlimited");
    RETENTION_TOOL_USES_DAYS = ("MEMD_RETENTION_TOOL_USES_DAYS", "30", int(0, 100_000), "days raw tool_uses rows are kept; 0 = forever");
    RETENTION_DB_MAX_MB = ("MEMD_RETENTION_DB_MAX_MB", "1024", int(0, 100_000_000), "database size past which old tool_uses rows go; 0 = no cap");
    RETENTION_FAILED_DAYS = ("MEMD_RETENTION_FAILED_DAYS", "30", int(0, 100_000), "days failed pending rows are kept; 0 = forever");
    RETENTION_OBSERVATIONS_DAYS = ("MEMD_RETENTION_OBSERVATIONS_DAYS", "0", int(0, 100_000), "days observations are kept (not manual, not recently reinforced); 0 = forever");
    RETENTION_SUMMARIES_DAYS = ("MEMD_RETENTION_SUMMARIES_DAYS", "0", int(0, 100_000), "days summaries are kept; 0 = forever");
    RETENTION_PROMPTS_DAYS = ("MEMD_RETENTION_PROMPTS_DAYS", "0", int(0, 100_000), "days prompts are kept; 0 = forever");
    RETENTION_TOKEN_USAGE_DAYS = ("MEMD_RETENTION_TOKEN_USAGE_DAYS", "400", int(0, 100_000), "days of token_usage kept; 0 = forever");
    OBSERVER_TIMEOUT_MS = ("MEMD_OBSERVER_TIMEOUT_MS", "60000", int(100, 3_600_000), "one provider call");
    OBSERVER_MAX_ATTEMPTS = ("MEMD_OBSERVER_MAX_ATTEMPTS", "3", int(1, 100), "failed provider attempts before the extractive observer");
    OBSERVER_MAX_DEFER_MS = ("MEMD_OBSERVER_MAX_DEFER_MS", "900000", int(0, 86_400_000), "how long rows wait for an open quota/failure breaker");
    OBSERVER_CONCURRENCY = ("MEMD_OBSERVER_CONCURRENCY", "4", int(1, 64), "provider calls open at once, across all sessions");
    OBSERVER_FIELD_MAX_CHARS = ("MEMD_OBSERVER_FIELD_MAX_CHARS", "16000", int(2_000, 1_000_000), "per-field limit in observer prompts");
    HTTP_MAX_CONNECTIONS = ("MEMD_HTTP_MAX_CONNECTIONS", "512", int(16, 100_000), "open connections before the oldest idle one is closed (always 128 below the fd limit)");
    HTTP_HEADER_TIMEOUT_MS = ("MEMD_HTTP_HEADER_TIMEOUT_MS", "5000", int(100, 600_000), "time a client has to send its request headers");
    HTTP_BODY_TIMEOUT_MS = ("MEMD_HTTP_BODY_TIMEOUT_MS", "10000", int(100, 600_000), "time a client has to send its request body (408 after)");
    HTTP_IDLE_TIMEOUT_MS = ("MEMD_HTTP_IDLE_TIMEOUT_MS", "30000", int(100, 3_600_000), "a kept-alive connection with no request closes after this");
    BACKUP_INTERVAL_HOURS = ("MEMD_BACKUP_INTERVAL_HOURS", "24", int(0, 8_760), "hours between online backups into <data>/backups/; 0 = none");
    FRESHNESS = ("MEMD_FRESHNESS", "true", Kind::Flag, "anchor observations to git (HEAD, file blob ids) and mark them stale when a later commit changes their files; false: memd never runs git");
    CONSOLIDATE_INTERVAL_HOURS = ("MEMD_CONSOLIDATE_INTERVAL_HOURS", "24", int(0, 8_760), "hours between consolidation passes (duplicates merged, relative dates made absolute, chains folded); 0 = only `memd consolidate`");
    BACKUP_KEEP = ("MEMD_BACKUP_KEEP", "3", int(1, 100), "backups kept (the oldest go first)");
    WATCH = ("MEMD_WATCH", "false", Kind::Flag, "the worker tails session transcripts itself (for hosts without hooks)");
    WATCH_ROOTS = ("MEMD_WATCH_ROOTS", "", Kind::List, "directories the watcher tails (empty: `$CLAUDE_CONFIG_DIR/projects` or `~/.claude/projects`, and `$CODEX_HOME/sessions` or `~/.codex/sessions`)");
    WATCH_INTERVAL_MS = ("MEMD_WATCH_INTERVAL_MS", "2000", int(50, 3_600_000), "time between the watcher's passes");
    WATCH_IDLE_MS = ("MEMD_WATCH_IDLE_MS", "600000", int(0, 86_400_000), "a session file unchanged this long is finished (its last turn and end are delivered)");
    SPOOL_SCAN_MS = ("MEMD_SPOOL_SCAN_MS", "5000", int(50, 3_600_000), "how often the worker rescans <data>/spool/ for hook events");
    HOOK_BUDGET_MS = ("MEMD_HOOK_BUDGET_MS", "2000", int(100, 9_000), "hook budget of context and session-init (100-9000 ms)");
    HOOK_ASYNC_BUDGET_MS = ("MEMD_HOOK_ASYNC_BUDGET_MS", "10000", int(100, 29_000), "hook budget of observation and summarize (100-29000 ms)");
    AUTOSTART = ("MEMD_AUTOSTART", "true", Kind::Flag, "hooks and memd mcp start the worker when it is not running");
    SPOOL_MAX_FILES = ("MEMD_SPOOL_MAX_FILES", "50000", int(1, u64::MAX), "spool files beyond which hooks drop events");
    CONTEXT_SHOW_TERMINAL_OUTPUT = ("MEMD_CONTEXT_SHOW_TERMINAL_OUTPUT", "false", Kind::Flag, "SessionStart also prints a one-line systemMessage");
    SEMANTIC_INJECT = ("MEMD_SEMANTIC_INJECT", "false", Kind::Flag, "UserPromptSubmit injects related memories");
    READ_GATE = ("MEMD_READ_GATE", "false", Kind::Flag, "a whole-file Read of a large code file memd has seen gets its outline and the advice to read by offset/limit instead (the second whole read passes)");
    READ_GATE_MIN_BYTES = ("MEMD_READ_GATE_MIN_BYTES", "32768", int(1_024, 104_857_600), "files smaller than this pass the read gate untouched");
    FILE_CONTEXT = ("MEMD_FILE_CONTEXT", "true", Kind::Flag, "PreToolUse(Read) injects what memd knows about the file");
    ACTION_MEMORY = ("MEMD_ACTION_MEMORY", "true", Kind::Flag, "PreToolUse (Bash, Edit, Write, MultiEdit) warns before a command or edit that failed in an earlier session");
    USE_INDEX_DROP_AFTER = ("MEMD_USE_INDEX_DROP_AFTER", "5", int(0, 1_000), "a record delivered this many times (seen in a readable transcript) and never used leaves SessionStart's index (0: never)");
    CONTEXT_OBSERVATIONS = ("MEMD_CONTEXT_OBSERVATIONS", "50", int(1, 200), "observations in the SessionStart context (1-200)");
    CONTEXT_SESSION_COUNT = ("MEMD_CONTEXT_SESSION_COUNT", "10", int(0, 50), "session summaries in the SessionStart context (0-50)");
    CONTEXT_FULL_COUNT = ("MEMD_CONTEXT_FULL_COUNT", "0", int(0, 20), "newest observations shown with their narrative (0-20)");
    CONTEXT_FULL_FIELD = ("MEMD_CONTEXT_FULL_FIELD", "narrative", Kind::Choice(&["narrative", "facts"]), "what full rows show: narrative or facts");
    CONTEXT_SHOW_STATS = ("MEMD_CONTEXT_SHOW_STATS", "true", Kind::Flag, "stats line and token economics in the context");
    CONTEXT_SHOW_LAST_SUMMARY = ("MEMD_CONTEXT_SHOW_LAST_SUMMARY", "true", Kind::Flag, "last session summary block in the context");
    CONTEXT_MAX_CHARS = ("MEMD_CONTEXT_MAX_CHARS", "10000", int(1, 100_000), "context length cap in UTF-16 units (1-100000)");
    WORK_STATE = ("MEMD_WORK_STATE", "true", Kind::Flag, "SessionStart shows the project's work state (task, open items, notes) in its own section");
    WORK_STATE_MAX_CHARS = ("MEMD_WORK_STATE_MAX_CHARS", "3000", int(200, 20_000), "cap of the work-state section in UTF-16 units, taken from the context's cap (oldest done items dropped first)");
    WORK_STALE_DAYS = ("MEMD_WORK_STALE_DAYS", "14", int(1, 3_650), "an open work item not updated for this many days is shown as such");
    GRAPH = ("MEMD_GRAPH", "true", Kind::Flag, "build the graph of entities and relations (files changed together, fixes, failures, symbols) as batches are stored; `related` answers from it");
    GRAPH_SEARCH = ("MEMD_GRAPH_SEARCH", "false", Kind::Flag, "a search naming a code identifier the graph knows puts first the edit that wrote it (off: it did not help on the held-out questions, docs/measurements.md)");
    FOLDER_CONTEXT = ("MEMD_FOLDER_CONTEXT", "false", Kind::Flag, "maintain a generated section (between memd's markers) in each worked-on folder's context file listing recent observations of its files");
    FOLDER_CONTEXT_FILE = ("MEMD_FOLDER_CONTEXT_FILE", "CLAUDE.md", Kind::Text, "the per-folder context file the section is kept in (a plain file name)");
    FOLDER_CONTEXT_DAYS = ("MEMD_FOLDER_CONTEXT_DAYS", "14", int(1, 3_650), "observations from this many days back are listed in folder context files");
    ALERT_WEBHOOK_URL = ("MEMD_ALERT_WEBHOOK_URL", "", Kind::Secret, "observations of the alert types are posted to this URL (empty: alerts off)");
    ALERT_FORMAT = ("MEMD_ALERT_FORMAT", "json", Kind::Choice(&["json", "slack", "telegram"]), "the alert's body: generic JSON, a Slack incoming-webhook message, or a Telegram sendMessage");
    ALERT_TYPES = ("MEMD_ALERT_TYPES", "security_alert,sensitive", Kind::List, "observation types that raise an alert");
    ALERT_TELEGRAM_CHAT_ID = ("MEMD_ALERT_TELEGRAM_CHAT_ID", "", Kind::Text, "chat_id of the Telegram shape");
    NATIVE_MEMORY = ("MEMD_NATIVE_MEMORY", "true", Kind::Flag, "read Claude Code's memory files (CLAUDE.md, AGENTS.md, the auto-memory MEMORY.md): SessionStart leaves out what they already say, and reading one adds memd's newer evidence");
    NOTES_ROOTS = ("MEMD_NOTES_ROOTS", "", Kind::List, "directories of Markdown notes imported as memories (import provenance; re-imported on change, never deleted)");
    REINFORCE_ALPHA = ("MEMD_REINFORCE_ALPHA", "0", Kind::Float { min: 0.0, max: 10.0 }, "ACT-R reinforcement weight of context ranking (0-10)");
    SEMANTIC_INJECT_LIMIT = ("MEMD_SEMANTIC_INJECT_LIMIT", "5", int(1, 20), "hits of the UserPromptSubmit semantic injection (1-20)");
    EMBEDDINGS = ("MEMD_EMBEDDINGS", "local", Kind::Choice(&["local", "none"]), "local (in-process: MEMD_EMBED_ENCODER) or none");
    EMBED_ENCODER = ("MEMD_EMBED_ENCODER", "transformer", Kind::Choice(&["transformer", "static"]), "transformer (all-MiniLM-L6-v2: ~2 ms a query on the int8 kernel, 4–7 on f16) or static (a token table distilled from it: µs a query, weaker on paraphrases)");
    EMBED_KERNEL = ("MEMD_EMBED_KERNEL", "auto", Kind::Choice(&["auto", "int8", "f16"]), "the transformer's dense layers: auto (int8 where the CPU has AVX-512 VNNI, else f16), int8 or f16");
    VECTOR_QUERY_BUDGET_MS = ("MEMD_VECTOR_QUERY_BUDGET_MS", "800", int(50, 60_000), "time the vector half of a search may take before it answers keyword-only");
    SEARCH_KEYWORD_WEIGHT = ("MEMD_SEARCH_KEYWORD_WEIGHT", "1", Kind::Float { min: 0.0, max: 10.0 }, "weight of the keyword ranks in hybrid search (weighted RRF)");
    SEARCH_VECTOR_WEIGHT = ("MEMD_SEARCH_VECTOR_WEIGHT", "0.7", Kind::Float { min: 0.0, max: 10.0 }, "weight of the vector ranks in hybrid search (weighted RRF)");
    SEARCH_VECTOR_FLOOR = ("MEMD_SEARCH_VECTOR_FLOOR", "0.2", Kind::Float { min: -1.0, max: 1.0 }, "cosine similarity below which a vector candidate is ignored");
    SEARCH_VECTOR_CONFIDENT = ("MEMD_SEARCH_VECTOR_CONFIDENT", "0.7", Kind::Float { min: -1.0, max: 1.0 }, "cosine similarity the nearest vector candidate needs before hybrid search may move the keyword list's first row from first place (strong keyword matches always rank first)");
    SEARCH_RRF_K = ("MEMD_SEARCH_RRF_K", "5", Kind::Float { min: 1.0, max: 1000.0 }, "the RRF constant k of hybrid search: 1/(k + rank)");
    EMBED_MODEL_DIR = ("MEMD_EMBED_MODEL_DIR", "<data>/models/all-MiniLM-L6-v2", Kind::Text, "the model files");
    TEAM_DATABASE_URL = ("MEMD_TEAM_DATABASE_URL", "", Kind::Secret, "team memory's PostgreSQL server (postgres://role@host/db?sslmode=require); empty: no team");
    TEAM_PROJECTS = ("MEMD_TEAM_PROJECTS", "", Kind::List, "projects whose memories are shared with the team (memd team share adds one)");
    TEAM_ORIGIN = ("MEMD_TEAM_ORIGIN", "", Kind::Text, "how this machine's rows are labelled on the team server (empty: user@host)");
    TEAM_CA_FILE = ("MEMD_TEAM_CA_FILE", "", Kind::Text, "PEM file of extra root certificates for the team server's TLS");
    TEAM_SYNC_MS = ("MEMD_TEAM_SYNC_MS", "2000", int(200, 600_000), "how often the worker pushes to and pulls from the team server");
    CHROMA_URL = ("MEMD_CHROMA_URL", "", Kind::Text, "Chroma server for vectors (empty = sqlite-vec)");
    CHROMA_TENANT = ("MEMD_CHROMA_TENANT", "default_tenant", Kind::Text, "Chroma tenant");
    CHROMA_DATABASE = ("MEMD_CHROMA_DATABASE", "default_database", Kind::Text, "Chroma database");
    CHROMA_TOKEN = ("MEMD_CHROMA_TOKEN", "", Kind::Secret, "sent as x-chroma-token");
    CHROMA_RETRY_MS = ("MEMD_CHROMA_RETRY_MS", "5000", int(10, 300_000), "first retry while Chroma is down (x2, max 5 min)");
}

/// Defaults that are described rather than literal (computed at run time).
pub const COMPUTED_DEFAULTS: &[Key] = &[DATA_DIR, PORT, EMBED_MODEL_DIR];

/// Provider environment fallbacks read besides `MEMD_*` (docs/design.md provider table).
pub const KEY_FALLBACKS: &[(Key, &str)] = &[
    (ANTHROPIC_API_KEY, "ANTHROPIC_API_KEY"),
    (OPENAI_API_KEY, "OPENAI_API_KEY"),
    (GEMINI_API_KEY, "GEMINI_API_KEY"),
];

/// The key named `name`, if it is a setting.
pub fn find(name: &str) -> Option<&'static Key> {
    KEYS.iter().find(|k| k.name == name)
}

/// The settings table of docs/settings.md, generated from [`KEYS`].
pub fn markdown_table() -> String {
    let mut out = String::from("| key (also env) | default | meaning |\n|---|---|---|\n");
    for k in KEYS {
        let default = if k.default.is_empty() {
            "(empty)".to_string()
        } else {
            format!("`{}`", k.default)
        };
        out.push_str(&format!("| `{}` | {default} | {} |\n", k.name, k.doc));
    }
    out
}
