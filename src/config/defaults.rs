//! The table of every `MEMD_*` setting with its default and meaning: defined once, here.
//! README's configuration table mirrors it (a unit test checks).

/// (key, default, meaning). The single source of defaults; README's table mirrors it.
pub const DEFAULTS: &[(&str, &str, &str)] = &[
    ("MEMD_DATA_DIR", "~/.memd", "data directory (environment only)"),
    ("MEMD_PORT", "37800 + uid % 100", "worker port on 127.0.0.1"),
    ("MEMD_LOG", "info", "log filter (tracing env-filter syntax)"),
    ("MEMD_DB_SYNCHRONOUS", "FULL", "SQLite synchronous mode: FULL or NORMAL"),
    ("MEMD_DB_READERS", "4", "read-only connections in the pool"),
    ("MEMD_GROUP_COMMIT_MS", "2", "group-commit window of the writer (0-50 ms)"),
    (
        "MEMD_STORE_QUEUE_MAX",
        "10000",
        "pending writes before ingest answers 503 overloaded",
    ),
    ("MEMD_OBSERVER_BATCH_MAX_EVENTS", "20", "events per observer batch"),
    ("MEMD_OBSERVER_BATCH_MAX_CHARS", "40000", "characters per observer batch"),
    ("MEMD_OBSERVER_BATCH_DEBOUNCE_MS", "2000", "quiet time that closes a batch"),
    (
        "MEMD_OBSERVER_BATCH_MAX_WAIT_MS",
        "30000",
        "age of the oldest event that closes a batch",
    ),
    (
        "MEMD_SESSION_IDLE_MS",
        "600000",
        "idle session actors with an empty queue stop after this",
    ),
    ("MEMD_REAPER_INTERVAL_MS", "60000", "how often the orphan reaper runs"),
    ("MEMD_EXCLUDED_PROJECTS", "", "comma list of cwd globs never captured"),
    (
        "MEMD_SKIP_TOOLS",
        "ListMcpResourcesTool,SlashCommand,Skill,TodoWrite,AskUserQuestion",
        "tool names never captured",
    ),
    ("MEMD_REDACT", "true", "redact secrets before storing or sending"),
    ("MEMD_REDACT_DISABLED_BUILTINS", "", "comma list of built-in detectors to skip"),
    ("MEMD_REDACT_CUSTOM_PATTERNS", "[]", "JSON array of {name, regex}"),
    ("MEMD_TOOL_USE_MAX_CHARS", "262144", "cap per stored tool_input / tool_response"),
    ("MEMD_MODE", "code", "observer mode"),
    ("MEMD_MODES_DIR", "", "extra directory searched first for mode files"),
    (
        "MEMD_PROVIDER",
        "auto",
        "observer provider: auto, anthropic, openai, gemini, claude-cli, extractive",
    ),
    ("MEMD_MODEL", "", "model id passed verbatim (empty = the provider's default)"),
    ("MEMD_ANTHROPIC_API_KEY", "", "Anthropic key (else ANTHROPIC_API_KEY)"),
    ("MEMD_ANTHROPIC_BASE_URL", "https://api.anthropic.com", "Messages API base URL"),
    ("MEMD_OPENAI_API_KEY", "", "OpenAI-compatible key (else OPENAI_API_KEY)"),
    (
        "MEMD_OPENAI_BASE_URL",
        "https://api.openai.com/v1",
        "any OpenAI-compatible base URL",
    ),
    ("MEMD_GEMINI_API_KEY", "", "Gemini key (else GEMINI_API_KEY)"),
    (
        "MEMD_GEMINI_BASE_URL",
        "https://generativelanguage.googleapis.com",
        "Gemini API base URL",
    ),
    (
        "MEMD_CLAUDE_PATH",
        "",
        "the Claude Code CLI for claude-cli (empty = claude on PATH)",
    ),
    ("MEMD_DAILY_TOKEN_BUDGET", "2000000", "observer tokens per UTC day; 0 = unlimited"),
    (
        "MEMD_RETENTION_TOOL_USES_DAYS",
        "30",
        "days raw tool_uses rows are kept; 0 = forever",
    ),
    (
        "MEMD_RETENTION_DB_MAX_MB",
        "1024",
        "database size past which old tool_uses rows go; 0 = no cap",
    ),
    ("MEMD_RETENTION_FAILED_DAYS", "30", "days failed pending rows are kept; 0 = forever"),
    (
        "MEMD_RETENTION_OBSERVATIONS_DAYS",
        "0",
        "days observations are kept (not manual, not recently reinforced); 0 = forever",
    ),
    ("MEMD_RETENTION_SUMMARIES_DAYS", "0", "days summaries are kept; 0 = forever"),
    ("MEMD_RETENTION_PROMPTS_DAYS", "0", "days prompts are kept; 0 = forever"),
    ("MEMD_RETENTION_TOKEN_USAGE_DAYS", "400", "days of token_usage kept; 0 = forever"),
    ("MEMD_OBSERVER_TIMEOUT_MS", "60000", "one provider call"),
    (
        "MEMD_OBSERVER_MAX_ATTEMPTS",
        "3",
        "failed provider attempts before the extractive observer",
    ),
    (
        "MEMD_OBSERVER_MAX_DEFER_MS",
        "900000",
        "how long rows wait for an open quota/failure breaker",
    ),
    ("MEMD_OBSERVER_FIELD_MAX_CHARS", "16000", "per-field limit in observer prompts"),
    (
        "MEMD_SPOOL_SCAN_MS",
        "5000",
        "how often the worker rescans <data>/spool/ for hook events",
    ),
    (
        "MEMD_HOOK_BUDGET_MS",
        "2000",
        "hook budget of context and session-init (100-9000 ms)",
    ),
    (
        "MEMD_HOOK_ASYNC_BUDGET_MS",
        "10000",
        "hook budget of observation and summarize (100-29000 ms)",
    ),
    ("MEMD_AUTOSTART", "true", "hooks start the worker when it is not running"),
    ("MEMD_SPOOL_MAX_FILES", "50000", "spool files beyond which hooks drop events"),
    (
        "MEMD_CONTEXT_SHOW_TERMINAL_OUTPUT",
        "false",
        "SessionStart also prints a one-line systemMessage",
    ),
    ("MEMD_SEMANTIC_INJECT", "false", "UserPromptSubmit injects related memories"),
    (
        "MEMD_FILE_CONTEXT",
        "true",
        "PreToolUse(Read) injects what memd knows about the file",
    ),
    (
        "MEMD_CONTEXT_OBSERVATIONS",
        "50",
        "observations in the SessionStart context (1-200)",
    ),
    (
        "MEMD_CONTEXT_SESSION_COUNT",
        "10",
        "session summaries in the SessionStart context (0-50)",
    ),
    (
        "MEMD_CONTEXT_FULL_COUNT",
        "0",
        "newest observations shown with their narrative (0-20)",
    ),
    ("MEMD_CONTEXT_FULL_FIELD", "narrative", "what full rows show: narrative or facts"),
    ("MEMD_CONTEXT_SHOW_STATS", "true", "stats line and token economics in the context"),
    (
        "MEMD_CONTEXT_SHOW_LAST_SUMMARY",
        "true",
        "last session summary block in the context",
    ),
    ("MEMD_CONTEXT_MAX_CHARS", "10000", "context length cap in UTF-16 units (1-100000)"),
    ("MEMD_REINFORCE_ALPHA", "0", "ACT-R reinforcement weight of context ranking (0-10)"),
    (
        "MEMD_SEMANTIC_INJECT_LIMIT",
        "5",
        "hits of the UserPromptSubmit semantic injection (1-20)",
    ),
];

/// Provider environment fallbacks read besides `MEMD_*` (DESIGN.md provider table).
pub const KEY_FALLBACKS: &[(&str, &str)] = &[
    ("MEMD_ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY"),
    ("MEMD_OPENAI_API_KEY", "OPENAI_API_KEY"),
    ("MEMD_GEMINI_API_KEY", "GEMINI_API_KEY"),
];
