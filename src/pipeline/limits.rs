//! Size limits: the prompt byte cut and char cap (`docs/spec/pipeline.md` §4), field elision (§9),
//! oversized `tool_uses` columns (§6.1) and stored-field bounds (§14.2).

use std::borrow::Cow;

use serde_json::Value;

/// §4 rule 3: prompts are cut to this many UTF-8 bytes.
pub const PROMPT_MAX_BYTES: usize = 262_144;
/// §4 rule 5: prompts are capped at this many chars.
pub const PROMPT_MAX_CHARS: usize = 4_000;
/// §9: default `MEMD_OBSERVER_FIELD_MAX_CHARS` and its floor.
pub const FIELD_MAX_CHARS: usize = 16_000;
pub const FIELD_MIN_CHARS: usize = 2_000;
/// §6.1: default `MEMD_TOOL_USE_MAX_CHARS`.
pub const TOOL_USE_MAX_CHARS: usize = 262_144;

const ELLIPSIS: char = '\u{2026}';

/// Longest prefix of `s` of at most `max_bytes` bytes that ends on a char boundary.
pub fn cut_bytes(s: &str, max_bytes: usize) -> &str {
    if s.len() <= max_bytes {
        return s;
    }
    let mut end = max_bytes;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Byte offset of char number `n` (the length when `s` is shorter).
fn char_offset(s: &str, n: usize) -> usize {
    s.char_indices().nth(n).map_or(s.len(), |(offset, _)| offset)
}

/// At most `max_chars` chars; a cut string keeps `max_chars - 1` chars and ends with `…`.
/// Used for the prompt cap (§4, `bound(s, PROMPT_MAX_CHARS)`) and the §14.2 bounds.
pub fn bound(s: &str, max_chars: usize) -> Cow<'_, str> {
    let cut_at = char_offset(s, max_chars);
    if cut_at == s.len() {
        return Cow::Borrowed(s);
    }
    let Some(keep) = max_chars.checked_sub(1) else {
        return Cow::Borrowed("");
    };
    let mut bounded = s[..char_offset(s, keep)].to_owned();
    bounded.push(ELLIPSIS);
    Cow::Owned(bounded)
}

/// `floor(limit * tenths / 10)` without overflow.
fn tenths(limit: usize, tenths: usize) -> usize {
    limit / 10 * tenths + limit % 10 * tenths / 10
}

/// §9: values over `limit` chars keep the first 60 % and the last 30 % of `limit` around a marker.
pub fn truncate_field(s: &str, limit: usize) -> Cow<'_, str> {
    if char_offset(s, limit) == s.len() {
        return Cow::Borrowed(s);
    }
    let total = s.chars().count();
    let head = tenths(limit, 6);
    let tail = tenths(limit, 3);
    let elided = total - head - tail;
    let head_end = char_offset(s, head);
    let tail_start = char_offset(s, total - tail);
    Cow::Owned(format!(
        "{}\n... <elided chars=\"{elided}\" original_size_chars=\"{total}\" reason=\"oversize\" /> ...\n{}",
        &s[..head_end],
        &s[tail_start..],
    ))
}

/// §6.1: a serialised column longer than `max_chars` becomes a JSON string holding its §9
/// elision; `None` when it fits and is stored as is.
pub fn elide_json_column(serialized: &str, max_chars: usize) -> Option<String> {
    match truncate_field(serialized, max_chars) {
        Cow::Borrowed(_) => None,
        Cow::Owned(elided) => Some(Value::String(elided).to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cut_bytes_backs_up_to_char_boundary() {
        assert_eq!(cut_bytes("abc", 5), "abc");
        assert_eq!(cut_bytes("aé", 2), "a");
        assert_eq!(cut_bytes("aé", 3), "aé");
        assert_eq!(cut_bytes("€", 0), "");
        let long = "密".repeat(100_000);
        let cut = cut_bytes(&long, PROMPT_MAX_BYTES);
        assert_eq!(cut.len(), PROMPT_MAX_BYTES - PROMPT_MAX_BYTES % 3);
    }

    #[test]
    fn bound_and_prompt_cap() {
        let exact = "x".repeat(PROMPT_MAX_CHARS);
        assert!(matches!(bound(&exact, PROMPT_MAX_CHARS), Cow::Borrowed(_)));
        let capped = bound(&"é".repeat(PROMPT_MAX_CHARS + 1), PROMPT_MAX_CHARS).into_owned();
        assert_eq!(capped.chars().count(), PROMPT_MAX_CHARS);
        assert!(capped.ends_with("é…"));
        assert_eq!(bound("abcdef", 3), "ab…");
        assert_eq!(bound("abc", 0), "");
        assert_eq!(bound("", 0), "");
    }

    #[test]
    fn x1_x2_field_truncation() {
        let x1 = "a".repeat(FIELD_MAX_CHARS);
        assert_eq!(truncate_field(&x1, FIELD_MAX_CHARS), x1.as_str());
        let x2 = truncate_field(&"a".repeat(16_001), FIELD_MAX_CHARS).into_owned();
        let expected = format!(
            "{}\n... <elided chars=\"1601\" original_size_chars=\"16001\" reason=\"oversize\" /> ...\n{}",
            "a".repeat(9_600),
            "a".repeat(4_800)
        );
        assert_eq!(x2, expected);
        assert_eq!(x2.chars().count(), 14_479);
    }

    #[test]
    fn x3_pretty_tool_response() {
        let response = json!({"content": format!("HEAD{}TAIL", "A".repeat(60_000))});
        let pretty = serde_json::to_string_pretty(&response).unwrap_or_default();
        assert_eq!(pretty.chars().count(), 60_027);
        let x3 = truncate_field(&pretty, FIELD_MAX_CHARS);
        assert!(x3.contains("HEAD") && x3.contains("TAIL"));
        assert!(x3.contains("original_size_chars=\"60027\"") && x3.contains("chars=\"45627\""));
        assert_eq!(x3.chars().count(), 14_480);
    }

    #[test]
    fn x4_overflow_retry_limit() {
        let field: String = ('a'..='j').cycle().take(10_000).collect();
        let x4 = truncate_field(&field, 8_000);
        let expected = format!(
            "{}\n... <elided chars=\"2800\" original_size_chars=\"10000\" reason=\"oversize\" /> ...\n{}",
            &field[..4_800],
            &field[10_000 - 2_400..]
        );
        assert_eq!(x4, expected);
        assert_eq!(
            truncate_field("abcdefghijk", 10),
            "abcdef\n... <elided chars=\"2\" original_size_chars=\"11\" reason=\"oversize\" /> ...\nijk"
        );
    }

    #[test]
    fn json_column_elision() {
        let small = r#"{"a":1}"#;
        assert_eq!(elide_json_column(small, TOOL_USE_MAX_CHARS), None);
        let big = json!({"content": "\"q\"".repeat(100_000)}).to_string();
        let stored = elide_json_column(&big, TOOL_USE_MAX_CHARS).unwrap_or_default();
        let Ok(Value::String(inner)) = serde_json::from_str::<Value>(&stored) else {
            panic!("not a JSON string: {stored}")
        };
        assert!(inner.starts_with(r#"{"content":"#));
        assert!(inner.contains(&format!("original_size_chars=\"{}\"", big.chars().count())));
        assert_eq!(inner, truncate_field(&big, TOOL_USE_MAX_CHARS));
    }
}
