//! The MCP tool list: names, descriptions (each repeats its workflow step) and input schemas, and
//! the server instructions (docs/spec/retrieval.md §7, §7.1).

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool};
use serde_json::{Value, json};

pub const INSTRUCTIONS: &str = "memd remembers what happened in earlier coding sessions of this project. \
Work from cheap to expensive: (1) read the index memd already put in your context or call `search` \
(about 25 tokens per row: ids, times, titles; filters narrow cheaply); (2) call `timeline` around an \
interesting id to see what happened before and after it (about 30 tokens per row); (3) only then call \
`get_observations` with the few ids you need, batched in one call, for the full records (100-1,000 tokens \
each). Use `save_memory` for a decision or fact worth keeping, `forget` to remove a wrong or sensitive \
memory, and `session_start_context` to reload the project's recent context.";

fn schema(v: Value) -> Arc<JsonObject> {
    match v {
        Value::Object(m) => Arc::new(m),
        _ => Arc::new(JsonObject::new()),
    }
}

fn string_or_list(desc: &str) -> Value {
    json!({"description": desc, "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]})
}

fn id_value() -> Value {
    json!({"anyOf": [{"type": "integer"}, {"type": "string"}]})
}

pub fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "search",
            "Step 1 of 3: search past work (observations, session summaries, prompts) and get a compact index \
             (#id, time, type, title, read cost). Then use timeline around a hit, and get_observations for full records.",
            schema(json!({"type": "object", "properties": {
                "query": {"type": "string", "description": "words, \"phrases\", prefix*; empty = newest first"},
                "type": {"type": "string", "description": "observations | sessions | prompts, or an observation type"},
                "obs_type": string_or_list("observation types (any of)"),
                "concepts": string_or_list("concepts (any of)"),
                "files": string_or_list("file path substrings (any of)"),
                "project": string_or_list("project or chain; default: this project; * = all"),
                "platformSource": {"type": "string"},
                "dateStart": {"type": ["string", "integer"]},
                "dateEnd": {"type": ["string", "integer"]},
                "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                "offset": {"type": "integer", "minimum": 0},
                "orderBy": {"type": "string", "enum": ["relevance", "date_desc", "date_asc"]}
            }})),
        ),
        Tool::new(
            "timeline",
            "Step 2 of 3: what happened around an id (123, S12, P7) or a time, or around the best hit of a query. \
             Cheap rows; then get_observations for the ids you need.",
            schema(json!({"type": "object", "properties": {
                "anchor": id_value(),
                "query": {"type": "string"},
                "depth_before": {"type": "integer", "minimum": 0, "maximum": 20, "default": 5},
                "depth_after": {"type": "integer", "minimum": 0, "maximum": 20, "default": 5},
                "project": string_or_list("project or chain"),
                "platformSource": {"type": "string"}
            }})),
        ),
        Tool::new(
            "get_observations",
            "Step 3 of 3: full records for ids found with search or timeline (observations 123, summaries S12, \
             prompts P7). Always batch the ids in one call.",
            schema(json!({"type": "object", "required": ["ids"], "properties": {
                "ids": {"type": "array", "items": id_value(), "minItems": 1, "maxItems": 50}
            }})),
        ),
        Tool::new(
            "get_tool_uses",
            "The raw tool calls (command, input, output) an observation was made from, for when its summary \
             is not enough. Give one observation id.",
            schema(json!({"type": "object", "required": ["id"], "properties": {
                "id": {"type": ["integer", "string"], "description": "observation id, e.g. 123 or \"#123\""}
            }})),
        ),
        Tool::new(
            "save_memory",
            "Save an explicit memory (a decision, a convention, a fact) for future sessions of this project. \
             It is found later by search and listed in session context.",
            schema(json!({"type": "object", "required": ["text"], "properties": {
                "text": {"type": "string"},
                "title": {"type": "string"},
                "project": {"type": "string"},
                "type": {"type": "string"},
                "concepts": {"type": "array", "items": {"type": "string"}},
                "metadata": {"type": "object"}
            }})),
        ),
        Tool::new(
            "forget",
            "Remove memories for good: observation ids, a whole session (contentSessionId), or a project's \
             memories before a date. Forgotten memories never come back.",
            schema(json!({"type": "object", "properties": {
                "ids": {"type": "array", "items": id_value(), "maxItems": 100},
                "contentSessionId": {"type": "string"},
                "project": {"type": "string"},
                "before": {"type": ["string", "integer"]},
                "reason": {"type": "string"}
            }})),
        ),
        Tool::new(
            "session_start_context",
            "Step 0: the recent-context index memd injects at session start (ids, times, titles) for this project \
             or the given ones; read it before searching.",
            schema(json!({"type": "object", "properties": {
                "project": {"type": "string"},
                "projects": string_or_list("chain, primary last"),
                "platformSource": {"type": "string"},
                "full": {"type": "boolean"}
            }})),
        ),
    ]
}
