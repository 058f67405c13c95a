//! The MCP tools, one [`ToolDef`] each — name, description (which repeats its workflow step),
//! input schema and handler, the handler serving both with a worker and without one — and the
//! server instructions (docs/spec/retrieval.md §7, §7.1). `tools/list` and `tools/call` both
//! read [`TOOLS`]: adding a tool is one entry here and its handler.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool};
use serde_json::{Map, Value, json};

use super::caller::{CallerContext, ToolError, ToolText};

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

/// One MCP tool.
pub struct ToolDef {
    pub name: &'static str,
    pub description: &'static str,
    pub input_schema: fn() -> Value,
    pub run: fn(&CallerContext, &Map<String, Value>) -> Result<ToolText, ToolError>,
}

/// Every tool, in the order `tools/list` gives them.
pub const TOOLS: &[ToolDef] = &[
    ToolDef {
        name: "search",
        description: "Step 1 of 3: search past work (observations, session summaries, prompts) and get a compact index \
             (#id, time, type, title, read cost). Then use timeline around a hit, and get_observations for full records.",
        input_schema: || {
            json!({"type": "object", "properties": {
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
            }})
        },
        run: CallerContext::search,
    },
    ToolDef {
        name: "timeline",
        description: "Step 2 of 3: what happened around an id (123, S12, P7) or a time, or around the best hit of a query. \
             Cheap rows; then get_observations for the ids you need.",
        input_schema: || {
            json!({"type": "object", "properties": {
                "anchor": id_value(),
                "query": {"type": "string"},
                "depth_before": {"type": "integer", "minimum": 0, "maximum": 20, "default": 5},
                "depth_after": {"type": "integer", "minimum": 0, "maximum": 20, "default": 5},
                "project": string_or_list("project or chain"),
                "platformSource": {"type": "string"}
            }})
        },
        run: CallerContext::timeline,
    },
    ToolDef {
        name: "get_observations",
        description: "Step 3 of 3: full records for ids found with search or timeline (observations 123, summaries S12, \
             prompts P7). Always batch the ids in one call.",
        input_schema: || {
            json!({"type": "object", "required": ["ids"], "properties": {
                "ids": {"type": "array", "items": id_value(), "minItems": 1, "maxItems": 50}
            }})
        },
        run: super::records::get_observations,
    },
    ToolDef {
        name: "get_tool_uses",
        description: "The raw tool calls (command, input, output) an observation was made from, for when its summary \
             is not enough. Give one observation id.",
        input_schema: || {
            json!({"type": "object", "required": ["id"], "properties": {
                "id": {"type": ["integer", "string"], "description": "observation id, e.g. 123 or \"#123\""}
            }})
        },
        run: super::records::get_tool_uses,
    },
    ToolDef {
        name: "save_memory",
        description: "Save an explicit memory (a decision, a convention, a fact) for future sessions of this project. \
             It is found later by search and listed in session context.",
        input_schema: || {
            json!({"type": "object", "required": ["text"], "properties": {
                "text": {"type": "string"},
                "title": {"type": "string"},
                "project": {"type": "string"},
                "type": {"type": "string"},
                "concepts": {"type": "array", "items": {"type": "string"}},
                "metadata": {"type": "object"}
            }})
        },
        run: CallerContext::save_memory,
    },
    ToolDef {
        name: "forget",
        description: "Remove memories for good: observation ids, a whole session (contentSessionId), or a project's \
             memories before a date. Forgotten memories never come back.",
        input_schema: || {
            json!({"type": "object", "properties": {
                "ids": {"type": "array", "items": id_value(), "maxItems": 100},
                "contentSessionId": {"type": "string"},
                "project": {"type": "string"},
                "before": {"type": ["string", "integer"]},
                "reason": {"type": "string"}
            }})
        },
        run: CallerContext::forget,
    },
    ToolDef {
        name: "session_start_context",
        description: "Step 0: the recent-context index memd injects at session start (ids, times, titles) for this project \
             or the given ones; read it before searching.",
        input_schema: || {
            json!({"type": "object", "properties": {
                "project": {"type": "string"},
                "projects": string_or_list("chain, primary last"),
                "platformSource": {"type": "string"},
                "full": {"type": "boolean"}
            }})
        },
        run: CallerContext::session_start_context,
    },
];

/// The tool list `tools/list` answers.
pub fn tools() -> Vec<Tool> {
    TOOLS
        .iter()
        .map(|t| Tool::new(t.name, t.description, schema((t.input_schema)())))
        .collect()
}

/// The tool named `name`.
pub fn find(name: &str) -> Option<&'static ToolDef> {
    TOOLS.iter().find(|t| t.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
