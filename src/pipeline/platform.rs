//! `platformSource` normalisation (`docs/spec/api.md` §2.5).

const DEFAULT_SOURCE: &str = "claude";
const MAX_CHARS: usize = 64;

/// Normalises a raw platform source; absent or empty gives `claude`.
pub fn normalize_platform_source(raw: Option<&str>) -> String {
    let lowered = raw.unwrap_or_default().trim().to_lowercase();
    let dashed = lowered.split_whitespace().collect::<Vec<_>>().join("-");
    let known = match dashed.as_str() {
        "" => Some(DEFAULT_SOURCE),
        "transcript" => Some("codex"),
        s if s.contains("codex") => Some("codex"),
        s if s.contains("cursor") => Some("cursor"),
        s if s.contains("claude") => Some("claude"),
        _ => None,
    };
    if let Some(known) = known {
        return known.to_owned();
    }
    let cleaned: String = dashed
        .chars()
        .filter(|&c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-'))
        .take(MAX_CHARS)
        .collect();
    if cleaned.is_empty() { DEFAULT_SOURCE.to_owned() } else { cleaned }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_examples() {
        let cases = [
            (None, "claude"),
            (Some(""), "claude"),
            (Some("   "), "claude"),
            (Some("claude-code"), "claude"),
            (Some("Claude Desktop"), "claude"),
            (Some(" OpenCode "), "opencode"),
            (Some("Gemini CLI"), "gemini-cli"),
            (Some("transcript"), "codex"),
            (Some("OpenAI Codex"), "codex"),
            (Some("Cursor IDE"), "cursor"),
            (Some("my\t\ttool  v1.2"), "my-tool-v1.2"),
            (Some("ünï/cødé!"), "ncd"),
            (Some("!!!"), "claude"),
        ];
        for (raw, expected) in cases {
            assert_eq!(normalize_platform_source(raw), expected, "{raw:?}");
        }
        assert_eq!(normalize_platform_source(Some(&"x".repeat(100))).len(), 64);
    }
}
