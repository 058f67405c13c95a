//! Canonical names of the graph's entities: a command as a person would name it (the main command
//! of a shell line, without `cd …&&`, pipes or redirections), an error signature (the line that
//! says what failed, numbers folded), a file relative to the project root, and the symbols an edit
//! wrote.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

const COMMAND_MAX_CHARS: usize = 120;
const SIGNATURE_MAX_CHARS: usize = 120;
const SIGNATURE_MIN_CHARS: usize = 10;
const SYMBOLS_PER_EDIT: usize = 20;

/// The main command of a shell line: `cd x && FOO=1 cargo test a 2>&1 | tail` → `cargo test a`.
pub fn command_name(line: &str) -> Option<String> {
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
    let name = words.join(" ");
    (!name.is_empty()).then(|| name.chars().take(COMMAND_MAX_CHARS).collect())
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

static SIGNATURES: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        r"error\[E\d{4}\]: .*",
        r"test [\w:]+ \.\.\. FAILED",
        r"panicked at [^\s:]+",
        r"(?:[A-Z]\w*(?:Error|Exception)): .*",
        r"(?i)^\s*(?:error|fatal)\b.*",
        r"FAILED.*",
    ]
    .iter()
    .map(|p| Regex::new(p).expect("a valid signature pattern"))
    .collect()
});

static NUMBERS: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\d+").expect("a valid pattern"));

/// The texts of a stored tool response: its JSON strings (`stdout`, `stderr`, `error`, …), or the
/// text itself when it is not JSON.
fn response_texts(response: &str) -> Vec<String> {
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::String(s) => out.push(s.clone()),
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            Value::Object(m) => m.values().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    match serde_json::from_str::<Value>(response) {
        Ok(v) => walk(&v, &mut out),
        Err(_) => out.push(response.to_string()),
    }
    out
}

/// The line of a failed call's output that says what failed, by the first pattern that matches
/// any line (compiler errors first, then failing tests, panics, exceptions, error lines); numbers
/// are folded to `N` so the same failure at another line number is the same signature.
pub fn error_signature(response: &str) -> Option<String> {
    let texts = response_texts(response);
    let lines: Vec<&str> = texts.iter().flat_map(|t| t.lines()).collect();
    for re in SIGNATURES.iter() {
        // A bare "Error" says nothing: a signature names what failed.
        let found = lines
            .iter()
            .filter_map(|l| re.find(l))
            .find(|m| m.as_str().trim().len() >= SIGNATURE_MIN_CHARS);
        if let Some(m) = found {
            let folded = NUMBERS.replace_all(m.as_str().trim(), "N");
            return Some(folded.chars().take(SIGNATURE_MAX_CHARS).collect());
        }
    }
    None
}

/// `path` relative to `root` when it is inside it; otherwise as given (without a leading `./`).
pub fn relative_path(path: &str, root: Option<&str>) -> String {
    let path = path.strip_prefix("./").unwrap_or(path);
    match root.map(|r| r.trim_end_matches('/')).filter(|r| !r.is_empty()) {
        Some(r) => path
            .strip_prefix(r)
            .and_then(|rest| rest.strip_prefix('/'))
            .filter(|rest| !rest.is_empty())
            .unwrap_or(path)
            .to_string(),
        None => path.to_string(),
    }
}

static DEFINITIONS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?m)^\s*(?:pub(?:\([^)]*\))?\s+)?(?:export\s+)?(?:default\s+)?(?:async\s+)?(?:unsafe\s+)?(?:fn|def|function|class|struct|enum|trait|interface)\s+([A-Za-z_][A-Za-z0-9_]*)|(?m)^func\s+(?:\([^)]*\)\s*)?([A-Za-z_][A-Za-z0-9_]*)",
    )
    .expect("a valid definition pattern")
});

/// The symbols a text defines, each with whether it is a test (`#[test]`/`#[tokio::test]` above
/// it, a `test_…` or Go `Test…` name).
pub fn symbols_in(text: &str) -> Vec<(String, bool)> {
    let mut out: Vec<(String, bool)> = Vec::new();
    let mut attr_test = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("#[") {
            attr_test |= t.contains("test");
            continue;
        }
        if let Some(c) = DEFINITIONS.captures(line) {
            let name = c.get(1).or_else(|| c.get(2)).map_or("", |m| m.as_str());
            let test = attr_test || name.starts_with("test_") || (name.starts_with("Test") && t.starts_with("func"));
            if name.len() >= 2 && !out.iter().any(|(n, _)| n == name) {
                out.push((name.to_string(), test));
            }
            if out.len() >= SYMBOLS_PER_EDIT {
                break;
            }
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
            symbols_in(rust),
            vec![
                ("parse_args".into(), false),
                ("parses_empty".into(), true),
                ("run".into(), false),
                ("Config".into(), false)
            ]
        );
        let py = "class Cart:\n    def total(self):\n        pass\ndef test_total():\n    pass";
        assert_eq!(
            symbols_in(py),
            vec![("Cart".into(), false), ("total".into(), false), ("test_total".into(), true)]
        );
        let go = "func (s *Server) Start() error {\nfunc TestStart(t *testing.T) {";
        assert_eq!(symbols_in(go), vec![("Start".into(), false), ("TestStart".into(), true)]);
    }
}
