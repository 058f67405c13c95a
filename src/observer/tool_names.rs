//! Other hosts' tool names read as Claude Code's. The extractive observer and the file evidence
//! classify a call by the Claude Code tool it stands for, so a Gemini CLI `replace` is an edit
//! and a Codex `exec_command` a shell everywhere they look; what is shown keeps the host's own
//! name ("replace src/main.rs: …"). Names from the installed gemini-cli 0.61.0 bundle and the
//! Codex rollout format (docs/spec/hosts.md). A tool no host aliases reads as itself.

/// The Claude Code tool `name` stands for: Gemini CLI's and Codex's names mapped, any other
/// name unchanged. Tools without a Claude Code twin stay themselves: Codex's `apply_patch`
/// (its paths are in the patch text) and Gemini CLI's `read_many_files` (globs, no file path).
pub(crate) fn as_claude_tool(name: &str) -> &str {
    match name {
        "run_shell_command" | "shell" | "exec_command" => "Bash",
        "read_file" => "Read",
        "write_file" => "Write",
        "replace" => "Edit",
        "glob" => "Glob",
        "grep_search" => "Grep",
        "list_directory" => "LS",
        "web_fetch" => "WebFetch",
        "google_web_search" => "WebSearch",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::as_claude_tool;

    #[test]
    fn host_names_map_and_the_rest_stay_themselves() {
        assert_eq!(as_claude_tool("run_shell_command"), "Bash");
        assert_eq!(as_claude_tool("exec_command"), "Bash");
        assert_eq!(as_claude_tool("replace"), "Edit");
        assert_eq!(as_claude_tool("read_file"), "Read");
        assert_eq!(as_claude_tool("google_web_search"), "WebSearch");
        for own in ["Bash", "Edit", "apply_patch", "read_many_files", "mcp__x__y", ""] {
            assert_eq!(as_claude_tool(own), own);
        }
    }
}
