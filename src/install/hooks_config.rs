//! memd's hook registrations (docs/spec/hooks.md §1, §5) as settings-file matcher groups, and the
//! ownership rule that tells memd's handlers and MCP entry apart from everyone else's.

use super::json_doc::Doc;
use crate::hook::Handler;

/// One row of §1: (event, matcher, handler, async, host timeout in seconds).
pub struct Registration {
    pub event: &'static str,
    pub matcher: Option<&'static str>,
    pub handler: Handler,
    pub is_async: bool,
    pub timeout_s: u64,
}

pub const REGISTRATIONS: [Registration; 8] = [
    // Every source (startup, resume, clear, compact, fork, and whatever Claude Code adds later).
    reg("SessionStart", None, Handler::Context, false, 10),
    reg("UserPromptSubmit", None, Handler::SessionInit, false, 10),
    reg("PreToolUse", Some("Read"), Handler::FileContext, false, 5),
    reg(
        "PreToolUse",
        Some(crate::hook::action_context::TOOLS),
        Handler::ActionContext,
        false,
        5,
    ),
    reg("PostToolUse", Some("*"), Handler::Observation, true, 30),
    reg("PostToolUseFailure", Some("*"), Handler::Observation, true, 30),
    reg("Stop", None, Handler::Summarize, true, 30),
    reg("SessionEnd", None, Handler::Complete, false, 2),
];

const fn reg(event: &'static str, matcher: Option<&'static str>, handler: Handler, is_async: bool, timeout_s: u64) -> Registration {
    Registration {
        event,
        matcher,
        handler,
        is_async,
        timeout_s,
    }
}

/// `"<path>"` with `"`, `\`, `$` and backtick escaped.
pub fn quote_program(path: &str) -> String {
    let mut out = String::from("\"");
    for c in path.chars() {
        if matches!(c, '"' | '\\' | '$' | '`') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// How an installed hook runs memd.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HookForm {
    /// `"command": "<memd>", "args": ["hook", …]`: Claude Code starts memd itself, no shell in
    /// between (the host's SIGTERM then reaches memd, never a shell that dies first).
    #[default]
    Exec,
    /// `"command": "exec <memd> hook …"` for hosts without `args`: the shell replaces itself.
    Shell,
}

/// The lean hook binary installed beside `memd`.
pub const HOOK_BINARY: &str = "memd-hook";

fn is_hook_binary(program: &str) -> bool {
    program.rsplit(['/', '\\']).next().is_some_and(|b| b == HOOK_BINARY)
}

/// The argv after the program of memd's hook handler: `claude-code <handler>` for `memd-hook`,
/// `hook claude-code <handler>` for `memd`.
pub fn hook_args(program: &str, handler: Handler) -> Vec<&'static str> {
    let mut args = if is_hook_binary(program) { vec![] } else { vec!["hook"] };
    args.extend(["claude-code", handler.name()]);
    args
}

/// The shell-form command line (`exec "<program>" [hook] claude-code <handler>`).
pub fn command_for(program: &str, handler: Handler) -> String {
    format!("exec {} {}", quote_program(program), hook_args(program, handler).join(" "))
}

/// Splits a command into (program, rest), unquoting a double-quoted program.
fn split_program(command: &str) -> (String, &str) {
    let command = command.trim_start();
    let command = command.strip_prefix("exec ").map(str::trim_start).unwrap_or(command);
    if let Some(rest) = command.strip_prefix('"') {
        let mut program = String::new();
        let mut chars = rest.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => {
                    if let Some((_, n)) = chars.next() {
                        program.push(n);
                    }
                }
                '"' => return (program, &rest[i + 1..]),
                c => program.push(c),
            }
        }
        return (program, "");
    }
    match command.split_once(' ') {
        Some((p, rest)) => (p.to_string(), rest),
        None => (command.to_string(), ""),
    }
}

fn is_memd_program(program: &str) -> bool {
    let base = program.rsplit(['/', '\\']).next().unwrap_or(program);
    base == "memd" || base == "memd.exe"
}

/// The handler of a memd hook invocation: `memd hook claude-code <h>` or `memd-hook claude-code <h>`.
fn handler_of(program: &str, words: &[&str]) -> Option<Handler> {
    match (is_memd_program(program), is_hook_binary(program), words) {
        (true, _, ["hook", "claude-code", h]) | (_, true, ["claude-code", h]) => Handler::parse(h),
        _ => None,
    }
}

/// The memd handler a hook command runs, if it is memd's.
pub fn owned_handler(command: &str) -> Option<Handler> {
    let (program, rest) = split_program(command);
    let words: Vec<&str> = rest.split_whitespace().collect();
    handler_of(&program, &words)
}

/// The memd handler a settings hook entry runs, in either form.
pub fn owned_handler_doc(h: &Doc) -> Option<Handler> {
    let command = h.get("command").and_then(Doc::as_str)?;
    match h.get("args") {
        Some(Doc::Arr(args)) => {
            let words: Vec<&str> = args.iter().filter_map(Doc::as_str).collect();
            handler_of(command.trim(), &words)
        }
        _ => owned_handler(command),
    }
}

pub fn is_memd_mcp(entry: &Doc) -> bool {
    entry
        .get("command")
        .and_then(Doc::as_str)
        .is_some_and(|c| is_memd_program(&split_program(c).0) || is_memd_program(c))
}

/// `{"type":"command","command":…[,"args":[…]],"timeout":…[,"async":true]}`.
pub fn handler_doc(memd: &str, r: &Registration, form: HookForm) -> Doc {
    let mut fields = vec![("type".to_string(), Doc::str("command"))];
    match form {
        HookForm::Exec => {
            fields.push(("command".to_string(), Doc::str(memd)));
            let args = hook_args(memd, r.handler).iter().map(|a| Doc::str(a)).collect();
            fields.push(("args".to_string(), Doc::Arr(args)));
        }
        HookForm::Shell => fields.push(("command".to_string(), Doc::Str(command_for(memd, r.handler)))),
    }
    fields.push(("timeout".to_string(), Doc::num(r.timeout_s)));
    if r.is_async {
        fields.push(("async".to_string(), Doc::Bool(true)));
    }
    Doc::Obj(fields)
}

/// A matcher group of memd's own (no `matcher` key when the row has none).
pub fn group_doc(memd: &str, r: &Registration, form: HookForm) -> Doc {
    let mut fields = Vec::new();
    if let Some(m) = r.matcher {
        fields.push(("matcher".to_string(), Doc::str(m)));
    }
    fields.push(("hooks".to_string(), Doc::Arr(vec![handler_doc(memd, r, form)])));
    Doc::Obj(fields)
}

/// The whole `hooks` object memd would write into an empty file (also the plugin's hooks.json).
pub fn hooks_object(memd: &str, form: HookForm) -> Doc {
    let mut hooks = Doc::Obj(Vec::new());
    for r in &REGISTRATIONS {
        hooks.set(r.event, Doc::Arr(vec![group_doc(memd, r, form)]));
    }
    hooks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ownership() {
        let c = command_for("/home/dev/.local/bin/memd", Handler::FileContext);
        assert_eq!(c, "exec \"/home/dev/.local/bin/memd\" hook claude-code file-context");
        assert_eq!(owned_handler(&c), Some(Handler::FileContext));
        assert_eq!(owned_handler("\"/x/memd\" hook claude-code context"), Some(Handler::Context));
        let r = &REGISTRATIONS[0];
        let exec = handler_doc("/x/memd", r, HookForm::Exec);
        assert_eq!(exec.get("command").and_then(Doc::as_str), Some("/x/memd"));
        assert_eq!(owned_handler_doc(&exec), Some(r.handler));
        assert_eq!(owned_handler_doc(&handler_doc("/x/memd", r, HookForm::Shell)), Some(r.handler));
        assert_eq!(owned_handler("/x/memd-hook claude-code observation"), Some(Handler::Observation));
        assert_eq!(
            command_for("/x/memd-hook", Handler::Summarize),
            "exec \"/x/memd-hook\" claude-code summarize"
        );
        let lean = handler_doc("/x/memd-hook", r, HookForm::Exec);
        assert_eq!(
            lean.get("args"),
            Some(&Doc::Arr(vec![Doc::str("claude-code"), Doc::str("context")]))
        );
        assert_eq!(owned_handler_doc(&lean), Some(r.handler));
        let foreign = Doc::parse(r#"{"type":"command","command":"/x/memd","args":["mcp"]}"#).unwrap();
        assert_eq!(owned_handler_doc(&foreign), None);
        assert_eq!(
            owned_handler("/usr/bin/memd hook claude-code observation"),
            Some(Handler::Observation)
        );
        assert_eq!(
            owned_handler("\"/a b/memd.exe\" hook claude-code complete"),
            Some(Handler::Complete)
        );
        assert_eq!(owned_handler("node /x/claude-mem/hook.js"), None);
        assert_eq!(owned_handler("/usr/bin/memd hook claude-code nosuch"), None);
        assert_eq!(owned_handler("/usr/bin/notmemd hook claude-code context"), None);
        assert_eq!(quote_program("/a/$x`\"\\"), "\"/a/\\$x\\`\\\"\\\\\"");
    }
}
