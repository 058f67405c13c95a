//! Which main-thread records are typed prompts (hooks.md §6 rule 2), decided up front because a
//! command envelope counts only when an assistant record follows before the next prompt or command.

use serde_json::Value;

use super::record::{self, Command};

/// What a main-thread record contributes to prompts and commands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptRole {
    /// Emits UserPromptSubmit with this prompt.
    Prompt(String),
    /// A command envelope that does not emit (built-in, or no model turn followed).
    Command(Command),
    /// Anything else.
    None,
}

fn is_candidate_user(r: &Value) -> bool {
    record::kind(r) == "user"
        && !record::is_sidechain(r)
        && !record::flag(r, "isMeta")
        && !record::flag(r, "isCompactSummary")
        && !record::has_tool_result(r)
}

/// The command envelope of a main-thread user or system record, if any.
pub fn command_of(r: &Value) -> Option<Command> {
    if record::is_sidechain(r) || !matches!(record::kind(r), "user" | "system") {
        return None;
    }
    Command::parse(&record::text_of(record::content(r), false))
}

/// The role of every record (same indices as `records`).
pub fn roles(records: &[Value]) -> Vec<PromptRole> {
    let raw: Vec<PromptRole> = records.iter().map(raw_role).collect();
    let mut out = raw.clone();
    for (i, role) in raw.iter().enumerate() {
        if let PromptRole::Command(c) = role
            && records[i]["type"].as_str() == Some("user")
            && !c.is_builtin()
            && assistant_follows(records, &raw, i)
        {
            out[i] = PromptRole::Prompt(c.as_prompt());
        }
    }
    out
}

fn raw_role(r: &Value) -> PromptRole {
    if let Some(c) = command_of(r) {
        return if is_candidate_user(r) || record::kind(r) == "system" {
            PromptRole::Command(c)
        } else {
            PromptRole::None
        };
    }
    if !is_candidate_user(r) {
        return PromptRole::None;
    }
    let text = record::text_of(record::content(r), true);
    if record::is_host_text(&text) {
        PromptRole::None
    } else {
        PromptRole::Prompt(text)
    }
}

fn assistant_follows(records: &[Value], raw: &[PromptRole], i: usize) -> bool {
    for (r, role) in records.iter().zip(raw).skip(i + 1) {
        if record::is_sidechain(r) {
            continue;
        }
        if !matches!(role, PromptRole::None) {
            return false;
        }
        if record::kind(r) == "assistant" {
            return true;
        }
    }
    false
}

/// SessionStart `source`: `clear` when the first non-meta main-thread user record is `/clear`.
pub fn start_source(records: &[Value]) -> &'static str {
    let first = records
        .iter()
        .find(|r| record::kind(r) == "user" && !record::is_sidechain(r) && !record::flag(r, "isMeta"));
    match first.and_then(command_of) {
        Some(c) if c.name == "/clear" => "clear",
        _ => "startup",
    }
}

/// SessionEnd `reason`: `prompt_input_exit` when the file's last command envelope is `/exit`.
pub fn end_reason(records: &[Value]) -> &'static str {
    match records.iter().rev().find_map(command_of) {
        Some(c) if c.name == "/exit" => "prompt_input_exit",
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn user(text: &str) -> Value {
        json!({"type":"user","message":{"role":"user","content":text}})
    }
    fn assistant() -> Value {
        json!({"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"ok"}]}})
    }

    #[test]
    fn custom_command_is_a_prompt_only_when_the_model_answers() {
        let cmd = "<command-message>o</command-message>\n<command-name>/orchestrator</command-name>\n<command-args>go</command-args>";
        let records = [user(cmd), assistant(), user(cmd), user("next"), assistant()];
        let r = roles(&records);
        assert_eq!(r[0], PromptRole::Prompt("/orchestrator go".into()));
        assert!(matches!(r[2], PromptRole::Command(_)));
        assert_eq!(r[3], PromptRole::Prompt("next".into()));
    }

    #[test]
    fn builtins_host_text_and_meta_are_not_prompts() {
        let clear = "<command-name>/clear</command-name>\n<command-message>clear</command-message>\n<command-args></command-args>";
        let mut meta = user("Stop hook feedback: x");
        meta["isMeta"] = json!(true);
        let records = [
            user(clear),
            assistant(),
            user("<local-command-stdout>x</local-command-stdout>"),
            meta,
        ];
        let r = roles(&records);
        assert!(matches!(r[0], PromptRole::Command(_)));
        assert_eq!((&r[2], &r[3]), (&PromptRole::None, &PromptRole::None));
        assert_eq!(start_source(&records), "clear");
        assert_eq!(end_reason(&records), "other");
        let exit = json!({"type":"system","subtype":"local_command","content":"<command-name>/exit</command-name>"});
        assert_eq!(end_reason(&[user("hi"), exit]), "prompt_input_exit");
    }
}
