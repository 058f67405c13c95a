//! Excluded-project globs (`docs/spec/pipeline.md` §3.1): `MEMD_EXCLUDED_PROJECTS` compiled to
//! anchored, case-sensitive regexes tested against the whole cwd and its last component.

use regex::{Regex, RegexBuilder};

/// Compiled patterns of `MEMD_EXCLUDED_PROJECTS`.
#[derive(Debug, Clone, Default)]
pub struct ExcludedProjects {
    patterns: Vec<Regex>,
}

impl ExcludedProjects {
    /// Parses the comma-separated setting; `~` expands to `home` when given.
    pub fn new(setting: &str, home: Option<&str>) -> Self {
        let patterns = setting
            .split(',')
            .map(str::trim)
            .filter(|pattern| !pattern.is_empty())
            .filter_map(|pattern| glob_to_regex(pattern, home))
            .collect();
        Self { patterns }
    }

    pub fn len(&self) -> usize {
        self.patterns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// Whether some pattern matches the whole cwd or its last path component.
    pub fn matches(&self, cwd: &str) -> bool {
        if self.patterns.is_empty() {
            return false;
        }
        let normalized = cwd.replace('\\', "/");
        let trimmed = normalized.trim_end_matches('/');
        let whole = if trimmed.is_empty() { normalized.as_str() } else { trimmed };
        let last = trimmed.rsplit('/').next().filter(|component| !component.is_empty());
        self.patterns
            .iter()
            .any(|regex| regex.is_match(whole) || last.is_some_and(|last| regex.is_match(last)))
    }
}

/// One glob as `^…$`; `None` only when the regex would exceed the size limit.
fn glob_to_regex(pattern: &str, home: Option<&str>) -> Option<Regex> {
    let expanded = match (pattern.strip_prefix('~'), home) {
        (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
            let home = home.replace('\\', "/");
            format!("{}{rest}", home.trim_end_matches('/'))
        }
        _ => pattern.to_owned(),
    };
    let expanded = expanded.replace('\\', "/");
    let mut regex = String::with_capacity(expanded.len() * 2 + 2);
    regex.push('^');
    let mut chars = expanded.chars().peekable();
    let mut literal = [0u8; 4];
    while let Some(c) = chars.next() {
        match c {
            '*' if chars.peek() == Some(&'*') => {
                chars.next();
                regex.push_str(".*");
            }
            '*' => regex.push_str("[^/]*"),
            '?' => regex.push_str("[^/]"),
            other => regex.push_str(&regex::escape(other.encode_utf8(&mut literal))),
        }
    }
    regex.push('$');
    RegexBuilder::new(&regex).dot_matches_new_line(true).build().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, cwd: &str) -> bool {
        ExcludedProjects::new(pattern, Some("/home/u")).matches(cwd)
    }

    #[test]
    fn g1_g2_g3_wildcards() {
        assert!(matches("/tmp/*", "/tmp/x"));
        assert!(!matches("/tmp/*", "/tmp/a/b"));
        assert!(matches("/Users/*/kunden/**", "/Users/bob/kunden/acme/api"));
        assert!(!matches("/Users/*/kunden/**", "/Users/bob/kunden"));
        assert!(matches("/tmp/?", "/tmp/a"));
        assert!(!matches("/tmp/?", "/tmp/ab"));
        assert!(matches("C:/Users/*/secret", r"C:\Users\test\secret"));
        assert!(matches(r"C:\Users\*\secret", "C:/Users/test/secret"));
    }

    #[test]
    fn g5_home_and_basename() {
        assert!(matches("~/work/*", "/home/u/work/site"));
        assert!(matches("~", "/home/u"));
        assert!(matches("scratch", "/home/u/scratch"));
        assert!(matches("scratch", "/home/u/scratch/"));
        assert!(!matches("scratch", "/home/u/scratch2"));
        assert!(!ExcludedProjects::new("~/work/*", None).matches("/home/u/work/site"));
        assert!(ExcludedProjects::new("~/work/*", Some("/home/u/")).matches("/home/u/work/site"));
    }

    #[test]
    fn g7_double_star() {
        assert!(!matches("/a/**/b", "/a/b"));
        assert!(matches("/a/**/b", "/a/x/y/b"));
        assert!(matches("**/node_modules", "/x/node_modules"));
    }

    #[test]
    fn g8_case_sensitive_and_literal_brackets() {
        assert!(!matches("/TMP/*", "/tmp/x"));
        assert!(!matches("/srv/[ab]", "/srv/a"));
        assert!(matches("/srv/[ab]", "/srv/[ab]"));
        assert!(!matches("/srv/a.c", "/srv/abc"));
        assert!(matches("{x}", "/p/{x}"));
    }

    #[test]
    fn g9_parsing_and_only_cwd_tested() {
        let excluded = ExcludedProjects::new(" , /tmp/* ,", Some("/home/u"));
        assert_eq!(excluded.len(), 1);
        assert!(!matches("/home/u/secret", "/home/u/secret/src/lib"));
        assert!(ExcludedProjects::new("", None).is_empty());
        assert!(!ExcludedProjects::new("", None).matches("/"));
        assert!(!matches("/tmp/*", ""));
    }
}
