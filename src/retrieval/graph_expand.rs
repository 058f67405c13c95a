//! Search through the graph (issue 41): a query naming a symbol the graph knows is expanded to the
//! edits of the one file that defines it — the answer to "where did we change X?" even when no
//! observation's text repeats X. Only identifier-shaped words are looked
//! up (camelCase, snake_case or a `::`/`.` path; [`identifier_terms`]); quarantined observations
//! are never returned, and the observations are in the query's scope.

use std::collections::{HashMap, HashSet};

use rusqlite::{Connection, params_from_iter};

use super::RetrievalError;
use super::scope::{Conditions, Scope};
use rusqlite::types::Value as SqlValue;

/// Observations returned for one query, at most.
pub const EXPANSION_MAX: usize = 3;

/// The words of `query` that look like code identifiers.
pub fn identifier_terms(query: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in query.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        let inner_upper = w.chars().skip(1).any(char::is_uppercase) && w.chars().any(char::is_lowercase);
        let snake = w.contains('_') && w.trim_matches('_').len() >= 3;
        if w.len() >= 4 && (inner_upper || snake) && !out.iter().any(|x| x == w) {
            out.push(w.to_string());
        }
    }
    out
}

/// The observations that wrote the symbols `query` names, those naming the most of them first, then
/// the newest. A symbol defined in more than one file of the scope is ambiguous and left out.
pub fn expand(conn: &Connection, query: &str, scope: &Scope) -> Result<Vec<i64>, RetrievalError> {
    let terms = identifier_terms(query);
    if terms.is_empty() || names_a_command(conn, query, scope)? {
        return Ok(Vec::new());
    }
    let mut c = Conditions::default();
    scope.conditions("o", true, &mut c);
    let sql = format!(
        "SELECT o.id, o.created_at_epoch, r.src FROM entities s
         JOIN relations r ON r.dst = s.id AND r.kind IN ('defines', 'tests')
         JOIN relation_evidence x ON x.relation_id = r.id
         JOIN observations o ON o.id = x.observation_id
         WHERE s.kind = 'symbol' AND s.name = ? AND o.quarantined = 0 AND o.superseded_by IS NULL{}",
        c.sql
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    // observation → (terms it wrote, when)
    let mut found: HashMap<i64, (usize, i64)> = HashMap::new();
    for term in terms {
        let params = std::iter::once(SqlValue::Text(term)).chain(c.params.iter().cloned());
        let rows: Vec<(i64, i64, i64)> = stmt
            .query_map(params_from_iter(params), |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<Result<_, _>>()?;
        let files: HashSet<i64> = rows.iter().map(|r| r.2).collect();
        if files.len() != 1 {
            continue;
        }
        let ids: HashSet<(i64, i64)> = rows.iter().map(|r| (r.0, r.1)).collect();
        for (id, at) in ids {
            found.entry(id).or_insert((0, at)).0 += 1;
        }
    }
    let mut ranked: Vec<(i64, usize, i64)> = found.into_iter().map(|(id, (n, at))| (id, n, at)).collect();
    ranked.sort_by_key(|&(id, n, at)| (std::cmp::Reverse(n), std::cmp::Reverse(at), std::cmp::Reverse(id)));
    Ok(ranked.into_iter().take(EXPANSION_MAX).map(|r| r.0).collect())
}

/// Whether a word of `query` starts a command the graph has seen run: the question is about
/// running it (`pytest test_totals`), and its identifiers are the command's arguments.
fn names_a_command(conn: &Connection, query: &str, scope: &Scope) -> Result<bool, RetrievalError> {
    let mut stmt = conn.prepare_cached(
        "SELECT project FROM entities WHERE kind = 'command' AND (name = ?1 OR substr(name, 1, length(?1) + 1) = ?1 || ' ') LIMIT 20",
    )?;
    let mut words: Vec<&str> = query
        .split(|c: char| c.is_whitespace() || c == '`' || c == '"' || c == '\'')
        .collect();
    words.retain(|w| w.len() >= 2);
    words.dedup();
    for w in words {
        let projects: Vec<String> = stmt.query_map([w], |r| r.get(0))?.collect::<Result<_, _>>()?;
        let in_scope = |p: &String| scope.projects.as_ref().is_none_or(|chain| chain.contains(p));
        if projects.iter().any(in_scope) {
            return Ok(true);
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_identifier_shaped_words_are_looked_up() {
        assert_eq!(
            identifier_terms("Where did we change debouncedUpdateTokens and parse_config in Main?"),
            ["debouncedUpdateTokens", "parse_config"]
        );
        assert!(identifier_terms("where did we change the login page").is_empty());
        assert!(identifier_terms("a_b ok").is_empty());
    }
}
