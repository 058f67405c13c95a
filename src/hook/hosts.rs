//! The agent hosts `memd hook` speaks for (docs/spec/hosts.md): Claude Code, Codex CLI and Gemini
//! CLI. Each host's event names map onto memd's six handlers; its stdin is brought to the shape
//! the handlers read (Claude Code's, which Codex already follows); memd's reply is rewritten into
//! the host's own output shape. Pure functions, unit tested here.

use serde_json::{Map, Value, json};

use super::Handler;
use crate::pipeline::hash::sha256_hex;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Host {
    ClaudeCode,
    Codex,
    Gemini,
}

impl Host {
    pub const ALL: [Host; 3] = [Host::ClaudeCode, Host::Codex, Host::Gemini];

    /// The name on the command line (`memd hook <name> <event>`).
    pub fn name(self) -> &'static str {
        match self {
            Host::ClaudeCode => "claude-code",
            Host::Codex => "codex",
            Host::Gemini => "gemini",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|h| h.name() == s)
    }

    /// The `platformSource` its rows carry.
    pub fn platform(self) -> &'static str {
        match self {
            Host::ClaudeCode => "claude",
            Host::Codex => "codex",
            Host::Gemini => "gemini",
        }
    }

    /// The host's events memd registers for, with the handler each runs.
    pub fn events(self) -> &'static [(&'static str, Handler)] {
        match self {
            Host::ClaudeCode => &[],
            Host::Codex => &[
                ("SessionStart", Handler::Context),
                ("UserPromptSubmit", Handler::SessionInit),
                ("PostToolUse", Handler::Observation),
                ("Stop", Handler::Summarize),
            ],
            Host::Gemini => &[
                ("SessionStart", Handler::Context),
                ("BeforeAgent", Handler::SessionInit),
                ("AfterTool", Handler::Observation),
                ("AfterAgent", Handler::Summarize),
                ("SessionEnd", Handler::Complete),
            ],
        }
    }

    /// The handler for `event`: the host's event name (any case), or memd's own handler name.
    pub fn handler(self, event: &str) -> Option<Handler> {
        if let Some(h) = Handler::parse(event) {
            return Some(h);
        }
        let wanted: String = event.chars().filter(|c| c.is_ascii_alphanumeric()).collect();
        self.events()
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(&wanted))
            .map(|(_, h)| *h)
    }

    /// The host's event name for a handler's reply (`hookSpecificOutput.hookEventName`).
    fn event_of(self, handler: Handler) -> Option<&'static str> {
        self.events().iter().find(|(_, h)| *h == handler).map(|(name, _)| *name)
    }

    /// The host's stdin in the shape the handlers read (Claude Code's field names).
    pub fn normalize(self, input: Value) -> Value {
        match (self, input) {
            (Host::Gemini, Value::Object(m)) => Value::Object(gemini(m)),
            (_, other) => other,
        }
    }

    /// memd's reply in the host's shape: Codex rejects unknown keys and wants its own event
    /// names; Gemini reads `hookSpecificOutput.additionalContext` under its event names.
    pub fn reply(self, handler: Handler, out: String) -> String {
        if self == Host::ClaudeCode {
            return out;
        }
        let Ok(Value::Object(mut v)) = serde_json::from_str::<Value>(&out) else {
            return out;
        };
        match (v.get_mut("hookSpecificOutput"), self.event_of(handler)) {
            (Some(Value::Object(spec)), Some(name)) => {
                spec.retain(|k, _| k == "hookEventName" || k == "additionalContext");
                spec.insert("hookEventName".into(), json!(name));
            }
            (Some(_), _) => {
                v.remove("hookSpecificOutput");
            }
            _ => {}
        }
        v.retain(|k, _| matches!(k.as_str(), "hookSpecificOutput" | "systemMessage" | "continue" | "suppressOutput"));
        Value::Object(v).to_string()
    }
}

/// Gemini CLI's fields (docs/spec/hosts.md §2) as the handlers read them.
fn gemini(mut m: Map<String, Value>) -> Map<String, Value> {
    let event = m.get("hook_event_name").and_then(Value::as_str).unwrap_or("").to_string();
    // Headless Gemini prepends SessionStart's context to the prompt: memd's own injected block is
    // not the user's words and must not be stored as them.
    if let Some(Value::String(p)) = m.get_mut("prompt") {
        *p = strip_injected(p).to_string();
    }
    match event.as_str() {
        "SessionStart" => {
            if let Some(s) = m.get("trigger").cloned().filter(|_| !m.contains_key("source")) {
                m.insert("source".into(), s);
            }
        }
        "AfterTool" => {
            // No tool_use_id in Gemini's payload: a stable one from what identifies the call, so
            // a retried delivery (and the watcher) dedupes against it.
            if !m.contains_key("tool_use_id") {
                let key = format!(
                    "{}\u{0}{}\u{0}{}\u{0}{}",
                    m.get("session_id").and_then(Value::as_str).unwrap_or(""),
                    m.get("timestamp").and_then(Value::as_str).unwrap_or(""),
                    m.get("tool_name").and_then(Value::as_str).unwrap_or(""),
                    m.get("tool_input").map(Value::to_string).unwrap_or_default()
                );
                m.insert("tool_use_id".into(), json!(format!("gemini_{}", &sha256_hex(key.as_bytes())[..24])));
            }
            let response = m.remove("tool_response").unwrap_or(Value::Null);
            let error = response.get("error").filter(|e| !e.is_null()).cloned();
            let text = match response.get("llmContent") {
                Some(Value::String(s)) => Value::String(s.clone()),
                Some(other) => other.clone(),
                None => response.clone(),
            };
            match error {
                Some(e) => {
                    m.insert("hook_event_name".into(), json!("PostToolUseFailure"));
                    let msg = e.get("message").cloned().unwrap_or(e);
                    m.insert("error".into(), msg);
                }
                None => {
                    m.insert("hook_event_name".into(), json!("PostToolUse"));
                    m.insert("tool_response".into(), json!({"output": text}));
                }
            }
        }
        "AfterAgent" => {
            if let Some(r) = m.get("prompt_response").cloned() {
                m.insert("last_assistant_message".into(), r);
            }
            // Gemini's transcript is not Claude Code's: never read it for the message.
            m.remove("transcript_path");
        }
        _ => {}
    }
    m
}

/// `text` without a leading `<hook_context>…</hook_context>` block (memd's injected context).
fn strip_injected(text: &str) -> &str {
    let trimmed = text.trim_start();
    match (trimmed.strip_prefix("<hook_context>"), trimmed.find("</hook_context>")) {
        (Some(_), Some(end)) => trimmed[end + "</hook_context>".len()..].trim_start(),
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_map_to_handlers_by_the_host_s_names() {
        assert_eq!(Host::Codex.handler("PostToolUse"), Some(Handler::Observation));
        assert_eq!(Host::Codex.handler("post-tool-use"), Some(Handler::Observation));
        assert_eq!(Host::Codex.handler("session-start"), Some(Handler::Context));
        assert_eq!(Host::Codex.handler("SessionEnd"), None, "Codex has no session end");
        assert_eq!(Host::Gemini.handler("AfterTool"), Some(Handler::Observation));
        assert_eq!(Host::Gemini.handler("after_agent"), Some(Handler::Summarize));
        assert_eq!(
            Host::Gemini.handler("observation"),
            Some(Handler::Observation),
            "memd's own names work too"
        );
        assert_eq!(Host::parse("gemini"), Some(Host::Gemini));
        assert_eq!(Host::parse("cursor"), None);
    }

    /// Recorded from Gemini CLI's hooks reference (docs/hooks/reference.md): AfterTool input.
    #[test]
    fn gemini_tool_results_become_observations_with_a_stable_id() {
        let payload = json!({"session_id": "g1", "transcript_path": "/t", "cwd": "/w", "hook_event_name": "AfterTool",
            "timestamp": "2026-11-30T10:00:00Z", "tool_name": "run_shell_command", "tool_input": {"command": "ls"},
            "tool_response": {"llmContent": "a\nb", "returnDisplay": "a\nb", "error": null}});
        let a = Host::Gemini.normalize(payload.clone());
        assert_eq!(a["hook_event_name"], "PostToolUse");
        assert_eq!(a["tool_response"], json!({"output": "a\nb"}));
        let id = a["tool_use_id"].as_str().unwrap();
        assert!(id.starts_with("gemini_"));
        assert_eq!(Host::Gemini.normalize(payload)["tool_use_id"], id, "the same call, the same id");
        let failed = json!({"session_id": "g1", "hook_event_name": "AfterTool", "tool_name": "run_shell_command",
            "tool_input": {}, "tool_response": {"llmContent": "", "error": {"message": "exit 1"}}});
        let f = Host::Gemini.normalize(failed);
        assert_eq!(f["hook_event_name"], "PostToolUseFailure");
        assert_eq!(f["error"], "exit 1");
    }

    #[test]
    fn gemini_agent_and_session_fields() {
        let stop = Host::Gemini.normalize(json!({"session_id": "g", "hook_event_name": "AfterAgent", "prompt": "p",
            "prompt_response": "done", "transcript_path": "/x.json", "stop_hook_active": false}));
        assert_eq!(stop["last_assistant_message"], "done");
        assert!(stop.get("transcript_path").is_none());
        let prompt = Host::Gemini.normalize(json!({"session_id": "g", "hook_event_name": "BeforeAgent",
            "prompt": "<hook_context># [work] recent context\n1 ○ Ran ls</hook_context>\n\nlist files please"}));
        assert_eq!(
            prompt["prompt"], "list files please",
            "memd's own injected context is not the user's prompt"
        );
        let plain = Host::Gemini.normalize(json!({"session_id": "g", "hook_event_name": "BeforeAgent", "prompt": "a <hook_context> b"}));
        assert_eq!(plain["prompt"], "a <hook_context> b");
        let start = Host::Gemini.normalize(json!({"session_id": "g", "hook_event_name": "SessionStart", "trigger": "resume"}));
        assert_eq!(start["source"], "resume");
    }

    #[test]
    fn replies_take_each_host_s_shape() {
        let claude = r#"{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"ctx"},"systemMessage":"m"}"#;
        assert_eq!(Host::ClaudeCode.reply(Handler::SessionInit, claude.into()), claude);
        let g: Value = serde_json::from_str(&Host::Gemini.reply(Handler::SessionInit, claude.into())).unwrap();
        assert_eq!(
            g["hookSpecificOutput"],
            json!({"hookEventName": "BeforeAgent", "additionalContext": "ctx"})
        );
        let c: Value = serde_json::from_str(&Host::Codex.reply(Handler::Context, claude.into())).unwrap();
        assert_eq!(c["hookSpecificOutput"]["hookEventName"], "SessionStart");
        assert_eq!(Host::Codex.reply(Handler::Observation, "{}".into()), "{}");
        // A reply for a handler the host has no event for carries no hookSpecificOutput.
        let file = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"x"}}"#;
        assert_eq!(Host::Codex.reply(Handler::FileContext, file.into()), "{}");
    }
}
