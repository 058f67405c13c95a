//! The searchable terms of a raw tool call (issue 35): every distinct word of the call's text, and
//! for an identifier also its parts — `debouncedUpdateTokens` adds `debounced`, `update`, `tokens`;
//! `clean_up_tokenization_spaces` adds `clean`, `up`, `tokenization`, `spaces`; a path adds its
//! segments. The raw index (`tool_uses_fts`, schema v5) tokenizes with `_` as a word character, so
//! an identifier stays one token and a query naming it matches it whole.
//!
//! JSON text is read as JSON: its string values are the text (an escaped `\n` must not glue `n`
//! onto the next word), its keys are not. Pure; bounded by [`MAX_TERMS`] and [`MAX_WORD`].

use std::collections::HashSet;

use serde_json::Value;

/// Distinct terms kept per column of one call.
pub const MAX_TERMS: usize = 4_000;
/// Longer runs are hashes, base64 or minified code: not terms.
pub const MAX_WORD: usize = 64;

/// A word character of the raw index's tokenizer (`unicode61 tokenchars '_'`).
pub fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The terms document of text that is never read as JSON (what an edit wrote: a JSON file's keys
/// are words of it).
pub fn terms_text(text: &str) -> String {
    let mut out = Terms::default();
    out.text(text);
    out.words.join(" ")
}

/// The terms document of an already parsed JSON value (its string values; keys are not terms).
pub fn terms_value(v: &Value) -> String {
    let mut out = Terms::default();
    out.value(v);
    out.words.join(" ")
}

/// The terms document of one column: distinct words and identifier parts, space-separated.
pub fn terms_document(text: &str) -> String {
    let mut out = Terms::default();
    match serde_json::from_str::<Value>(text) {
        Ok(v) => out.value(&v),
        Err(_) => out.text(text),
    }
    out.words.join(" ")
}

#[derive(Default)]
struct Terms {
    seen: HashSet<String>,
    words: Vec<String>,
}

impl Terms {
    fn full(&self) -> bool {
        self.words.len() >= MAX_TERMS
    }

    fn value(&mut self, v: &Value) {
        match v {
            Value::String(s) => self.text(s),
            Value::Array(a) => a.iter().for_each(|x| self.value(x)),
            Value::Object(m) => m.values().for_each(|x| self.value(x)),
            Value::Number(n) => self.text(&n.to_string()),
            _ => {}
        }
    }

    fn text(&mut self, s: &str) {
        for word in s.split(|c: char| !is_word_char(c)) {
            if self.full() {
                return;
            }
            let word = word.trim_matches('_');
            if word.is_empty() || word.chars().count() > MAX_WORD || !word.chars().any(char::is_alphabetic) {
                continue;
            }
            self.push(word);
            for part in identifier_parts(word) {
                self.push(part);
            }
        }
    }

    fn push(&mut self, w: &str) {
        let key = w.to_lowercase();
        if !self.full() && self.seen.insert(key.clone()) {
            self.words.push(key);
        }
    }
}

/// The parts of an identifier: split at `_`, at a lower→upper step (`fooBar`), before the last
/// capital of an acronym run (`HTTPServer` → `HTTP`, `Server`) and between letters and digits.
/// Empty for a plain word (it is its own only part).
pub fn identifier_parts(word: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    for chunk in word.split('_').filter(|c| !c.is_empty()) {
        let chars: Vec<(usize, char)> = chunk.char_indices().collect();
        let mut start = 0;
        for i in 1..chars.len() {
            let (prev, cur) = (chars[i - 1].1, chars[i].1);
            let next_lower = chars.get(i + 1).is_some_and(|(_, n)| n.is_lowercase());
            let step = (prev.is_lowercase() && cur.is_uppercase())
                || (prev.is_uppercase() && cur.is_uppercase() && next_lower)
                || (prev.is_alphabetic() != cur.is_alphabetic());
            if step {
                parts.push(&chunk[start..chars[i].0]);
                start = chars[i].0;
            }
        }
        parts.push(&chunk[start..]);
    }
    if parts.len() <= 1 {
        return Vec::new();
    }
    parts.retain(|p| p.chars().count() >= 2 && p.chars().any(char::is_alphabetic));
    parts
}

/// The query's words as the raw index tokenizes them (lower-case), stopwords dropped, distinct.
pub fn query_words(query: &str) -> Vec<String> {
    query_terms(query).into_iter().map(|(w, _)| w).collect()
}

/// [`query_words`] with, for each, whether it was written as an identifier (`snake_case`,
/// `camelCase`, letters with digits): such a word names code, an English word usually does not.
pub fn query_terms(query: &str) -> Vec<(String, bool)> {
    let mut seen = HashSet::new();
    query
        .split(|c: char| !is_word_char(c))
        .map(|w| w.trim_matches('_'))
        .map(|w| (w.to_lowercase(), is_identifier(w)))
        .filter(|(w, _)| w.chars().count() >= 2 && w.chars().count() <= MAX_WORD)
        .filter(|(w, _)| !crate::text::words::is_stopword(w))
        .filter(|(w, _)| seen.insert(w.clone()))
        .collect()
}

/// Written as an identifier: an inner `_`, a capital after the first letter, or letters and digits.
pub fn is_identifier(word: &str) -> bool {
    let w = word.trim_matches('_');
    w.contains('_')
        || w.chars().skip(1).any(char::is_uppercase)
        || (w.chars().any(char::is_alphabetic) && w.chars().any(|c| c.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_keep_their_whole_and_add_their_parts() {
        assert_eq!(identifier_parts("debouncedUpdateTokens"), ["debounced", "Update", "Tokens"]);
        assert_eq!(
            identifier_parts("clean_up_tokenization_spaces"),
            ["clean", "up", "tokenization", "spaces"]
        );
        assert_eq!(identifier_parts("HTTPServer"), ["HTTP", "Server"]);
        assert_eq!(identifier_parts("utf8Decode"), ["utf", "Decode"]);
        assert!(identifier_parts("plain").is_empty());
        let doc = terms_document(r#"{"file_path":"/src/tokenizer.js","new_string":"function debouncedUpdateTokens() {\n  return x;\n}"}"#);
        let words: Vec<&str> = doc.split(' ').collect();
        for w in [
            "debouncedupdatetokens",
            "debounced",
            "update",
            "tokens",
            "tokenizer",
            "js",
            "src",
            "return",
        ] {
            assert!(words.contains(&w), "{w} missing from {doc}");
        }
        // The escaped newline does not glue `n` onto `return`; keys are not terms.
        assert!(!words.contains(&"nreturn") && !words.contains(&"new_string"));
    }

    #[test]
    fn plain_text_hashes_and_numbers_are_handled_and_bounded() {
        let doc =
            terms_document("error: E0308 mismatched types 12345 a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4e5f6");
        assert_eq!(doc, "error e0308 mismatched types");
        let many: String = (0..10_000).map(|i| format!("word{i}x ")).collect();
        assert_eq!(terms_document(&many).split(' ').count(), MAX_TERMS);
    }

    #[test]
    fn query_words_match_the_tokenizer() {
        assert_eq!(
            query_words("Where did we change debouncedUpdateTokens?"),
            ["change", "debouncedupdatetokens"]
        );
        assert_eq!(query_words("__init__ path/to_file"), ["init", "path", "to_file"]);
        let terms = query_terms("change TodoItemProps utf8 plain");
        assert_eq!(terms.iter().map(|t| t.1).collect::<Vec<_>>(), [false, true, true, false]);
    }
}
