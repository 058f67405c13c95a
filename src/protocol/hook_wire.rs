//! The JSON Claude Code writes on a hook's stdin (docs/spec/hooks.md §2.2), read tolerantly: unknown
//! fields are ignored, `null` counts as absent, an optional field of the wrong type is absent.
//! Only the required fields (`session_id`, a string `cwd`, `tool_name` for `observation`) make
//! the input malformed.

use serde_json::{Map, Value};

/// Why stdin was rejected (exit 2, `memd hook: malformed input: <reason>`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Malformed(pub String);

/// One parsed hook event.
#[derive(Debug, Clone)]
pub struct HookInput {
    fields: Map<String, Value>,
    /// `session_id`, else `sessionId`, else `id`.
    pub session_id: String,
    /// `cwd` when a non-empty string; `None` means "use the process cwd".
    pub cwd: Option<String>,
}

impl HookInput {
    /// Parses stdin; `needs_tool_name` is set for the `observation` handler.
    pub fn parse(bytes: &[u8], needs_tool_name: bool) -> Result<Self, Malformed> {
        Self::parse_with(bytes, needs_tool_name, |v| v)
    }

    /// [`HookInput::parse`] with `shape` applied to the JSON first (another host's payload
    /// brought to Claude Code's field names), parsing stdin once.
    pub fn parse_with(bytes: &[u8], needs_tool_name: bool, shape: impl FnOnce(Value) -> Value) -> Result<Self, Malformed> {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(Malformed("stdin is empty".into()));
        }
        let value: Value = serde_json::from_slice(bytes).map_err(|e| Malformed(format!("not JSON ({})", e.classify_name())))?;
        let Value::Object(fields) = shape(value) else {
            return Err(Malformed("not a JSON object".into()));
        };
        let session_id = ["session_id", "sessionId", "id"]
            .iter()
            .find_map(|k| fields.get(*k).and_then(Value::as_str).filter(|s| !s.is_empty()))
            .map(str::to_string)
            .ok_or_else(|| Malformed("session_id is missing or not a non-empty string".into()))?;
        let cwd = match fields.get("cwd") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if s.is_empty() => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return Err(Malformed("cwd is not a string".into())),
        };
        let this = Self { fields, session_id, cwd };
        if needs_tool_name && this.str("tool_name").is_none_or(str::is_empty) {
            return Err(Malformed("tool_name is missing or not a non-empty string".into()));
        }
        Ok(this)
    }

    /// A present, non-null value.
    pub fn value(&self, key: &str) -> Option<&Value> {
        self.fields.get(key).filter(|v| !v.is_null())
    }

    /// A string field; other types count as absent.
    pub fn str(&self, key: &str) -> Option<&str> {
        self.fields.get(key).and_then(Value::as_str)
    }

    pub fn bool(&self, key: &str) -> Option<bool> {
        self.fields.get(key).and_then(Value::as_bool)
    }

    /// A non-negative integer (floats with no fraction accepted).
    pub fn non_negative(&self, key: &str) -> Option<i64> {
        let v = self.fields.get(key)?;
        v.as_i64()
            .or_else(|| v.as_f64().filter(|f| f.fract() == 0.0 && *f < 9.0e15).map(|f| f as i64))
            .filter(|n| *n >= 0)
    }

    /// `agent_id` / `agent_type`: kept only as strings of 1..=128 characters.
    pub fn agent(&self, key: &str) -> Option<&str> {
        self.str(key).filter(|s| (1..=128).contains(&s.chars().count()))
    }
}

trait Classify {
    fn classify_name(&self) -> &'static str;
}

impl Classify for serde_json::Error {
    fn classify_name(&self) -> &'static str {
        match self.classify() {
            serde_json::error::Category::Eof => "unexpected end of input",
            serde_json::error::Category::Syntax => "syntax error",
            serde_json::error::Category::Data => "invalid data",
            serde_json::error::Category::Io => "read error",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_inputs() {
        for bad in [
            "",
            "  ",
            "[]",
            "\"x\"",
            "{",
            r#"{"cwd":"/x"}"#,
            r#"{"session_id":""}"#,
            r#"{"session_id":"s","cwd":5}"#,
        ] {
            assert!(HookInput::parse(bad.as_bytes(), false).is_err(), "{bad}");
        }
        assert!(HookInput::parse(br#"{"session_id":"s"}"#, true).is_err());
    }

    #[test]
    fn tolerant_fields() {
        let long = "a".repeat(129);
        let text =
            format!(r#"{{"sessionId":"s","cwd":"","zzz":1,"prompt":null,"agent_id":"{long}","agent_type":"Explore","duration_ms":"x"}}"#);
        let h = HookInput::parse(text.as_bytes(), false).unwrap();
        assert_eq!(h.session_id, "s");
        assert_eq!(h.cwd, None);
        assert_eq!(h.value("prompt"), None);
        assert_eq!(h.agent("agent_id"), None);
        assert_eq!(h.agent("agent_type"), Some("Explore"));
        assert_eq!(h.non_negative("duration_ms"), None);
    }
}
