//! `memd --help` for a person (issue 37): the commands grouped — everyday, setup, maintenance,
//! developer tools — each with its one-line description from its doc comment, then examples; and
//! the command line every process parses ([`parse`]), which `memd completions <shell>` describes.

use clap::{CommandFactory, FromArgMatches};

use super::Cli;

/// Every subcommand in exactly one group (a unit test keeps the table and the commands together).
pub const GROUPS: [(&str, &[&str]); 4] = [
    (
        "Everyday",
        &[
            "search", "show", "timeline", "related", "corpus", "team", "remember", "forget", "work", "status", "stats", "open", "stop",
            "restart",
        ],
    ),
    (
        "Setup",
        &[
            "install",
            "doctor",
            "import-sessions",
            "service",
            "models",
            "settings",
            "serve",
            "completions",
        ],
    ),
    (
        "Maintenance",
        &[
            "backup",
            "repair",
            "gc",
            "consolidate",
            "reindex",
            "redact",
            "retry",
            "quarantine",
            "export",
            "import-md",
            "import-claude-mem",
            "folders",
            "promote",
            "watch",
        ],
    ),
    ("Developer tools", &["eval", "replay", "mcp", "hook"]),
];

const EXAMPLES: &str = "Examples:
  memd install                      hooks and MCP tools into Claude Code (then restart it)
  memd doctor                       is everything in place? one line per check, a fix for each problem
  memd search \"why did the build fail\"
  memd show 12                      the whole record #12 (S3: a summary, P7: a prompt)
  memd remember \"we pin tokio to 1.x\"
  memd work                         what the next session starts from
  memd open                         the web viewer
  memd status                       memories, waiting work, today's tokens, problems
  memd stats                        captures, tokens and latency of the last 30 days, as sparklines";

/// The grouped list of commands.
fn grouped(cmd: &clap::Command) -> String {
    let mut out = String::new();
    for (group, names) in GROUPS {
        out.push_str(&format!("{group}:\n"));
        for name in names {
            let about = cmd
                .find_subcommand(name)
                .and_then(|s| s.get_about().map(|a| a.to_string()))
                .unwrap_or_default();
            out.push_str(&format!("  {name:<18} {about}\n"));
        }
        out.push('\n');
    }
    out
}

/// The command line with the grouped help.
pub fn command() -> clap::Command {
    let cmd = Cli::command();
    let template = format!(
        "{{about-with-newline}}\n{{usage-heading}} {{usage}}\n\n{}Options:\n{{options}}\n\n{{after-help}}",
        grouped(&cmd)
    );
    cmd.help_template(template).after_help(EXAMPLES)
}

/// Parses the process's arguments (exits with clap's message on an error, as `Cli::parse` does).
pub fn parse() -> Cli {
    let matches = command().get_matches();
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}

/// `memd completions <shell>`. Written whole, and a reader that stops early
/// (`memd completions bash | head -1`) ends the output, not the process with a panic.
pub fn completions(shell: clap_complete::Shell) {
    use std::io::Write;
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command(), "memd", &mut script);
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(&script).and_then(|()| out.flush());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Arguments without a description, in `cmd` and every command under it.
    fn undescribed(cmd: &clap::Command, path: &str, out: &mut Vec<String>) {
        for arg in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
            let id = arg.get_id().as_str();
            if !matches!(id, "help" | "version") && arg.get_help().is_none() {
                out.push(format!("{path} {id}"));
            }
        }
        for sub in cmd.get_subcommands() {
            undescribed(sub, &format!("{path} {}", sub.get_name()), out);
        }
    }

    #[test]
    fn every_command_is_in_one_group_and_every_flag_says_what_it_does() {
        let cmd = Cli::command();
        let listed: Vec<&str> = GROUPS.iter().flat_map(|(_, names)| names.iter().copied()).collect();
        let mut undescribed_args = Vec::new();
        for sub in cmd.get_subcommands() {
            let n = listed.iter().filter(|l| **l == sub.get_name()).count();
            assert_eq!(n, 1, "{} is in {n} groups", sub.get_name());
            assert!(sub.get_about().is_some(), "{} has no description", sub.get_name());
        }
        undescribed(&cmd, "memd", &mut undescribed_args);
        assert!(undescribed_args.is_empty(), "without a description: {undescribed_args:?}");
        for name in &listed {
            assert!(cmd.find_subcommand(name).is_some(), "{name} is grouped but is no command");
        }
        let help = command().render_help().to_string();
        assert!(
            help.contains("Everyday:\n  search") && help.contains("Examples:\n  memd install"),
            "{help}"
        );
    }
}
