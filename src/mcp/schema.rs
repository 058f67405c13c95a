//! The MCP tools, one [`ToolDef`] each — name, description (which repeats its workflow step),
//! input schema and handler, the handler serving both with a worker and without one — and the
//! server instructions (docs/spec/retrieval.md §7, §7.1). `tools/list` and `tools/call` both
//! read [`TOOLS`]: adding a tool is one entry here and its handler.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool};
use serde_json::{Map, Value};

use super::caller::{CallerContext, ToolError, ToolText};
use super::corpus::{BuildCorpusParams, CorpusNameParams, ListCorporaParams, QueryCorpusParams};
use super::params::{parse, schema_of};
use super::tool_params::{
    ContextParams, ForgetParams, GetObservationsParams, GetToolUsesParams, RelatedParams, SaveMemoryParams, SearchParams, TimelineParams,
    WorkStateReadParams, WorkStateWriteParams,
};

pub const INSTRUCTIONS: &str = "memd remembers what happened in earlier coding sessions of this project. \
Work from cheap to expensive: (1) read the index memd already put in your context or call `search` \
(about 25 tokens per row: ids, times, titles; filters narrow cheaply); (2) call `timeline` around an \
interesting id to see what happened before and after it (about 30 tokens per row); (3) only then call \
`get_observations` with the few ids you need, batched in one call, for the full records (100-1,000 tokens \
each). Use `save_memory` for a decision or fact worth keeping, `forget` to remove a wrong or sensitive \
memory, and `session_start_context` to reload the project's recent context. Keep `work_state_write` up to \
date with the task you are on and its open items: the next session starts from them.";

/// One MCP tool: its input schema and its argument parsing both come from its parameter type.
pub struct ToolDef {
    pub name: &'static str,
    pub description: &'static str,
    pub input_schema: fn() -> Arc<JsonObject>,
    pub run: fn(&CallerContext, &Map<String, Value>) -> Result<ToolText, ToolError>,
    /// Its answer is recalled memory (fenced like injected context), not a confirmation.
    pub recall: bool,
    /// It reads memory or adds to it, so `memd install` lets it run without asking
    /// (`permissions.allow`); a tool that deletes keeps asking.
    pub allowed: bool,
}

/// A [`ToolDef`] from the tool's name, description, parameter type, handler and whether it recalls.
macro_rules! tool {
    ($name:literal, $description:expr, $params:ty, $handler:path, recall: $recall:literal) => {
        tool!($name, $description, $params, $handler, recall: $recall, allowed: false)
    };
    ($name:literal, $description:expr, $params:ty, $handler:path, recall: $recall:literal, allowed: $allowed:literal) => {
        ToolDef {
            name: $name,
            description: $description,
            input_schema: schema_of::<$params>,
            run: |ctx, args| $handler(ctx, parse::<$params>(args)?),
            recall: $recall,
            allowed: $allowed,
        }
    };
}

/// The `permissions.allow` entries of the tools that run without asking (`mcp__memd__<name>`).
pub fn allowed_tools() -> Vec<String> {
    TOOLS
        .iter()
        .filter(|t| t.allowed)
        .map(|t| format!("mcp__memd__{}", t.name))
        .collect()
}

/// Every tool, in the order `tools/list` gives them.
pub const TOOLS: &[ToolDef] = &[
    tool!(
        "search",
        "Step 1 of 3: search past work (observations, session summaries, prompts) and get a compact index \
             (#id, time, type, title, read cost). Then use timeline around a hit, and get_observations for full records.",
        SearchParams,
        CallerContext::search,
        recall: true,
        allowed: true
    ),
    tool!(
        "timeline",
        "Step 2 of 3: what happened around an id (123, S12, P7) or a time, or around the best hit of a query. \
             Cheap rows; then get_observations for the ids you need.",
        TimelineParams,
        CallerContext::timeline,
        recall: true,
        allowed: true
    ),
    tool!(
        "get_observations",
        "Step 3 of 3: full records for ids found with search or timeline (observations 123, summaries S12, \
             prompts P7). Always batch the ids in one call.",
        GetObservationsParams,
        super::records::get_observations,
        recall: true,
        allowed: true
    ),
    tool!(
        "get_tool_uses",
        "The raw tool calls (command, input, output) an observation was made from, for when its summary \
             is not enough. Give one observation id.",
        GetToolUsesParams,
        super::records::get_tool_uses,
        recall: true
    ),
    tool!(
        "related",
        "What is connected to a file, symbol, command or error, from what was observed: files changed \
             together, the edits that made a failing test pass, the error a command failed with, symbols a file \
             defines — strongest first, each with the observation ids that show it (then get_observations).",
        RelatedParams,
        super::related::related,
        recall: true,
        allowed: true
    ),
    tool!(
        "save_memory",
        "Save an explicit memory (a decision, a convention, a fact) for future sessions of this project. \
             It is found later by search and listed in session context.",
        SaveMemoryParams,
        CallerContext::save_memory,
        recall: false,
        allowed: true
    ),
    tool!(
        "forget",
        "Remove memories for good: observation ids, a whole session (contentSessionId), or a project's \
             memories before a date. Forgotten memories never come back.",
        ForgetParams,
        CallerContext::forget,
        recall: false
    ),
    tool!(
        "session_start_context",
        "Step 0: the recent-context index memd injects at session start (ids, times, titles) for this project \
             or the given ones; read it before searching.",
        ContextParams,
        CallerContext::session_start_context,
        recall: true,
        allowed: true
    ),
    tool!(
        "work_state_write",
        "Record what you are working on for the next session of this project (and git branch): the task, \
             items by key with status todo | doing | done | blocked (writing a key again updates it), and notes. \
             Open items are shown at the next session start, also after clear or compact.",
        WorkStateWriteParams,
        CallerContext::work_state_write,
        recall: false,
        allowed: true
    ),
    tool!(
        "work_state_read",
        "The work state of this project (and git branch): the task, open and done items, notes — as the \
             next session start shows it.",
        WorkStateReadParams,
        CallerContext::work_state_read,
        recall: true,
        allowed: true
    ),
    tool!(
        "build_corpus",
        "Build a knowledge corpus from filtered observations (project, types, concepts, files, query, dateStart, \
             dateEnd, limit — default 500), kept as a file; then prime_corpus and query_corpus ask it questions.",
        BuildCorpusParams,
        super::corpus::build_corpus,
        recall: false
    ),
    tool!(
        "list_corpora",
        "List the knowledge corpora with their size and whether they are primed.",
        ListCorporaParams,
        super::corpus::list_corpora,
        recall: false
    ),
    tool!(
        "prime_corpus",
        "Load a corpus into a fresh knowledge-agent session (a model with no tools). Call before query_corpus.",
        CorpusNameParams,
        super::corpus::prime_corpus,
        recall: true
    ),
    tool!(
        "query_corpus",
        "Ask a primed corpus a question: answered only from its observations, citing their ids (an id cited \
             from outside the corpus is flagged). Follow-up questions continue the conversation.",
        QueryCorpusParams,
        super::corpus::query_corpus,
        recall: true
    ),
    tool!(
        "rebuild_corpus",
        "Re-run a corpus's stored filter to take in new observations (then reprime_corpus).",
        CorpusNameParams,
        super::corpus::rebuild_corpus,
        recall: false
    ),
    tool!(
        "reprime_corpus",
        "Start a fresh knowledge-agent session for a corpus, dropping earlier questions and answers.",
        CorpusNameParams,
        super::corpus::reprime_corpus,
        recall: true
    ),
];

/// The tool list `tools/list` answers.
pub fn tools() -> Vec<Tool> {
    TOOLS.iter().map(|t| Tool::new(t.name, t.description, (t.input_schema)())).collect()
}

/// The tool named `name`.
pub fn find(name: &str) -> Option<&'static ToolDef> {
    TOOLS.iter().find(|t| t.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_tool_is_listed_once_with_an_object_schema() {
        let names: std::collections::BTreeSet<_> = TOOLS.iter().map(|t| t.name).collect();
        assert_eq!(names.len(), TOOLS.len(), "a name given twice");
        for t in tools() {
            assert_eq!(t.input_schema.get("type"), Some(&json!("object")), "{}", t.name);
            assert!(find(&t.name).is_some());
        }
        assert!(find("no_such_tool").is_none());
    }

    #[test]
    fn the_tools_that_run_without_asking_come_from_the_table() {
        let allowed = allowed_tools();
        for name in [
            "search",
            "timeline",
            "get_observations",
            "save_memory",
            "session_start_context",
            "related",
        ] {
            assert!(allowed.contains(&format!("mcp__memd__{name}")), "{name} reads or adds memory");
        }
        assert!(!allowed.iter().any(|t| t.ends_with("__forget")), "forget deletes and keeps asking");
        assert_eq!(allowed.len(), 8);
    }
}
