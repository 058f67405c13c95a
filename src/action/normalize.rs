//! A shell command as the action memory compares it (issue 53): the commands that do the work —
//! every segment of an `&&`/`||`/`;` chain that is not set-up (`cd`, `export`, `source`, `set`,
//! bare `NAME=value`), each before its pipe and its first redirection, without leading environment
//! assignments; separators inside quotes are text, not separators — their programs by base name,
//! paths inside the project relative to it, and what changes from run to run without changing
//! what runs — temporary paths, timestamps, ports, long ids — folded to a placeholder. Two runs of
//! "the same command" compare equal; another test name, another subcommand, another file or
//! another chain does not. Pure text: the index and the hook use it.
//!
//! [`status_hidden`]: a line piped into another program (`cargo test 2>&1 | tail`) or followed by
//! `||` exits with the last program's status, not the check's: its outcome is read from its output.

use std::sync::LazyLock;

use regex::Regex;

/// A normalised command longer than this is cut (it is a key, not a record).
const KEY_MAX_CHARS: usize = 300;

static TIMESTAMP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\d{4}-\d{2}-\d{2}([T_ ]\d{2}[:\-]?\d{2}([:\-]?\d{2}(\.\d+)?)?(Z|[+\-]\d{2}:?\d{2})?)?|\b1\d{9,12}\b")
        .expect("a valid pattern")
});
static PORT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?P<host>(localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1\])):\d{2,5}\b").expect("a valid pattern"));
static LONG_ID: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b|\b[0-9a-f]{16,}\b").expect("a valid pattern")
});

/// Whether `p` is a temporary path (its content differs each run).
fn is_temp(p: &str) -> bool {
    [
        "/tmp/",
        "/var/tmp/",
        "/private/tmp/",
        "/var/folders/",
        "/private/var/folders/",
        "/dev/shm/",
    ]
    .iter()
    .any(|t| p.starts_with(t))
        || p == "/tmp"
}

/// One word of the command, normalised: quotes dropped, the program by its base name, a path
/// inside `root` relative to it (`./` dropped), a temporary path `<tmp>`.
fn word(w: &str, first: bool, root: Option<&str>) -> String {
    let w = w.trim_matches(|c| c == '"' || c == '\'');
    let (flag, value) = match w.split_once('=') {
        Some((f, v)) if f.starts_with('-') => (Some(f), v),
        _ => (None, w),
    };
    let mut v = value.to_string();
    if let Some(root) = root.map(|r| r.trim_end_matches('/')).filter(|r| !r.is_empty())
        && let Some(rest) = v.strip_prefix(root)
        && (rest.is_empty() || rest.starts_with('/'))
    {
        v = rest.trim_start_matches('/').to_string();
        if v.is_empty() {
            v = ".".into();
        }
    }
    if is_temp(&v) {
        v = "<tmp>".into();
    }
    if let Some(rest) = v.strip_prefix("./").filter(|r| !r.is_empty()) {
        v = rest.to_string();
    }
    if first {
        v = v.rsplit('/').next().unwrap_or(&v).to_string();
    }
    match flag {
        Some(f) => format!("{f}={v}"),
        None => v,
    }
}

/// How a segment of a shell line ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sep {
    /// `&&`, `;`, a newline or the end of the line.
    Then,
    /// `||`.
    Or,
    /// `|`: the next segment is the pipe's reader.
    Pipe,
}

/// The segments of a shell line, each with how it ends; `&&`, `||`, `;`, `|` and newlines inside
/// single or double quotes (or escaped) are text.
fn segments(line: &str) -> Vec<(String, Sep)> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), _) if c == q => {
                quote = None;
                cur.push(c);
            }
            (Some(_) | None, '\\') => {
                cur.push(c);
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            (Some(_), _) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                cur.push(c);
            }
            (None, '&') if chars.peek() == Some(&'&') => {
                chars.next();
                out.push((std::mem::take(&mut cur), Sep::Then));
            }
            (None, '|') if chars.peek() == Some(&'|') => {
                chars.next();
                out.push((std::mem::take(&mut cur), Sep::Or));
            }
            (None, '|') => out.push((std::mem::take(&mut cur), Sep::Pipe)),
            (None, ';' | '\n') => out.push((std::mem::take(&mut cur), Sep::Then)),
            _ => cur.push(c),
        }
    }
    out.push((cur, Sep::Then));
    out
}

/// A segment that only sets up the shell.
fn is_setup(words: &[&str]) -> bool {
    match words.first() {
        None => true,
        Some(w) => ["cd", "export", "source", "set", ".", "pushd", "popd"].contains(w) || words.iter().all(|w| is_assignment(w)),
    }
}

fn is_assignment(w: &str) -> bool {
    w.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !name.starts_with(|c: char| c.is_ascii_digit())
    })
}

fn is_redirection(w: &str) -> bool {
    w.starts_with('>') || w.starts_with('<') || w.starts_with("2>") || w.starts_with("1>") || w.starts_with("&>") || w == "&"
}

/// The words of the commands that do the work: each non-set-up segment (a pipe's readers and
/// what `||` runs dropped), before its first redirection, without leading assignments.
fn working_commands(line: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut reader = false;
    for (seg, sep) in segments(line) {
        let is_reader = reader;
        // A pipe's reader and what `||` runs when the check fails do no work of their own.
        reader = matches!(sep, Sep::Pipe | Sep::Or);
        if is_reader {
            continue;
        }
        let words: Vec<&str> = shell_words(&seg);
        if is_setup(&words) {
            continue;
        }
        let cmd: Vec<String> = words
            .iter()
            .skip_while(|w| is_assignment(w))
            .take_while(|w| !is_redirection(w))
            .map(|w| w.to_string())
            .collect();
        if !cmd.is_empty() {
            out.push(cmd);
        }
    }
    out
}

/// Whitespace-separated words, a quoted run kept whole (quotes stay; [`word`] drops them).
fn shell_words(seg: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let mut quote: Option<char> = None;
    for (i, c) in seg.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                start.get_or_insert(i);
            }
            None if c.is_whitespace() => {
                if let Some(s) = start.take() {
                    out.push(&seg[s..i]);
                }
            }
            None => {
                start.get_or_insert(i);
            }
        }
    }
    if let Some(s) = start {
        out.push(&seg[s..]);
    }
    out
}

/// Whether the line's exit status is not its check's: it pipes the check into another program or
/// runs another one when it fails (`||`).
pub fn status_hidden(line: &str) -> bool {
    segments(line).iter().any(|(_, sep)| matches!(sep, Sep::Pipe | Sep::Or))
}

/// The command's key, or None when the line holds no command. `root` is the project's root (paths
/// under it become relative, so a run from another clone of the project matches).
pub fn normalize(line: &str, root: Option<&str>) -> Option<String> {
    let commands = working_commands(line);
    let parts: Vec<String> = commands
        .iter()
        .map(|cmd| {
            cmd.iter()
                .enumerate()
                .map(|(i, w)| word(w, i == 0, root))
                .filter(|w| !w.is_empty())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|c| !c.is_empty())
        .collect();
    let mut key = parts.join(" && ");
    key = TIMESTAMP.replace_all(&key, "<time>").into_owned();
    key = PORT.replace_all(&key, "$host:<port>").into_owned();
    key = LONG_ID.replace_all(&key, "<id>").into_owned();
    for flag in ["--port", "-p"] {
        key = fold_flag_number(&key, flag);
    }
    let key: String = key.chars().take(KEY_MAX_CHARS).collect();
    (!key.is_empty()).then_some(key)
}

/// `--port 8080` / `--port=8080` → `--port <port>` (a port given by flag changes each run).
fn fold_flag_number(key: &str, flag: &str) -> String {
    let words: Vec<&str> = key.split(' ').collect();
    let mut out: Vec<String> = Vec::with_capacity(words.len());
    let mut after_flag = false;
    for w in words {
        let numeric = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if after_flag && numeric(w) {
            out.push("<port>".into());
        } else if let Some(v) = w.strip_prefix(flag).and_then(|r| r.strip_prefix('='))
            && numeric(v)
        {
            out.push(format!("{flag}=<port>"));
        } else {
            out.push(w.to_string());
        }
        after_flag = w == flag;
    }
    out.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(line: &str) -> String {
        normalize(line, Some("/home/ada/shop")).unwrap_or_default()
    }

    #[test]
    fn the_same_command_matches_across_temp_paths_times_ports_and_setup() {
        assert_eq!(
            n("cd /home/ada/shop && RUST_LOG=debug cargo test --test it -- login 2>&1 | tail -20"),
            "cargo test --test it -- login"
        );
        assert_eq!(
            n("pytest /tmp/pytest-of-ada/pytest-12/test_x.py"),
            n("pytest /tmp/pytest-of-ada/pytest-40/test_x.py")
        );
        assert_eq!(n("curl http://localhost:41234/api"), n("curl http://localhost:5173/api"));
        assert_eq!(
            n("./serve --port 8080 --log=2026-12-05T10:00:00Z"),
            n("serve --port 9090 --log=2026-12-06T11:30:12Z")
        );
        assert_eq!(n("/usr/bin/python3 /home/ada/shop/manage.py test"), "python3 manage.py test");
        assert_eq!(n("\"npm\" 'test'"), "npm test");
        assert_eq!(n("export CI=1; npm run build > out.log"), "npm run build");
        assert_eq!(n("git show 3f9a1c2e4b5d6a7f8e9d0c1b"), "git show <id>");
        assert_eq!(n("cd /home/ada/shop\ncargo test -p cart"), "cargo test -p cart");
    }

    #[test]
    fn a_chain_is_keyed_whole_and_quotes_are_text() {
        assert_eq!(n("cargo build && cargo test parser"), "cargo build && cargo test parser");
        assert_ne!(n("cargo build && cargo test parser"), n("cargo build"));
        assert_ne!(
            n(r#"python3 -c "import os; print(os.getcwd())""#),
            n(r#"python3 -c "import os; os.remove('db.sqlite')""#)
        );
        assert_ne!(n(r#"cargo test -- "a|b""#), n("cargo test -- a"));
        assert_eq!(n("npm test || true"), "npm test");
        assert!(status_hidden("cargo test 2>&1 | tail -20"));
        assert!(status_hidden("npm test || echo failed"));
        assert!(!status_hidden(r#"cargo test -- "a|b" && cargo build"#));
    }

    #[test]
    fn another_test_name_subcommand_or_file_does_not_match() {
        assert_ne!(n("cargo test login"), n("cargo test logout"));
        assert_ne!(n("cargo test"), n("cargo build"));
        assert_ne!(n("pytest tests/test_a.py"), n("pytest tests/test_b.py"));
        assert_ne!(n("npm run lint"), n("npm run build"));
    }

    #[test]
    fn a_line_with_no_command_has_no_key() {
        assert_eq!(normalize("", None), None);
        assert_eq!(normalize("cd /x && export A=1", None), None);
        assert_eq!(normalize("   \n  ", None), None);
    }
}
