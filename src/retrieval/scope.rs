//! Scope of a read (docs/spec/retrieval.md §0): a project chain matched against `project` or
//! `merged_into_project`, and an optional platform source (rows without one count as `claude`).
//! Builds SQL conditions with positional parameters; user text only ever travels as a parameter.

use rusqlite::types::Value as SqlValue;

/// Project chain (None = all projects) and platform (None = every platform).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope {
    pub projects: Option<Vec<String>>,
    pub platform: Option<String>,
}

/// A WHERE fragment (`AND …` conditions) with its parameters.
#[derive(Debug, Clone, Default)]
pub struct Conditions {
    pub sql: String,
    pub params: Vec<SqlValue>,
}

impl Conditions {
    pub fn push(&mut self, sql: &str, params: impl IntoIterator<Item = SqlValue>) {
        self.sql.push_str(" AND ");
        self.sql.push_str(sql);
        self.params.extend(params);
    }
}

/// `?,?,?` for `n` parameters.
pub fn placeholders(n: usize) -> String {
    vec!["?"; n].join(",")
}

pub fn text_params(items: &[String]) -> impl Iterator<Item = SqlValue> + '_ {
    items.iter().map(|s| SqlValue::Text(s.clone()))
}

/// Parses a `project` / `projects` value: comma list, primary last; empty or `*` → all.
pub fn parse_chain(raw: Option<&str>) -> Option<Vec<String>> {
    let raw = raw?.trim();
    if raw.is_empty() || raw == "*" {
        return None;
    }
    let chain: Vec<String> = raw.split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect();
    if chain.is_empty() { None } else { Some(chain) }
}

impl Scope {
    pub fn new(projects: Option<Vec<String>>, platform: Option<String>) -> Self {
        Self { projects, platform }
    }

    /// The primary project (last of the chain).
    pub fn primary(&self) -> Option<&str> {
        self.projects.as_ref().and_then(|c| c.last()).map(String::as_str)
    }

    /// Conditions on table alias `a`; `merged` says whether it has `merged_into_project`.
    pub fn conditions(&self, a: &str, merged: bool, out: &mut Conditions) {
        if let Some(chain) = &self.projects {
            let ph = placeholders(chain.len());
            if merged {
                out.push(
                    &format!("({a}.project IN ({ph}) OR {a}.merged_into_project IN ({ph}))"),
                    text_params(chain).chain(text_params(chain)),
                );
            } else {
                out.push(&format!("{a}.project IN ({ph})"), text_params(chain));
            }
        }
        if let Some(p) = &self.platform {
            if p == "claude" {
                out.push(&format!("{a}.platform_source IN ('claude', '')"), []);
            } else {
                out.push(&format!("{a}.platform_source = ?"), [SqlValue::Text(p.clone())]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chain_parsing() {
        assert_eq!(parse_chain(Some("a, b/c")), Some(vec!["a".into(), "b/c".into()]));
        assert_eq!(parse_chain(Some("*")), None);
        assert_eq!(parse_chain(Some(" , ")), None);
        assert_eq!(parse_chain(None), None);
    }

    #[test]
    fn conditions_bind_every_value() {
        let mut c = Conditions::default();
        Scope::new(Some(vec!["a".into(), "b".into()]), Some("codex".into())).conditions("o", true, &mut c);
        assert_eq!(c.params.len(), 5);
        assert!(c.sql.contains("merged_into_project"));
    }
}
