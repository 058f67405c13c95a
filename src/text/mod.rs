//! Text helpers every layer shares: which characters are hidden from a reader ([`is_hidden`]);
//! the one rule for stored text on agent surfaces ([`sink`]) and lines as every surface shows
//! them ([`lines`]); stored or remote text made safe for a terminal ([`terminal`]); the text folded
//! as a reader sees it, for the instruction screen ([`fold`]); words, stems and stopwords
//! ([`words`]); the file extensions of source code ([`CODE_EXTENSIONS`]).

pub mod fold;
pub mod lines;
pub mod sink;
pub mod terminal;
pub mod words;

/// Extensions of source-code files (what the read gate outlines and the graph names as files).
pub const CODE_EXTENSIONS: [&str; 30] = [
    "rs", "py", "pyi", "js", "jsx", "mjs", "cjs", "ts", "tsx", "go", "java", "kt", "kts", "scala", "swift", "c", "h", "cc", "cpp", "hpp",
    "cs", "rb", "php", "lua", "sh", "ex", "exs", "dart", "m", "zig",
];

/// Characters that change how text is shown or read without being seen: C0 and C1 controls (the
/// newline and tab too: callers that keep lines split first), Unicode's default-ignorable code
/// points (soft hyphen, zero-width characters and joiners, variation selectors, the tag characters
/// U+E0000–E0FFF, Hangul fillers, the BOM), the bidi marks, embeddings, overrides and isolates,
/// the interlinear annotation characters, and the line and paragraph separators.
pub fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{00AD}' | '\u{034F}' | '\u{061C}'
            | '\u{115F}'..='\u{1160}'
            | '\u{17B4}'..='\u{17B5}'
            | '\u{180B}'..='\u{180F}'
            | '\u{200B}'..='\u{200F}'
            | '\u{2028}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}'
            | '\u{3164}'
            | '\u{FE00}'..='\u{FE0F}'
            | '\u{FEFF}'
            | '\u{FFA0}'
            | '\u{FFF0}'..='\u{FFFB}'
            | '\u{1BCA0}'..='\u{1BCA3}'
            | '\u{1D173}'..='\u{1D17A}'
            | '\u{E0000}'..='\u{E0FFF}')
}

/// `s` as one line: hidden characters removed, every whitespace run one space, trimmed — what a
/// stored title or name is (issue 51).
pub fn one_line(s: &str) -> String {
    let visible: String = s.chars().filter(|c| c.is_whitespace() || !is_hidden(*c)).collect();
    let mut out = String::with_capacity(visible.len());
    for word in visible.split(char::is_whitespace).filter(|w| !w.is_empty()) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_characters_are_the_invisible_ones() {
        for c in [
            '\u{1b}',
            '\u{9b}',
            '\u{202E}',
            '\u{2066}',
            '\u{200B}',
            '\u{FE0F}',
            '\u{E0041}',
            '\u{E0100}',
            '\u{2028}',
            '\n',
        ] {
            assert!(is_hidden(c), "{:?}", c);
        }
        for c in ['a', 'é', '中', '→', ' ', '‹'] {
            assert!(!is_hidden(c), "{c}");
        }
    }

    #[test]
    fn one_line_folds_breaks_and_drops_what_is_hidden() {
        assert_eq!(one_line("  a\nb\u{1b}[2J\u{2028}c\u{E0041}  "), "a b[2J c");
    }
}
