//! What an edit changed, by name (issue 35): the identifiers it added, removed and renamed —
//! definitions first (functions, classes, types, tests; CSS selectors in style sheets; keys in
//! config files), then other identifiers — and the tests a run reports as failed. Lexical, pure,
//! bounded: no parser, no panics.

use std::collections::HashSet;
use std::sync::LazyLock;

use regex::Regex;

use super::symbols::added_identifiers;

/// Names kept per list.
pub const MAX_CHANGED: usize = 8;

/// A definition at any indentation (an edit's text is often inside a class or a module).
static CODE_DEFINITION: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?m)^\s*(?:\d+→)?\s*(?:",
        r"(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:unsafe\s+)?(?:fn|struct|enum|trait|mod|type|union)\s+([A-Za-z_]\w*)",
        r"|(?:async\s+)?def\s+([A-Za-z_]\w*)|class\s+([A-Za-z_]\w*)",
        r"|(?:export\s+(?:default\s+)?)?(?:async\s+)?(?:function\*?|interface|enum|type)\s+([A-Za-z_$][\w$]*)",
        r"|(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*[=:]",
        r"|func\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)",
        r"|(?:defmodule|defp?|defmacro)\s+([A-Za-z_][\w.?!]*)",
        r"|(?:it|test|describe)\(\s*['\x22`]([^'\x22`\n]{3,80})['\x22`]",
        r")"
    ))
    .ok()
});
/// A rule's selector in a style sheet: `.todo-item {`, `#main, .x {`.
static CSS_SELECTOR: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"(?m)^\s*([.#][A-Za-z_][\w-]*)[^{};\n]*\{").ok());
/// A key at a line's start in a config file: `key:`, `"key":`, `key =`, `[section]`.
static CONFIG_KEY: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r#"(?m)^\s*(?:"([A-Za-z_][\w.-]*)"\s*:|([A-Za-z_][\w.-]*)\s*[:=]|\[([A-Za-z_][\w.-]*)\])"#).ok());

const STYLE: &[&str] = &["css", "scss", "sass", "less"];
const CONFIG: &[&str] = &["json", "yaml", "yml", "toml", "ini", "cfg", "conf", "env", "properties"];

/// What one edit changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changed {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    /// (old, new): a definition that left where one of the same count came.
    pub renamed: Vec<(String, String)>,
}

impl Changed {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.renamed.is_empty()
    }

    /// `added a, b; removed c; renamed x → y` (empty parts left out).
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if !self.renamed.is_empty() {
            let r: Vec<String> = self.renamed.iter().map(|(a, b)| format!("{a} → {b}")).collect();
            parts.push(format!("renamed {}", r.join(", ")));
        }
        if !self.added.is_empty() {
            parts.push(format!("added {}", self.added.join(", ")));
        }
        if !self.removed.is_empty() {
            parts.push(format!("removed {}", self.removed.join(", ")));
        }
        parts.join("; ")
    }

    /// The names a reader searches by: renamed to, added, renamed from, removed.
    pub fn names(&self) -> Vec<String> {
        let mut out: Vec<String> = self.renamed.iter().map(|(_, b)| b.clone()).collect();
        out.extend(self.added.iter().cloned());
        out.extend(self.renamed.iter().map(|(a, _)| a.clone()));
        out.extend(self.removed.iter().cloned());
        let mut seen = HashSet::new();
        out.retain(|n| seen.insert(n.clone()));
        out
    }
}

/// Definitions in `text` of a file with extension `ext`, in order, distinct.
pub fn definitions(text: &str, ext: &str) -> Vec<String> {
    let re = if STYLE.contains(&ext) {
        &CSS_SELECTOR
    } else if CONFIG.contains(&ext) {
        &CONFIG_KEY
    } else {
        &CODE_DEFINITION
    };
    names(re.as_ref(), text, usize::MAX)
}

/// The first group each match of `re` captured, trimmed, distinct, in order, at most `max`.
fn names(re: Option<&Regex>, text: &str, max: usize) -> Vec<String> {
    let Some(re) = re else { return Vec::new() };
    let mut out: Vec<String> = Vec::new();
    for c in re.captures_iter(text) {
        if let Some(name) = c.iter().skip(1).flatten().next().map(|m| m.as_str().trim().to_owned())
            && !out.contains(&name)
            && out.len() < max
        {
            out.push(name);
        }
    }
    out
}

/// What changed from `old` to `new` in `path`.
pub fn changed(old: &str, new: &str, path: &str) -> Changed {
    let ext = path.rsplit_once('.').map_or("", |(_, e)| e).to_ascii_lowercase();
    let (d_old, d_new) = (definitions(old, &ext), definitions(new, &ext));
    let mut added: Vec<String> = d_new.iter().filter(|d| !d_old.contains(d)).cloned().collect();
    let mut removed: Vec<String> = d_old.iter().filter(|d| !d_new.contains(d)).cloned().collect();
    let mut renamed = Vec::new();
    if !added.is_empty() && added.len() == removed.len() && !old.trim().is_empty() {
        renamed = removed.drain(..).zip(added.drain(..)).collect();
    }
    let defined: HashSet<String> = d_old.into_iter().chain(d_new).collect();
    added.extend(added_identifiers(old, new).into_iter().filter(|i| !defined.contains(i)));
    removed.extend(added_identifiers(new, old).into_iter().filter(|i| !defined.contains(i)));
    added.truncate(MAX_CHANGED);
    removed.truncate(MAX_CHANGED);
    renamed.truncate(MAX_CHANGED);
    Changed { added, removed, renamed }
}

/// Tests a run reports as failed, in order, distinct (cargo, pytest, go, jest/vitest, mocha).
pub fn failed_tests(output: &str) -> Vec<String> {
    // The longest name each branch takes, in characters (the capture before trimming). Checked after
    // the match: a bounded `.{3,160}` over Unicode compiles to an automaton whose per-thread match
    // caches held 3.4 MB of the worker's heap after a flood of sessions (docs/measurements.md).
    const LONGEST: [usize; 6] = [0, usize::MAX, usize::MAX, usize::MAX, 120, 160];
    static FAILED: LazyLock<Option<Regex>> = LazyLock::new(|| {
        Regex::new(concat!(
            r"(?m)^\s*(?:test\s+(\S+)\s+\.\.\.\s+FAILED",
            r"|FAILED\s+(\S+::\S+)",
            r"|---\s+FAIL:\s+(\S+)",
            r"|[✕×]\s+(.{3,}?)(?:\s+\(\d+\s*ms\))?$",
            r"|●\s+(.{3,}?)$",
            r")"
        ))
        .ok()
    });
    let Some(re) = FAILED.as_ref() else { return Vec::new() };
    let mut out: Vec<String> = Vec::new();
    for c in re.captures_iter(output) {
        let Some((branch, m)) = c.iter().enumerate().skip(1).find_map(|(i, m)| Some((i, m?))) else {
            continue;
        };
        let name = m.as_str().trim();
        if m.as_str().chars().count() <= LONGEST[branch] && !out.iter().any(|n| n == name) && out.len() < MAX_CHANGED {
            out.push(name.to_owned());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_names_definitions_first_then_identifiers_and_pairs_renames() {
        let c = changed(
            "    def load(path):\n        return read_file(path)",
            "    def load_config(path, strictMode=True):\n        return parse_toml(path)",
            "app/config.py",
        );
        assert_eq!(c.renamed, [("load".to_owned(), "load_config".to_owned())]);
        assert_eq!(c.added, ["strictMode", "parse_toml"]);
        assert_eq!(c.removed, ["read_file"]);
        assert_eq!(
            c.describe(),
            "renamed load → load_config; added strictMode, parse_toml; removed read_file"
        );
        assert_eq!(c.names()[0], "load_config");
        let test = changed("", "#[test]\nfn test_negative_input_error_display() {}", "src/math_utils.rs");
        assert_eq!(test.added, ["test_negative_input_error_display"]);
        assert!(test.renamed.is_empty(), "a new file renames nothing");
        let js = changed(
            "",
            "  it('rounds half to even', () => {})\nexport function debouncedUpdateTokens() {}",
            "a.test.js",
        );
        assert_eq!(
            js.added[..2],
            ["rounds half to even".to_owned(), "debouncedUpdateTokens".to_owned()]
        );
    }

    #[test]
    fn style_sheets_and_config_files_name_selectors_and_keys() {
        assert_eq!(
            definitions(".todo-item, .x:hover {\n color: red;\n}\n#main {}", "css"),
            [".todo-item", "#main"]
        );
        assert_eq!(
            definitions("[server]\nport = 8080\n\"log_level\": 1\nretries: 3", "toml"),
            ["server", "port", "log_level", "retries"]
        );
        assert!(changed("same", "same", "x.rs").is_empty());
    }

    #[test]
    fn failed_tests_of_common_runners_are_named() {
        let cargo = "test math::tests::adds ... ok\ntest math::tests::test_negative_input_error_display ... FAILED\n";
        assert_eq!(failed_tests(cargo), ["math::tests::test_negative_input_error_display"]);
        assert_eq!(
            failed_tests("FAILED tests/test_tok.py::test_clean_up_spaces - AssertionError"),
            ["tests/test_tok.py::test_clean_up_spaces"]
        );
        assert_eq!(failed_tests("--- FAIL: TestParseConfig (0.00s)"), ["TestParseConfig"]);
        assert_eq!(failed_tests("  ✕ renders the token list (12 ms)"), ["renders the token list"]);
        assert!(failed_tests("all good").is_empty());
        let (fits, too_long) = ("é".repeat(120), "é".repeat(121));
        assert_eq!(failed_tests(&format!("✕ {fits}\n× {too_long}\n● {too_long}")), [fits, too_long]);
    }
}
