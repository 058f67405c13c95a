//! Query parsing: conformance cases Q1–Q4 of docs/spec/retrieval.md §10 and malformed input.

use super::*;

fn exprs(q: &str) -> (Option<String>, Option<String>, Vec<String>) {
    let p = parse_query(q);
    (p.words_expr(), p.trigram_expr(), p.like_patterns())
}

#[test]
fn q1_words_are_anded() {
    assert_eq!(exprs("rate limit").0.as_deref(), Some("\"rate\" AND \"limit\""));
}

#[test]
fn q2_phrase_and_prefix() {
    let p = parse_query("\"rate limit\" auth*");
    assert_eq!(p.terms.len(), 2);
    assert!(p.terms[0].phrase);
    assert!(p.terms[1].prefix);
    assert_eq!(p.words_expr().as_deref(), Some("\"rate limit\" AND \"auth\"*"));
}

#[test]
fn q3_fts_syntax_is_literal() {
    let p = parse_query("foo:bar OR (x) a*");
    let texts: Vec<&str> = p.terms.iter().map(|t| t.text.as_str()).collect();
    assert_eq!(texts, vec!["foo:bar", "(x)", "a"]);
    assert!(!p.terms[2].prefix, "stem too short: * dropped");
    assert_eq!(p.words_expr().as_deref(), Some("\"foo:bar\" AND \"(x)\" AND \"a\""));
}

#[test]
fn q4_cjk_routing() {
    assert_eq!(exprs("缓存失效").1.as_deref(), Some("\"缓存失效\""));
    assert_eq!(exprs("缓存").2, vec!["%缓存%"]);
    assert_eq!(exprs("缓存*").2, vec!["%缓存%"]);
    let (w, t, l) = exprs("缓存 cache");
    assert_eq!((w.as_deref(), t, l), (Some("\"cache\""), None, vec!["%缓存%".to_string()]));
    assert_eq!(
        exprs("缓存失效*").1.as_deref(),
        Some("\"缓存失效\""),
        "a * is dropped on trigram terms"
    );
}

#[test]
fn malformed_input_never_breaks_quoting() {
    assert_eq!(exprs("foo AND (").0.as_deref(), Some("\"foo\""));
    assert_eq!(exprs("\"unbalanced").0.as_deref(), Some("\"unbalanced\""));
    assert_eq!(exprs("say \"hi\"\"").0.as_deref(), Some("\"say\" AND \"hi\""));
    assert_eq!(exprs("a\"b").0.as_deref(), Some("\"a\" AND \"b\""));
    assert!(parse_query("( ) * \" \" NOT").is_empty());
    assert_eq!(
        Term {
            text: "x\"y".into(),
            phrase: false,
            prefix: false
        }
        .fts_expr(),
        "\"x\"\"y\""
    );
    assert_eq!(
        Term {
            text: "5%_\\".into(),
            phrase: false,
            prefix: false
        }
        .like_pattern(),
        "%5\\%\\_\\\\%"
    );
    let many = (0..50).map(|i| format!("w{i}")).collect::<Vec<_>>().join(" ");
    assert_eq!(parse_query(&many).terms.len(), 32);
}

#[test]
fn natural_mode_drops_stopwords_and_stems() {
    let n = natural("what did we decide about retrying the flaky upload?");
    let w = n.words.unwrap_or_default();
    for part in ["\"retry\"*", "\"retri\"*", "\"upload\"*", "\"flaky\"*", "\"decid\"*"] {
        assert!(w.contains(part), "{w} lacks {part}");
    }
    for stop in ["\"what\"", "\"did\"", "\"about\"", "\"the\""] {
        assert!(!w.contains(stop), "{w} has {stop}");
    }
    assert_eq!(n.trigrams, None);
}

#[test]
fn natural_mode_cjk_windows() {
    let n = natural("修复缓存");
    assert_eq!(n.trigrams.as_deref(), Some("\"修复缓\" OR \"复缓存\""));
    assert_eq!(n.words, None);
}
