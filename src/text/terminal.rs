//! Stored or remote text printed to a terminal (issue 50): a record's fields, a teammate's work
//! state, a corpus, a relation, a worker's error. A terminal obeys escape sequences — a title
//! change, a screen clear, text hidden by colour, a cursor move that overwrites what was printed —
//! and a reader cannot see bidi overrides or tag characters. [`safe`] shows every such character
//! escaped (`\u{1b}`), so what a person reads is what is stored; tabs and line breaks stay.
//! [`line`] is the same for text printed inside one line: its line breaks are escaped too.

use std::borrow::Cow;

use super::is_hidden;

fn escape_all(s: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !s.chars().any(|c| is_hidden(c) && !keep(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if is_hidden(c) && !keep(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `s` with every control, bidi and invisible character but tab and line feed shown escaped.
pub fn safe(s: &str) -> Cow<'_, str> {
    escape_all(s, |c| c == '\n' || c == '\t')
}

/// `s` for one line of output: as [`safe`], and a line break shown escaped too.
pub fn line(s: &str) -> Cow<'_, str> {
    escape_all(s, |c| c == '\t')
}

/// A serialized JSON document with every hidden character (which can only stand inside its
/// strings) removed (issue 51: JSON output carries no bidi, tag or invisible character); controls
/// below U+0020 are already JSON escapes.
pub fn json(doc: &str) -> Cow<'_, str> {
    let hidden = |c: char| crate::text::is_hidden(c) && !matches!(c, '\n' | '\t' | '\r');
    if !doc.chars().any(hidden) {
        return Cow::Borrowed(doc);
    }
    Cow::Owned(doc.chars().filter(|c| !hidden(*c)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_title_changes_clears_bidi_and_tags_but_keeps_words() {
        let hostile = "task\u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}31m\u{202E}evil\u{2028}x\u{E0049}\u{E0047}";
        let out = safe(hostile);
        assert!(!out.chars().any(is_hidden), "{out}");
        assert_eq!(
            out,
            "task\\u{1b}]0;pwned\\u{7}\\u{1b}[2J\\u{9b}31m\\u{202e}evil\\u{2028}x\\u{e0049}\\u{e0047}"
        );
        assert_eq!(safe("two\nlines\tand é 中"), "two\nlines\tand é 中");
        assert!(matches!(safe("plain"), Cow::Borrowed(_)));
        assert_eq!(line("a\nb\r"), "a\\u{a}b\\u{d}");
    }

    #[test]
    fn json_stays_json_without_what_is_hidden() {
        let v = serde_json::json!({"title": "a\u{202E}b\u{E0041}\u{85}c\u{1b}"});
        let doc = serde_json::to_string_pretty(&v).unwrap();
        let out = json(&doc);
        assert!(!out.chars().any(|c| is_hidden(c) && c != '\n'), "{out}");
        let back: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(back["title"], "abc\u{1b}", "the escaped control stays an escape");
    }
}
