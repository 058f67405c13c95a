//! Every HTTP path of the worker's API, once: the router mounts these and every client — the CLI,
//! the MCP server, the hook, `memd eval` — calls them. Paths with a `{id}` segment are axum
//! patterns; [`with_id`] fills one in. (The ingest paths are [`super::IngestRoute`]'s.)

pub const HEALTH: &str = "/api/health";
pub const READINESS: &str = "/api/readiness";
pub const STATUS: &str = "/api/status";
pub const SHUTDOWN: &str = "/api/admin/shutdown";
pub const ADMIN_PREFIX: &str = "/api/admin/";
pub const IMPORT_CLAUDE_MEM: &str = "/api/admin/import-claude-mem";
pub const GC: &str = "/api/admin/gc";
/// Issue 38: the consolidation pass, its audit log, contradictions.
pub const CONSOLIDATE: &str = "/api/admin/consolidate";
pub const CONSOLIDATION_LOG: &str = "/api/consolidation";
pub const CONTRADICTIONS: &str = "/api/contradictions";
pub const CONTRADICTION_RESOLVE: &str = "/api/contradictions/{id}/resolve";
pub const REDACT_RESCAN: &str = "/api/admin/redact-rescan";
pub const VECTORS_REINDEX: &str = "/api/vectors/reindex";
pub const PENDING_RETRY: &str = "/api/pending/retry";

pub const MEMORY_SAVE: &str = "/api/memory/save";
pub const FORGET: &str = "/api/forget";
pub const OBSERVATION: &str = "/api/observation/{id}";
pub const SUMMARY: &str = "/api/summary/{id}";
pub const PROMPT: &str = "/api/prompt/{id}";
/// `POST`: a person releases a quarantined observation (issue 36).
pub const OBSERVATION_RELEASE: &str = "/api/observation/{id}/release";
/// `GET`: the quarantined records (`?limit=`, default 50).
pub const QUARANTINE: &str = "/api/quarantine";

/// `GET`/`POST`: the work state of a project and branch (issue 39).
pub const WORK_STATE: &str = "/api/work-state";

/// `GET`: whole observations by id pages (`memd export`, issue 39).
pub const EXPORT: &str = "/api/export";
/// `POST`: exported observations back in (`memd import-md`).
pub const IMPORT_OBSERVATIONS: &str = "/api/import/observations";
/// `POST`: the supersession links between imported observations.
pub const IMPORT_LINKS: &str = "/api/import/links";

/// `POST`: one pass of the folder context files (`memd folders`, issue 39).
pub const FOLDERS: &str = "/api/admin/folders";

/// `GET`: the read gate's reason for a file (`?path=…&projects=…&bytes=…`), issue 39.
pub const READ_GATE: &str = "/api/read-gate";

/// `GET`: the warning before a command or an edit that failed before
/// (`?contentSessionId=…&project=…&root=…&command=…|file=…`), issue 53.
pub const ACTION_WARNING: &str = "/api/action-warning";

pub const SEARCH: &str = "/api/search";
pub const TIMELINE: &str = "/api/timeline";
/// An entity's neighbours in the graph (issue 41).
pub const RELATED: &str = "/api/related";
/// Corpora (issue 41): build and list; one corpus; its actions.
/// Team memory (issue 40): status, and a sync pass now.
pub const TEAM: &str = "/api/team";
pub const TEAM_SYNC: &str = "/api/team/sync";
pub const CORPORA: &str = "/api/corpus";
pub const CORPUS: &str = "/api/corpus/{name}";
pub const CORPUS_REBUILD: &str = "/api/corpus/{name}/rebuild";
pub const CORPUS_PRIME: &str = "/api/corpus/{name}/prime";
pub const CORPUS_REPRIME: &str = "/api/corpus/{name}/reprime";
pub const CORPUS_QUERY: &str = "/api/corpus/{name}/query";
pub const CONTEXT_INJECT: &str = "/api/context/inject";
pub const CONTEXT_SEMANTIC: &str = "/api/context/semantic";
pub const OBSERVATIONS_BY_FILE: &str = "/api/observations/by-file";
pub const OBSERVATIONS_BATCH: &str = "/api/observations/batch";
pub const OBSERVATIONS: &str = "/api/observations";
pub const SESSIONS: &str = "/api/sessions";
pub const SESSION: &str = "/api/session/{id}";
pub const TOOL_USES: &str = "/api/tool-uses";
pub const USAGE: &str = "/api/usage";
/// memd's own: the figures `memd stats` and the status page draw (claude-mem's `/api/stats` is another document).
pub const CHARTS: &str = "/api/charts";
pub const PROJECTS: &str = "/api/projects";
pub const STATS: &str = "/api/stats";

pub const STREAM: &str = "/stream";
pub const VIEWER_INDEX: &str = "/";
pub const VIEWER_PREFIX: &str = "/viewer";
pub const VIEWER_APP_JS: &str = "/viewer/app.js";
pub const VIEWER_APP_CSS: &str = "/viewer/app.css";
pub const VIEWER_LOGIN: &str = "/viewer/login";
pub const VIEWER_LOGOUT: &str = "/viewer/logout";
pub const VIEWER_CODE: &str = "/api/viewer/code";

/// `pattern` with its `{id}` segment filled in: `with_id(OBSERVATION, 7)` is `/api/observation/7`.
pub fn with_id(pattern: &str, id: impl std::fmt::Display) -> String {
    pattern.replace("{id}", &id.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_fills_its_segment() {
        assert_eq!(with_id(OBSERVATION, 7), "/api/observation/7");
        assert_eq!(with_id(SESSION, "abc"), "/api/session/abc");
    }
}
