//! Identifiers of code the extractive observer names: those an edit added (its title says what
//! changed, not only where) and the top-level definitions of a file read (so file context and
//! search know what a file that was only read holds). Pure and lexical: no parser, no panics.

use std::collections::HashSet;
use std::sync::LazyLock;

use regex::Regex;

/// Names listed per edit or read.
pub const MAX_NAMES: usize = 6;

/// Top-level definitions of common languages; group 1 is the name. A line may carry a Claude Code
/// `Read` line-number prefix (`   12→`), which is skipped.
static DEFINITION: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(concat!(
        r"^(?:\s*\d+→)?(?:",
        r"(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:unsafe\s+)?(?:fn|struct|enum|trait|mod|type|union)\s+([A-Za-z_]\w*)",
        r"|impl(?:<[^>]*>)?\s+(?:[\w:]+\s+for\s+)?([A-Za-z_][\w:]*)",
        r"|(?:async\s+)?def\s+([A-Za-z_]\w*)|class\s+([A-Za-z_]\w*)",
        r"|(?:export\s+(?:default\s+)?)?(?:async\s+)?(?:function\*?|class|interface|enum|type)\s+([A-Za-z_$][\w$]*)",
        r"|export\s+(?:const|let|var)\s+([A-Za-z_$][\w$]*)",
        r"|func\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)",
        r"|\s{0,2}(?:defmodule|defp?|defmacro)\s+([A-Za-z_][\w.?!]*)",
        r"|([A-Za-z_]\w*)\s*\(\)\s*\{",
        r")"
    ))
    .ok()
});

/// Identifier-like words: snake_case, camelCase or PascalCase with an inner capital, at least 4 chars.
pub(crate) fn identifiers(s: &str) -> impl Iterator<Item = &str> {
    s.split(|c: char| !crate::pipeline::terms::is_word_char(c))
        .filter(|w| w.len() >= 4 && w.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_'))
        .filter(|w| w.trim_matches('_').contains('_') || w.chars().skip(1).any(char::is_uppercase))
}

/// Identifiers of `new` that `old` does not have, in order of appearance, de-duplicated.
pub fn added_identifiers(old: &str, new: &str) -> Vec<String> {
    let before: HashSet<&str> = identifiers(old).collect();
    let mut seen = HashSet::new();
    identifiers(new)
        .filter(|w| !before.contains(w) && seen.insert(*w))
        .map(str::to_owned)
        .collect()
}

/// Names defined at the top of `content` (at most [`MAX_NAMES`]), in file order.
pub fn top_level_symbols(content: &str) -> Vec<String> {
    let Some(re) = DEFINITION.as_ref() else { return Vec::new() };
    let mut out: Vec<String> = Vec::new();
    for line in content.lines() {
        let Some(c) = re.captures(line) else { continue };
        if let Some(name) = c.iter().skip(1).flatten().next().map(|m| m.as_str().to_owned())
            && !out.contains(&name)
        {
            out.push(name);
            if out.len() >= MAX_NAMES {
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_names_what_it_added() {
        let ids = added_identifiers(
            "def load(path):",
            "def load_config(path, strictMode=True):\n    return parse_toml(path)",
        );
        assert_eq!(ids, ["load_config", "strictMode", "parse_toml"]);
        assert!(added_identifiers("same_name", "same_name").is_empty());
        assert!(added_identifiers("", "plain words only").is_empty());
    }

    #[test]
    fn definitions_of_several_languages_are_found() {
        let rust =
            "use std::io;\npub struct Config {\n}\nimpl Default for Config {}\npub(crate) async fn load_config() {}\n    fn inner() {}";
        assert_eq!(top_level_symbols(rust), ["Config", "load_config"]);
        let py = "     1→import os\n     2→class App:\n     3→    def run(self):\n     4→def main():";
        assert_eq!(top_level_symbols(py), ["App", "main"]);
        let ts = "export default function TodoList() {}\nexport const useTodos = () => {}\ninterface Props {}";
        assert_eq!(top_level_symbols(ts), ["TodoList", "useTodos", "Props"]);
        let ex = "defmodule Spotter.Hooks do\n  def handle(conn) do\n  defp parse(x) do";
        assert_eq!(top_level_symbols(ex), ["Spotter.Hooks", "handle", "parse"]);
        let sh = "spotter_rand_hex() {\n  head -c 16\n}";
        assert_eq!(top_level_symbols(sh), ["spotter_rand_hex"]);
        assert!(top_level_symbols("just prose, no code").is_empty());
    }
}
