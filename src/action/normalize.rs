//! A shell command as the action memory compares it (issue 53): the command that does the work
//! (the graph's [`working_part`]: after `cd …&&`, `export …;` and environment assignments; before
//! a pipe or a redirection), its
//! program by base name, paths inside the project relative to it, and what changes from run to run
//! without changing what runs — temporary paths, timestamps, ports, long ids — folded to a
//! placeholder. Two runs of "the same command" compare equal; another test name, another
//! subcommand or another file does not. Pure text: the index and the hook use it.

use std::sync::LazyLock;

use regex::Regex;

use crate::graph::names::working_part;

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

/// The command's key, or None when the line holds no command. `root` is the project's root (paths
/// under it become relative, so a run from another clone of the project matches).
pub fn normalize(line: &str, root: Option<&str>) -> Option<String> {
    let main = working_part(line)?;
    let words: Vec<String> = main
        .split_whitespace()
        .enumerate()
        .map(|(i, w)| word(w, i == 0, root))
        .filter(|w| !w.is_empty())
        .collect();
    let mut key = words.join(" ");
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
