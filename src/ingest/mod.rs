//! The one ingest pipeline every capture path goes through (docs/spec/pipeline.md §1–§6):
//! filters → tag stripping → redaction → limits → a store command. The four commands
//! ([`commands`]) are called by the HTTP routes and the spool alike, so no path can bypass
//! privacy processing.

pub mod commands;
pub mod spool;

pub use commands::{CompleteOutcome, IngestError, IngestService, InitOutcome, ObservationOutcome, SummarizeOutcome, body_platform};

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use crate::pipeline::glob::ExcludedProjects;
use crate::pipeline::limits::{PROMPT_MAX_BYTES, PROMPT_MAX_CHARS, bound, cut_bytes, elide_json_column};
use crate::pipeline::privacy::Privacy;
use crate::pipeline::project::{UNKNOWN_PROJECT, identify};
use crate::pipeline::redact::RedactionCounts;
use crate::pipeline::tags::is_task_notification;
use crate::protocol::api::{InitBody, ObservationBody, SummarizeBody, agent_field};
use crate::store::prompts::PromptIn;
use crate::store::sessions::{SessionKey, SessionSeed};
use crate::store::tool_events::{SummaryRequestIn, ToolEventIn};

const LAST_MESSAGE_MAX_CHARS: usize = 262_144;

/// Why an event was skipped before any write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skip {
    MemdInternal,
    ProjectExcluded,
    ToolExcluded,
    MemdTool,
    /// A tool of the host's own machinery (`ToolSearch` loading deferred tools): no work of the user's.
    MetaTool,
    SessionMemoryMeta,
    InternalProtocol,
    SubagentContext,
}

impl Skip {
    pub fn reason(self) -> &'static str {
        match self {
            Skip::MemdInternal => "memd_internal",
            Skip::ProjectExcluded => "project_excluded",
            Skip::ToolExcluded => "tool_excluded",
            Skip::MemdTool => "memd_tool",
            Skip::MetaTool => "meta_tool",
            Skip::SessionMemoryMeta => "session_memory_meta",
            Skip::InternalProtocol => "internal_protocol",
            Skip::SubagentContext => "subagent_context",
        }
    }
}

/// Settings-derived state of the pipeline (rebuilt when settings change).
pub struct Pipeline {
    pub privacy: Arc<Privacy>,
    pub excluded: ExcludedProjects,
    pub skip_tools: Vec<String>,
    pub data_dir: PathBuf,
    pub home: Option<PathBuf>,
    pub tool_use_max_chars: usize,
    pub redactions: std::sync::Mutex<RedactionCounts>,
}

impl Pipeline {
    /// Adds redactions made outside the pipeline's own calls (explicit memories) to its totals.
    pub fn count(&self, r: &RedactionCounts) {
        if !r.is_empty()
            && let Ok(mut total) = self.redactions.lock()
        {
            total.merge(r);
        }
    }

    /// Filter rules 2–3: the worker's own data directory, excluded projects.
    pub fn check_cwd(&self, cwd: Option<&str>) -> Option<Skip> {
        let cwd = cwd?;
        if Path::new(cwd).starts_with(&self.data_dir) {
            return Some(Skip::MemdInternal);
        }
        self.excluded.matches(cwd).then_some(Skip::ProjectExcluded)
    }

    /// Rules 4–6 for tool events.
    pub fn check_tool(&self, tool: &str, input: &Value) -> Option<Skip> {
        if self.skip_tools.iter().any(|t| t == tool) {
            return Some(Skip::ToolExcluded);
        }
        if is_memd_tool(tool) {
            return Some(Skip::MemdTool);
        }
        if META_TOOLS.contains(&tool) {
            return Some(Skip::MetaTool);
        }
        let meta_path = ["file_path", "notebook_path"]
            .iter()
            .filter_map(|k| input.get(k).and_then(Value::as_str))
            .any(|p| p.contains("session-memory"));
        (matches!(tool, "Edit" | "Write" | "Read" | "NotebookEdit") && meta_path).then_some(Skip::SessionMemoryMeta)
    }

    /// `project` when given, else derived from `cwd` (api.md §2.6); with the project root.
    pub fn project(&self, project: Option<&str>, cwd: Option<&str>) -> (String, Option<String>) {
        let identity = cwd
            .filter(|c| !c.is_empty())
            .map(|c| identify(c, None, self.home.as_deref(), Path::new("/")));
        let root = identity
            .as_ref()
            .map(|i| i.root.to_string_lossy().into_owned())
            .filter(|r| !r.is_empty());
        let name = match project.map(str::trim).filter(|p| !p.is_empty()) {
            Some(p) => p.to_string(),
            None => identity.map(|i| i.primary).unwrap_or_else(|| UNKNOWN_PROJECT.to_string()),
        };
        (name, root)
    }

    /// A short field (tool name, cwd, project, titles) through the redactor, counted.
    fn scrub(&self, s: &str) -> String {
        let (clean, counts) = self.privacy.redactor().redact(s);
        self.count(&counts);
        clean
    }

    fn scrub_opt(&self, s: Option<&str>) -> Option<String> {
        s.map(|s| self.scrub(s))
    }

    fn seed(&self, key: SessionKey, project: Option<&str>, cwd: Option<&str>) -> SessionSeed {
        let (project, project_root) = self.project(project, cwd);
        SessionSeed {
            key,
            project: self.scrub(&project),
            project_root: self.scrub_opt(project_root.as_deref()),
            transcript_path: None,
            custom_title: None,
        }
    }

    pub fn prompt(&self, b: &InitBody, platform: String, at: i64) -> Result<PromptIn, Skip> {
        if let Some(skip) = self.check_cwd(b.cwd.as_deref()) {
            return Err(skip);
        }
        let raw = b.prompt.as_deref().unwrap_or("");
        if is_task_notification(raw) {
            return Err(Skip::InternalProtocol);
        }
        let raw = if raw.trim().is_empty() {
            "[media prompt]"
        } else {
            cut_bytes(raw, PROMPT_MAX_BYTES)
        };
        let cleaned = self.privacy.clean_text(raw);
        self.count(&cleaned.redactions);
        let mut seed = self.seed(
            SessionKey::new(platform, b.content_session_id.clone()),
            b.project.as_deref(),
            b.cwd.as_deref(),
        );
        seed.transcript_path = self.scrub_opt(b.transcript_path.as_deref());
        seed.custom_title = self.scrub_opt(b.custom_title.as_deref());
        Ok(PromptIn {
            seed,
            text: bound(&cleaned.text, PROMPT_MAX_CHARS).into_owned(),
            is_private: cleaned.private,
            prompt_id: b.prompt_id.clone(),
            cwd: self.scrub_opt(b.cwd.as_deref()),
            event_id: b.event_id.clone(),
            at,
        })
    }

    pub fn tool_event(&self, b: ObservationBody, platform: String, at: i64, now: i64) -> Result<ToolEventIn, Skip> {
        if let Some(skip) = self.check_cwd(b.cwd.as_deref()) {
            return Err(skip);
        }
        let input = b.tool_input.unwrap_or_else(|| Value::Object(Default::default()));
        if let Some(skip) = self.check_tool(&b.tool_name, &input) {
            return Err(skip);
        }
        let is_error = b.is_error.unwrap_or(false);
        let response = b.tool_response.unwrap_or_else(|| Value::Object(Default::default()));
        let (input, in_stats) = self.privacy.clean_json(input);
        let (response, out_stats) = self.privacy.clean_json(response);
        self.count(&in_stats.redactions);
        self.count(&out_stats.redactions);
        let (input_text, response_text) = (input.to_string(), response.to_string());
        let (input_chars, response_chars) = (input_text.chars().count() as i64, response_text.chars().count() as i64);
        let mut truncated = 0;
        let input_text = match elide_json_column(&input_text, self.tool_use_max_chars) {
            Some(e) => {
                truncated |= 1;
                e
            }
            None => input_text,
        };
        let response_text = match elide_json_column(&response_text, self.tool_use_max_chars) {
            Some(e) => {
                truncated |= 2;
                e
            }
            None => response_text,
        };
        Ok(ToolEventIn {
            seed: self.seed(
                SessionKey::new(platform, b.content_session_id),
                b.project.as_deref(),
                b.cwd.as_deref(),
            ),
            tool_use_id: b.tool_use_id,
            tool_name: self.scrub(&b.tool_name),
            tool_input: input_text,
            tool_response: response_text,
            is_error,
            cwd: self.scrub_opt(b.cwd.as_deref()),
            agent_id: agent_field(&b.agent_id),
            agent_type: agent_field(&b.agent_type),
            duration_ms: b.duration_ms,
            input_chars,
            response_chars,
            truncated,
            images_stripped: (in_stats.images_stripped + out_stats.images_stripped) as i64,
            redactions: (in_stats.redactions.total() + out_stats.redactions.total()) as i64,
            prompt_id: b.prompt_id,
            event_id: b.event_id,
            occurred_at: at,
            now,
        })
    }

    pub fn summary_request(&self, b: &SummarizeBody, platform: String, at: i64) -> Result<SummaryRequestIn, Skip> {
        if agent_field(&b.agent_id).is_some() || b.agent_id.as_ref().is_some_and(|v| !v.is_null()) {
            return Err(Skip::SubagentContext);
        }
        if let Some(skip) = self.check_cwd(b.cwd.as_deref()) {
            return Err(skip);
        }
        let msg = b.last_assistant_message.as_deref().unwrap_or("");
        let cleaned = self.privacy.clean_text(msg);
        self.count(&cleaned.redactions);
        Ok(SummaryRequestIn {
            seed: self.seed(
                SessionKey::new(platform, b.content_session_id.clone()),
                b.project.as_deref(),
                b.cwd.as_deref(),
            ),
            last_assistant_message: bound(&cleaned.text, LAST_MESSAGE_MAX_CHARS).into_owned(),
            event_id: b.event_id.clone(),
            at,
        })
    }
}

/// Host tools that only manage the agent's own tool set; never stored, whatever the settings.
pub const META_TOOLS: [&str; 2] = ["ToolSearch", "DeferredToolPlaceholder"];

/// One of memd's own MCP tools, by any name Claude Code gives the server: `mcp__memd__search`,
/// a plugin's `mcp__plugin_memd_memd__search`, a server registered as `memd-dev` or `my_memd`.
pub fn is_memd_tool(tool: &str) -> bool {
    let Some(rest) = tool.strip_prefix("mcp__") else { return false };
    let Some((server, _)) = rest.split_once("__") else { return false };
    let server = server.to_ascii_lowercase();
    server == "memd" || server.starts_with("plugin_memd_") || server.split(['_', '-']).any(|part| part == "memd")
}

/// `occurredAtEpoch`, clamped to now; else now.
pub fn event_time(occurred: Option<i64>, now: i64) -> i64 {
    occurred.filter(|t| *t > 0).map_or(now, |t| t.min(now))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memd_tools_by_any_server_name() {
        for t in [
            "mcp__memd__search",
            "mcp__plugin_memd_memd__timeline",
            "mcp__memd-dev__search",
            "mcp__my_memd__forget",
            "mcp__MEMD__x",
        ] {
            assert!(is_memd_tool(t), "{t}");
        }
        for t in [
            "mcp__memdx__search",
            "mcp__github__search",
            "Read",
            "mcp__memd",
            "mcp__notmemd__search",
        ] {
            assert!(!is_memd_tool(t), "{t}");
        }
    }
}
