//! Canonical names of the graph's entities: a command as a person would name it (the main command
//! of a shell line, without `cd …&&`, pipes or redirections), an error signature (the line that
//! says what failed, numbers folded), a file relative to the project root, and the symbols an edit
//! wrote.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use crate::observer::evidence::path::normalize;
use crate::observer::extractive::changes::definitions;
use crate::observer::extractive::describe::output_text;
use crate::observer::extractive::salient::failure_line;
use crate::text::CODE_EXTENSIONS;

const COMMAND_MAX_CHARS: usize = 120;
const SIGNATURE_MAX_CHARS: usize = 120;
const SIGNATURE_MIN_CHARS: usize = 10;
const SYMBOLS_PER_EDIT: usize = 20;

/// The main command of a shell line: `cd x && FOO=1 cargo test a 2>&1 | tail` → `cargo test a`.
pub fn command_name(line: &str) -> Option<String> {
    working_part(line).map(|name| name.chars().take(COMMAND_MAX_CHARS).collect())
}

/// [`command_name`] uncut: the first segment of `&&`/`;` that is not set-up (`cd`, `export`,
/// `source`, `set`), before a pipe, without leading `NAME=value` words or a redirection and what
/// follows it. The action memory keys on it (`action/normalize.rs`).
pub fn working_part(line: &str) -> Option<String> {
    let first = line.lines().find(|l| !l.trim().is_empty())?;
    let main = first
        .split("&&")
        .flat_map(|s| s.split(';'))
        .map(str::trim)
        .find(|s| !s.is_empty() && !["cd ", "export ", "source ", "set "].iter().any(|p| s.starts_with(p)))?;
    let main = main.split('|').next().unwrap_or(main);
    let words: Vec<&str> = main
        .split_whitespace()
        .skip_while(|w| w.contains('=') && !w.starts_with('-'))
        .take_while(|w| !w.starts_with('>') && !w.starts_with("2>") && !w.starts_with("1>") && *w != "&")
        .collect();
    (!words.is_empty()).then(|| words.join(" "))
}

/// Commands that look around, move files or talk to version control: their passing after a
/// failure says nothing about an edit (`ls` of a folder that now exists, `git add` after a hook).
const NOT_CHECKS: [&str; 30] = [
    "ls", "cat", "find", "grep", "rg", "git", "cd", "echo", "mkdir", "rm", "cp", "mv", "touch", "head", "tail", "wc", "pwd", "which",
    "sed", "awk", "chmod", "tree", "curl", "wget", "open", "kill", "pkill", "ps", "sleep", "gh",
];

/// Whether a command checks the code (a test, build, type check or linter) rather than looking
/// around: only such a command's failure and pass can show that an edit fixed something.
pub fn is_check(command: &str) -> bool {
    command
        .split_whitespace()
        .next()
        .is_some_and(|w| !NOT_CHECKS.contains(&w.rsplit('/').next().unwrap_or(w)))
}

static NUMBERS: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\d+").expect("a valid pattern"));

/// The text of a stored failed response: its `error`, else its output (stdout and stderr), else
/// the text itself when it is not JSON.
pub fn failure_text(response: &str) -> String {
    match serde_json::from_str::<Value>(response) {
        Ok(Value::Object(m)) if m.get("error").is_some_and(Value::is_string) => m["error"].as_str().unwrap_or("").to_string(),
        Ok(v) => output_text(&v),
        Err(_) => response.to_string(),
    }
}

/// The line of a failed call's output that says what failed — the extractive observer's rule
/// ([`failure_line`]: a failing test or compiler error first, then the last exception, then a line
/// that names an error) — with numbers folded to `N`, so the same failure at another line number
/// is the same signature. A line too short to name anything ("Error") is none.
pub fn error_signature(response: &str) -> Option<String> {
    let line = failure_line(&failure_text(response))?;
    let line = line.trim();
    (line.len() >= SIGNATURE_MIN_CHARS).then(|| NUMBERS.replace_all(line, "N").chars().take(SIGNATURE_MAX_CHARS).collect())
}

static EXIT_CODE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\bexit(?:ed with)?(?: code|status)?[: ]+(\d{1,3})\b").expect("a valid pattern"));

/// What a failed call's output says failed, as shown to a person: the line [`error_signature`]
/// folds (numbers kept), else the exit code the output names, else none.
pub fn failure_summary(response: &str) -> Option<String> {
    let text = failure_text(response);
    if let Some(line) = failure_line(&text)
        .map(|l| l.trim().to_string())
        .filter(|l| l.len() >= SIGNATURE_MIN_CHARS)
    {
        return Some(line);
    }
    EXIT_CODE.captures(&text).map(|c| format!("exit code {}", &c[1]))
}

/// `path` as the observer's file evidence names it (`normalize`: lexically folded, relative to
/// `root` when it lies under it, else absolute).
pub fn relative_path(path: &str, root: Option<&str>) -> String {
    let root = root.unwrap_or("");
    normalize(path, root, root).unwrap_or_else(|| path.to_string())
}

/// The symbols a text of a code file with extension `ext` defines — the extractive observer's
/// definitions ([`definitions`]) — each with whether it is a test (`#[test]`/`#[tokio::test]`
/// above it, a `test_…` or Go `Test…` name). Other files (config, styles) define no symbols here.
pub fn symbols_in(text: &str, ext: &str) -> Vec<(String, bool)> {
    if !CODE_EXTENSIONS.contains(&ext) {
        return Vec::new();
    }
    let mut out: Vec<(String, bool)> = Vec::new();
    let mut attr_test = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("#[") {
            attr_test |= t.contains("test");
            continue;
        }
        for name in definitions(line, ext) {
            let test = attr_test || name.starts_with("test_") || (name.starts_with("Test") && t.starts_with("func"));
            if name.len() >= 2 && !out.iter().any(|(n, _)| *n == name) {
                out.push((name, test));
            }
        }
        if out.len() >= SYMBOLS_PER_EDIT {
            out.truncate(SYMBOLS_PER_EDIT);
            break;
        }
        if !t.is_empty() {
            attr_test = false;
        }
    }
    out
}

static IMPORTS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?m)(?:\bfrom\s+['"]|\brequire\(\s*['"]|^\s*import\s+['"])([^'"./][^'"]*)['"]|^\s*from\s+([A-Za-z_]\w*)[\w.]*\s+import\b|^\s*import\s+([A-Za-z_]\w*)\s*$|^\s*(?:pub\s+)?use\s+([a-z_][a-z0-9_]*)::"#,
    )
    .expect("a valid import pattern")
});

/// Standard libraries and the language's own paths: importing them says nothing about a dependency.
const BUILT_IN: [&str; 39] = [
    "std",
    "core",
    "alloc",
    "crate",
    "self",
    "super",
    "os",
    "sys",
    "re",
    "json",
    "time",
    "typing",
    "pathlib",
    "collections",
    "subprocess",
    "itertools",
    "functools",
    "datetime",
    "math",
    "logging",
    "unittest",
    "dataclasses",
    "abc",
    "io",
    "random",
    "shutil",
    "tempfile",
    "asyncio",
    "fs",
    "path",
    "http",
    "child_process",
    "url",
    "util",
    "crypto",
    "events",
    "stream",
    "__future__",
    "argparse",
];

/// The packages a text imports (JS/TS `from '…'`/`require('…')`, Python `import x`/`from x import`,
/// Rust `use x::`), by package name: `@scope/pkg` and `pkg` of `pkg/sub`, a Python or Rust top
/// module. Relative paths, `node:` modules and standard libraries are left out.
pub fn imports_in(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in IMPORTS.captures_iter(text) {
        let raw = (1..=4).find_map(|i| c.get(i)).map_or("", |m| m.as_str());
        if raw.starts_with("node:") {
            continue;
        }
        let mut parts = raw.split('/');
        let name = match parts.next() {
            Some(scope) if scope.starts_with('@') => format!("{scope}/{}", parts.next().unwrap_or("")),
            Some(first) => first.to_string(),
            None => continue,
        };
        if name.len() >= 2 && !BUILT_IN.contains(&name.as_str()) && !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_named_without_their_shell_wrapping() {
        assert_eq!(
            command_name("cd /r && cargo test parser 2>&1 | tail -20").as_deref(),
            Some("cargo test parser")
        );
        assert_eq!(
            command_name("RUST_LOG=debug cargo run -- serve > out.log").as_deref(),
            Some("cargo run -- serve")
        );
        assert_eq!(command_name("export A=1; npm test\nnext line").as_deref(), Some("npm test"));
        assert_eq!(command_name("   "), None);
        assert_eq!(command_name("cd /r"), None);
    }

    #[test]
    fn error_signatures_name_what_failed_with_numbers_folded() {
        let rust = r#"{"stdout":"","stderr":"error[E0425]: cannot find value `x` in this scope\n --> src/a.rs:3:5"}"#;
        assert_eq!(
            error_signature(rust).as_deref(),
            Some("error[EN]: cannot find value `x` in this scope")
        );
        let test = r#"{"stdout":"running 2 tests\ntest parser::tests::empty ... FAILED\ntest result: FAILED. 1 passed; 1 failed"}"#;
        assert_eq!(error_signature(test).as_deref(), Some("test parser::tests::empty ... FAILED"));
        let py = "Traceback (most recent call last):\n  File \"a.py\", line 3\nModuleNotFoundError: No module named 'yaml'";
        assert_eq!(error_signature(py).as_deref(), Some("ModuleNotFoundError: No module named 'yaml'"));
        assert_eq!(error_signature(r#"{"stdout":"all good"}"#), None);
        assert_eq!(error_signature("Error\n"), None, "a bare word names nothing");
        assert!(is_check("cargo test cart") && is_check("npx tsc --noEmit") && is_check("uv run pytest"));
        assert!(!is_check("ls -la types/") && !is_check("git add -A") && !is_check("/usr/bin/find ."));
    }

    #[test]
    fn files_are_relative_to_the_project_root_when_inside_it() {
        assert_eq!(relative_path("/r/shop/src/a.rs", Some("/r/shop")), "src/a.rs");
        assert_eq!(relative_path("/r/shop/src/a.rs", Some("/r/shop/")), "src/a.rs");
        assert_eq!(relative_path("/etc/hosts", Some("/r/shop")), "/etc/hosts");
        assert_eq!(relative_path("./src/a.rs", None), "src/a.rs");
        assert_eq!(relative_path("/r/shopping/x.rs", Some("/r/shop")), "/r/shopping/x.rs");
    }

    #[test]
    fn imports_name_packages_not_paths_or_standard_libraries() {
        let js = "import React from 'react';\nimport { z } from \"zod\";\nimport x from './local';\nconst fs = require('node:fs');\nimport '@tanstack/query-core/build';";
        assert_eq!(
            imports_in(js),
            vec!["react".to_string(), "zod".to_string(), "@tanstack/query-core".to_string()]
        );
        let py = "import os\nimport numpy\nfrom requests.adapters import HTTPAdapter\nfrom . import local";
        assert_eq!(imports_in(py), vec!["numpy".to_string(), "requests".to_string()]);
        let rs = "use std::io;\nuse serde_json::Value;\nuse crate::store;\npub use tokio::sync;";
        assert_eq!(imports_in(rs), vec!["serde_json".to_string(), "tokio".to_string()]);
    }

    #[test]
    fn symbols_of_several_languages_and_which_are_tests() {
        let rust = "pub fn parse_args() {}\n#[test]\nfn parses_empty() {}\npub(crate) async fn run() {}\nstruct Config;";
        assert_eq!(
            symbols_in(rust, "rs"),
            vec![
                ("parse_args".into(), false),
                ("parses_empty".into(), true),
                ("run".into(), false),
                ("Config".into(), false)
            ]
        );
        let py = "class Cart:\n    def total(self):\n        pass\ndef test_total():\n    pass";
        assert_eq!(
            symbols_in(py, "py"),
            vec![("Cart".into(), false), ("total".into(), false), ("test_total".into(), true)]
        );
        let go = "func (s *Server) Start() error {\nfunc TestStart(t *testing.T) {";
        assert_eq!(symbols_in(go, "go"), vec![("Start".into(), false), ("TestStart".into(), true)]);
    }
}
