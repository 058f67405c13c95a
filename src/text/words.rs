//! Word lists and word forms for natural-mode search (docs/spec/retrieval.md §4.4): the English
//! stopword list (kept in this one place) and a light suffix-stripping stemmer whose stems are
//! matched as prefixes (`retrying` → `retry*` and `retri*`, so `retries` is found too).

/// About 170 English words that carry no search meaning.
pub const STOPWORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    "are",
    "aren't",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "cannot",
    "could",
    "couldn't",
    "did",
    "didn't",
    "do",
    "does",
    "doesn't",
    "doing",
    "don't",
    "done",
    "down",
    "during",
    "each",
    "else",
    "ever",
    "few",
    "for",
    "from",
    "further",
    "get",
    "got",
    "had",
    "hadn't",
    "has",
    "hasn't",
    "have",
    "haven't",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "however",
    "i",
    "if",
    "in",
    "into",
    "is",
    "isn't",
    "it",
    "its",
    "itself",
    "just",
    "let",
    "like",
    "made",
    "make",
    "many",
    "may",
    "me",
    "might",
    "more",
    "most",
    "much",
    "must",
    "my",
    "myself",
    "need",
    "no",
    "nor",
    "not",
    "now",
    "of",
    "off",
    "on",
    "once",
    "one",
    "only",
    "or",
    "other",
    "ought",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "please",
    "same",
    "shall",
    "she",
    "should",
    "shouldn't",
    "so",
    "some",
    "still",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "thing",
    "things",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "upon",
    "us",
    "very",
    "was",
    "wasn't",
    "way",
    "we",
    "were",
    "weren't",
    "what",
    "when",
    "where",
    "whether",
    "which",
    "while",
    "who",
    "whom",
    "whose",
    "why",
    "will",
    "with",
    "within",
    "without",
    "won't",
    "would",
    "wouldn't",
    "yet",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
    "tell",
    "know",
    "want",
    "use",
    "used",
    "using",
    "there's",
    "what's",
    "let's",
];

pub fn is_stopword(word: &str) -> bool {
    STOPWORDS.contains(&word)
}

fn is_vowel(c: u8) -> bool {
    matches!(c, b'a' | b'e' | b'i' | b'o' | b'u')
}

/// A light English stem (Porter step 1 in spirit): plural and -ed / -ing endings removed, a
/// doubled final consonant undone, a final silent `e` dropped. Non-ASCII words are left alone.
pub fn stem(word: &str) -> String {
    let w = word.to_ascii_lowercase();
    if !w.is_ascii() || w.len() < 4 {
        return w;
    }
    let mut s = w.as_str();
    let mut owned;
    if let Some(base) = s.strip_suffix("ies").filter(|b| b.len() >= 2) {
        owned = format!("{base}y");
        s = &owned;
    } else if let Some(base) = s.strip_suffix("ied").filter(|b| b.len() >= 2) {
        owned = format!("{base}y");
        s = &owned;
    } else if let Some(base) = s.strip_suffix("sses") {
        owned = format!("{base}ss");
        s = &owned;
    } else if let Some(base) = ["ches", "shes", "xes", "zes"]
        .iter()
        .find_map(|suf| s.strip_suffix(suf).map(|b| (b, suf)))
    {
        owned = format!("{}{}", base.0, &base.1[..base.1.len() - 2]);
        s = &owned;
    } else if s.ends_with('s') && !s.ends_with("ss") && !s.ends_with("us") && !s.ends_with("is") {
        s = &s[..s.len() - 1];
    }
    for suffix in ["ing", "ed"] {
        if let Some(base) = s.strip_suffix(suffix).filter(|b| b.len() >= 3 && b.bytes().any(is_vowel)) {
            let b = base.as_bytes();
            let n = b.len();
            owned = if n >= 2 && b[n - 1] == b[n - 2] && !is_vowel(b[n - 1]) && !matches!(b[n - 1], b'l' | b's' | b'z') {
                base[..n - 1].to_string()
            } else {
                base.to_string()
            };
            s = &owned;
            break;
        }
    }
    if s.len() > 4 && s.ends_with('e') {
        s = &s[..s.len() - 1];
    }
    s.to_string()
}

/// Prefixes a natural-mode term is matched with: its stem, plus the `y` → `i` variant
/// (`retry` → `retri`, so `retries` and `retried` match).
pub fn prefix_forms(word: &str) -> Vec<String> {
    let s = stem(word);
    let mut forms = vec![s.clone()];
    if s.len() >= 4 && s.ends_with('y') {
        forms.push(format!("{}i", &s[..s.len() - 1]));
    }
    forms
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems() {
        for (w, s) in [
            ("retrying", "retry"),
            ("retries", "retry"),
            ("retried", "retry"),
            ("uploads", "upload"),
            ("uploaded", "upload"),
            ("running", "run"),
            ("decide", "decid"),
            ("decided", "decid"),
            ("flaky", "flaky"),
            ("caches", "cach"),
            ("status", "status"),
            ("fixes", "fix"),
            ("cat", "cat"),
        ] {
            assert_eq!(stem(w), s, "{w}");
        }
        assert_eq!(prefix_forms("retrying"), vec!["retry", "retri"]);
    }

    #[test]
    fn stopword_list_size() {
        assert!(STOPWORDS.len() >= 160 && STOPWORDS.len() <= 200, "{}", STOPWORDS.len());
        assert!(is_stopword("what") && is_stopword("did") && !is_stopword("upload"));
    }
}
