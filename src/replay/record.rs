//! Reading one transcript record (a JSON object of a Claude Code `.jsonl` file): its kind, text,
//! command envelope and timestamp. Pure functions over `serde_json::Value`.

use serde_json::Value;

/// Prefixes of `user` records that are host output, not typed prompts (hooks.md §6 rule 2).
const NOT_PROMPT_PREFIXES: [&str; 7] = [
    "<local-command-stdout>",
    "<local-command-caveat>",
    "Caveat:",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "[Request interrupted by user",
];

/// Slash commands Claude Code runs locally (no model turn): never a UserPromptSubmit.
const BUILTIN_COMMANDS: [&str; 19] = [
    "/clear",
    "/compact",
    "/exit",
    "/mcp",
    "/model",
    "/config",
    "/help",
    "/cost",
    "/status",
    "/resume",
    "/login",
    "/logout",
    "/doctor",
    "/memory",
    "/permissions",
    "/hooks",
    "/agents",
    "/context",
    "/plugin",
];

/// `type`, falling back to `message.role`.
pub fn kind(r: &Value) -> &str {
    r["type"].as_str().or_else(|| r["message"]["role"].as_str()).unwrap_or("")
}

pub fn is_sidechain(r: &Value) -> bool {
    r["isSidechain"].as_bool() == Some(true)
}

pub fn flag(r: &Value, name: &str) -> bool {
    r[name].as_bool() == Some(true)
}

pub fn str_field<'a>(r: &'a Value, name: &str) -> Option<&'a str> {
    r[name].as_str()
}

/// The message content: `message.content`, else a top-level `content` (system records).
pub fn content(r: &Value) -> &Value {
    match &r["message"]["content"] {
        Value::Null => &r["content"],
        c => c,
    }
}

/// Content blocks of the given `type`.
pub fn blocks<'a>(r: &'a Value, ty: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    content(r)
        .as_array()
        .into_iter()
        .flatten()
        .filter(move |b| b["type"].as_str() == Some(ty))
}

pub fn has_tool_result(r: &Value) -> bool {
    blocks(r, "tool_result").next().is_some()
}

/// A string content as is, else the `text` blocks joined with `\n`, leaving out blocks that
/// start with `<ide_` when `skip_ide` (IDE-injected context).
pub fn text_of(content: &Value, skip_ide: bool) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .filter(|b| b["type"].as_str() == Some("text"))
            .filter_map(|b| b["text"].as_str())
            .filter(|t| !(skip_ide && t.starts_with("<ide_")))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Whether a user text is host output rather than something typed.
pub fn is_host_text(text: &str) -> bool {
    NOT_PROMPT_PREFIXES.iter().any(|p| text.starts_with(p))
}

pub fn is_interrupt_text(text: &str) -> bool {
    text.starts_with("[Request interrupted by user")
}

/// A slash-command envelope: `<command-name>/x</command-name>…<command-args>a</command-args>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    pub name: String,
    pub args: String,
}

impl Command {
    pub fn parse(text: &str) -> Option<Command> {
        if !text.trim_start().starts_with("<command-") {
            return None;
        }
        let name = between(text, "<command-name>", "</command-name>")?.trim().to_string();
        let args = between(text, "<command-args>", "</command-args>").unwrap_or("").trim().to_string();
        Some(Command { name, args })
    }

    pub fn is_builtin(&self) -> bool {
        BUILTIN_COMMANDS.contains(&self.name.as_str())
    }

    /// The prompt Claude Code submits for it: `"/x a"`, args omitted when empty.
    pub fn as_prompt(&self) -> String {
        if self.args.is_empty() {
            self.name.clone()
        } else {
            format!("{} {}", self.name, self.args)
        }
    }
}

fn between<'a>(text: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let start = text.find(open)? + open.len();
    let len = text[start..].find(close)?;
    Some(&text[start..start + len])
}

/// Removes every `<system-reminder …>…</system-reminder>` (shortest match), collapses runs of 3+
/// newlines to 2 and trims.
pub fn strip_system_reminders(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("<system-reminder") {
        out.push_str(&rest[..i]);
        match rest[i..].find("</system-reminder>") {
            Some(j) => rest = &rest[i + j + "</system-reminder>".len()..],
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    let mut collapsed = String::with_capacity(out.len());
    let mut newlines = 0;
    for c in out.chars() {
        if c == '\n' {
            newlines += 1;
            if newlines > 2 {
                continue;
            }
        } else {
            newlines = 0;
        }
        collapsed.push(c);
    }
    collapsed.trim().to_string()
}

/// `timestamp` as epoch milliseconds (`2026-02-10T21:11:56.846Z`; offsets other than `Z` are
/// read as UTC). `None` when absent or malformed.
pub fn timestamp_ms(r: &Value) -> Option<i64> {
    parse_iso_ms(r["timestamp"].as_str()?)
}

pub fn parse_iso_ms(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let num = |from: usize, to: usize| -> Option<i64> { s.get(from..to)?.parse().ok() };
    let (y, mo, d) = (num(0, 4)?, num(5, 7)?, num(8, 10)?);
    let (h, mi, sec) = (num(11, 13)?, num(14, 16)?, num(17, 19)?);
    let mut ms = 0;
    if b.get(19) == Some(&b'.') {
        let digits: String = s[20..].chars().take_while(char::is_ascii_digit).take(3).collect();
        let scale = 10_i64.pow(3 - digits.len() as u32);
        ms = digits.parse::<i64>().unwrap_or(0) * scale;
    }
    Some((days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + sec) * 1000 + ms)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_timestamps() {
        assert_eq!(parse_iso_ms("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_iso_ms("2026-02-10T21:11:56.846Z"), Some(1_770_757_916_846));
        assert_eq!(parse_iso_ms("2026-02-10T21:11:56.8Z"), Some(1_770_757_916_800));
        assert_eq!(parse_iso_ms("yesterday"), None);
    }

    #[test]
    fn command_envelopes() {
        let c = Command::parse("<command-message>orchestrator is running…</command-message>\n<command-name>/orchestrator</command-name>\n<command-args>create TODO app</command-args>").unwrap();
        assert_eq!(c.as_prompt(), "/orchestrator create TODO app");
        assert!(!c.is_builtin());
        let c = Command::parse(
            "<command-name>/clear</command-name>\n <command-message>clear</command-message>\n <command-args></command-args>",
        )
        .unwrap();
        assert_eq!((c.as_prompt().as_str(), c.is_builtin()), ("/clear", true));
        assert_eq!(Command::parse("please run <command-name>/x</command-name>"), None);
    }

    #[test]
    fn text_and_reminders() {
        let c = json!([{"type":"text","text":"<ide_opened_file>x</ide_opened_file>"},{"type":"text","text":"fix it"},{"type":"image"}]);
        assert_eq!(text_of(&c, true), "fix it");
        assert_eq!(text_of(&c, false), "<ide_opened_file>x</ide_opened_file>\nfix it");
        assert_eq!(
            strip_system_reminders("a<system-reminder x=1>\nno</system-reminder>\n\n\n\nb "),
            "a\n\nb"
        );
        assert!(is_host_text("[Request interrupted by user for tool use]"));
        assert_eq!(kind(&json!({"message":{"role":"assistant"}})), "assistant");
    }
}
