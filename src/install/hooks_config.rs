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

pub const REGISTRATIONS: [Registration; 7] = [
    reg("SessionStart", Some("startup|resume|clear|compact"), Handler::Context, false, 10),
    reg("UserPromptSubmit", None, Handler::SessionInit, false, 10),
    reg("PreToolUse", Some("Read"), Handler::FileContext, false, 5),
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

pub fn command_for(memd: &str, handler: Handler) -> String {
    format!("{} hook claude-code {}", quote_program(memd), handler.name())
}

/// Splits a command into (program, rest), unquoting a double-quoted program.
fn split_program(command: &str) -> (String, &str) {
    let command = command.trim_start();
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

/// The memd handler a hook command runs, if it is memd's.
pub fn owned_handler(command: &str) -> Option<Handler> {
    let (program, rest) = split_program(command);
    if !is_memd_program(&program) {
        return None;
    }
    let words: Vec<&str> = rest.split_whitespace().collect();
    match words.as_slice() {
        ["hook", "claude-code", h] => Handler::parse(h),
        _ => None,
    }
}

pub fn is_memd_mcp(entry: &Doc) -> bool {
    entry
        .get("command")
        .and_then(Doc::as_str)
        .is_some_and(|c| is_memd_program(&split_program(c).0) || is_memd_program(c))
}

/// `{"type":"command","command":…,"timeout":…[,"async":true]}`.
pub fn handler_doc(memd: &str, r: &Registration) -> Doc {
    let mut fields = vec![
        ("type".to_string(), Doc::str("command")),
        ("command".to_string(), Doc::Str(command_for(memd, r.handler))),
        ("timeout".to_string(), Doc::num(r.timeout_s)),
    ];
    if r.is_async {
        fields.push(("async".to_string(), Doc::Bool(true)));
    }
    Doc::Obj(fields)
}

/// A matcher group of memd's own (no `matcher` key when the row has none).
pub fn group_doc(memd: &str, r: &Registration) -> Doc {
    let mut fields = Vec::new();
    if let Some(m) = r.matcher {
        fields.push(("matcher".to_string(), Doc::str(m)));
    }
    fields.push(("hooks".to_string(), Doc::Arr(vec![handler_doc(memd, r)])));
    Doc::Obj(fields)
}

/// The whole `hooks` object memd would write into an empty file (also the plugin's hooks.json).
pub fn hooks_object(memd: &str) -> Doc {
    let mut hooks = Doc::Obj(Vec::new());
    for r in &REGISTRATIONS {
        hooks.set(r.event, Doc::Arr(vec![group_doc(memd, r)]));
    }
    hooks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ownership() {
        let c = command_for("/home/dev/.local/bin/memd", Handler::FileContext);
        assert_eq!(c, "\"/home/dev/.local/bin/memd\" hook claude-code file-context");
        assert_eq!(owned_handler(&c), Some(Handler::FileContext));
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
