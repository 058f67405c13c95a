//! User query parsing (docs/spec/retrieval.md §4.2–§4.4). The user's text never reaches FTS5 as
//! syntax: it is split into terms here and every term is emitted as a quoted FTS5 string
//! literal, so `foo AND (` or `"unbalanced` can never raise an FTS5 syntax error.

use crate::text::words::{is_stopword, prefix_forms};

const MAX_TERMS: usize = 32;
const NATURAL_WORDS_MAX: usize = 16;
const NATURAL_WINDOWS_MAX: usize = 32;

/// One parsed term: a word or a `"phrase"`, possibly a prefix (`auth*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    pub text: String,
    pub phrase: bool,
    pub prefix: bool,
}

/// Which index a term uses (§4.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// `*_fts` (unicode61).
    Words,
    /// `*_tri` (trigram), substring match.
    Trigram,
    /// 1–2 CJK chars: `LIKE '%term%'` on the indexed columns.
    Like,
}

/// Han, Kana, Hangul or Thai.
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0E7F | 0x1100..=0x11FF | 0x3040..=0x30FF | 0x3130..=0x318F | 0x31F0..=0x31FF |
        0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xA960..=0xA97F | 0xAC00..=0xD7AF | 0xF900..=0xFAFF |
        0xFF66..=0xFF9F | 0x20000..=0x2FA1F)
}

impl Term {
    pub fn route(&self) -> Route {
        if !self.text.chars().any(is_cjk) {
            Route::Words
        } else if self.text.chars().count() >= 3 {
            Route::Trigram
        } else {
            Route::Like
        }
    }

    /// The FTS5 expression: `"term"`, `"two words"`, `"stem"*` (prefix only on the word index).
    pub fn fts_expr(&self) -> String {
        let lit = quote(&self.text);
        if self.prefix && self.route() == Route::Words {
            format!("{lit}*")
        } else {
            lit
        }
    }

    /// `%term%` with `%`, `_` and `\` escaped (for `ESCAPE '\'`).
    pub fn like_pattern(&self) -> String {
        let mut p = String::from("%");
        for c in self.text.chars() {
            if matches!(c, '%' | '_' | '\\') {
                p.push('\\');
            }
            p.push(c);
        }
        p.push('%');
        p
    }
}

/// An FTS5 string literal with `"` doubled. Control characters become spaces: FTS5 reads its
/// expression as a C string, so a NUL would end it mid-literal ("unterminated string").
pub fn quote(s: &str) -> String {
    let clean: String = s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    format!("\"{}\"", clean.replace('"', "\"\""))
}

/// The terms of a query, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParsedQuery {
    pub terms: Vec<Term>,
}

fn push_word(terms: &mut Vec<Term>, word: &str) {
    if matches!(word, "AND" | "OR" | "NOT") {
        return;
    }
    let stripped = word.trim_end_matches('*');
    let prefix = stripped.len() < word.len() && stripped.chars().count() >= 2;
    // A term without a letter or digit has no token to match (e.g. a lone `(`).
    if stripped.chars().any(char::is_alphanumeric) {
        terms.push(Term {
            text: stripped.to_string(),
            phrase: false,
            prefix,
        });
    }
}

/// Splits a query into terms: whitespace separates, `"…"` is a phrase (unterminated → to the
/// end), a trailing `*` marks a prefix (stem ≥ 2 chars), standalone `AND`/`OR`/`NOT` are
/// ignored, everything else is literal. At most 32 terms.
pub fn parse_query(q: &str) -> ParsedQuery {
    // Control characters (NUL included) separate words like spaces do.
    let q: String = q.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    let mut terms = Vec::new();
    let mut chars = q.chars().peekable();
    let mut word = String::new();
    while let Some(c) = chars.next() {
        if c == '"' {
            push_word(&mut terms, &std::mem::take(&mut word));
            let mut phrase = String::new();
            for p in chars.by_ref() {
                if p == '"' {
                    break;
                }
                phrase.push(p);
            }
            let phrase = phrase.split_whitespace().collect::<Vec<_>>().join(" ");
            if phrase.chars().any(char::is_alphanumeric) {
                terms.push(Term {
                    text: phrase,
                    phrase: true,
                    prefix: false,
                });
            }
        } else if c.is_whitespace() {
            push_word(&mut terms, &std::mem::take(&mut word));
        } else {
            word.push(c);
        }
    }
    push_word(&mut terms, &word);
    terms.dedup();
    terms.truncate(MAX_TERMS);
    ParsedQuery { terms }
}

impl ParsedQuery {
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// AND of the word-index terms (None when there are none).
    pub fn words_expr(&self) -> Option<String> {
        join(self.terms.iter().filter(|t| t.route() == Route::Words).map(Term::fts_expr), " AND ")
    }

    /// AND of the trigram terms.
    pub fn trigram_expr(&self) -> Option<String> {
        join(
            self.terms.iter().filter(|t| t.route() == Route::Trigram).map(Term::fts_expr),
            " AND ",
        )
    }

    /// LIKE patterns of the 1–2 char CJK terms.
    pub fn like_patterns(&self) -> Vec<String> {
        self.terms
            .iter()
            .filter(|t| t.route() == Route::Like)
            .map(Term::like_pattern)
            .collect()
    }
}

fn join(parts: impl Iterator<Item = String>, sep: &str) -> Option<String> {
    let v: Vec<String> = parts.collect();
    if v.is_empty() { None } else { Some(v.join(sep)) }
}

/// Natural mode (§4.4) of a text: an OR expression over the word index (stems as prefixes) and
/// one over the trigram index (3-char windows of CJK runs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Natural {
    pub words: Option<String>,
    pub trigrams: Option<String>,
    /// The forms of `words`, one group per query word (what [`super::search_prune`] counts).
    pub groups: Vec<Vec<Form>>,
}

/// One FTS5 phrase of a natural-mode expression: a lowercase token, whole or as a prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Form {
    pub token: String,
    pub prefix: bool,
}

impl Form {
    /// The form as FTS5 syntax: `"token"` or `"token"*`.
    pub fn expr(&self) -> String {
        if self.prefix {
            format!("{}*", quote(&self.token))
        } else {
            quote(&self.token)
        }
    }
}

/// Builds the natural-mode expressions of free text.
pub fn natural(text: &str) -> Natural {
    let mut words: Vec<String> = Vec::new();
    let mut windows: Vec<String> = Vec::new();
    for token in text.split(|c: char| !c.is_alphanumeric()).filter(|t| !t.is_empty()) {
        let mut latin = String::new();
        let mut run: Vec<char> = Vec::new();
        for c in token.chars().chain(std::iter::once(' ')) {
            if is_cjk(c) {
                flush_word(&mut latin, &mut words);
                run.push(c);
            } else {
                for w in run.windows(3) {
                    let s: String = w.iter().collect();
                    if !windows.contains(&s) {
                        windows.push(s);
                    }
                }
                run.clear();
                if c != ' ' {
                    latin.push(c);
                }
            }
        }
        flush_word(&mut latin, &mut words);
    }
    words.sort_by(|a, b| b.chars().count().cmp(&a.chars().count()).then_with(|| a.cmp(b)));
    words.truncate(NATURAL_WORDS_MAX);
    windows.truncate(NATURAL_WINDOWS_MAX);
    let mut groups: Vec<Vec<Form>> = Vec::new();
    for w in &words {
        let prefixes: Vec<String> = prefix_forms(w).into_iter().filter(|p| p.chars().count() >= 3).collect();
        let mut group = Vec::new();
        if !prefixes.iter().any(|p| w.starts_with(p.as_str())) {
            group.push(Form {
                token: w.clone(),
                prefix: false,
            });
        }
        group.extend(prefixes.into_iter().map(|token| Form { token, prefix: true }));
        groups.push(group);
    }
    let mut forms: Vec<String> = groups.iter().flatten().map(Form::expr).collect();
    forms.dedup();
    Natural {
        words: join(forms.into_iter(), " OR "),
        trigrams: join(windows.iter().map(|w| quote(w)), " OR "),
        groups,
    }
}

fn flush_word(latin: &mut String, words: &mut Vec<String>) {
    let w = std::mem::take(latin).to_lowercase();
    if w.chars().count() >= 3 && !is_stopword(&w) && !words.contains(&w) {
        words.push(w);
    }
}

#[cfg(test)]
mod tests;
