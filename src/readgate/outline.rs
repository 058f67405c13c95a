//! A compact outline of a source file from its text (issue 39's read gate): top-level and
//! one-level-nested definitions — functions, types, classes, modules, impls — by the keywords of
//! the common languages, each with the line range it spans (to the line before the next
//! definition at the same or a shallower indent). Heuristic and cheap; no parser per language.

/// One definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    pub kind: &'static str,
    pub name: String,
    /// 1-based, inclusive.
    pub start: usize,
    pub end: usize,
    indent: usize,
}

pub use crate::text::CODE_EXTENSIONS;

const MODIFIERS: [&str; 16] = [
    "pub",
    "pub(crate)",
    "pub(super)",
    "export",
    "default",
    "async",
    "static",
    "public",
    "private",
    "protected",
    "internal",
    "abstract",
    "final",
    "unsafe",
    "const",
    "override",
];

/// (keyword, kind) pairs, the keyword followed by the name.
const KEYWORDS: [(&str, &str); 18] = [
    ("fn", "fn"),
    ("def", "def"),
    ("func", "func"),
    ("function", "function"),
    ("fun", "fun"),
    ("class", "class"),
    ("struct", "struct"),
    ("enum", "enum"),
    ("trait", "trait"),
    ("interface", "interface"),
    ("impl", "impl"),
    ("mod", "mod"),
    ("module", "module"),
    ("type", "type"),
    ("object", "object"),
    ("protocol", "protocol"),
    ("extension", "extension"),
    ("macro_rules!", "macro"),
];

fn name_of(rest: &str) -> Option<String> {
    let rest = rest.trim_start();
    // Go methods: `func (r *T) Name(`.
    let rest = match rest.strip_prefix('(') {
        Some(r) => r.split_once(')')?.1.trim_start(),
        None => rest,
    };
    let name: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '$' | '<' | '>' | ':' | '&' | '\'' | ' '))
        .collect();
    let name = name
        .split(['<', ' ', '('])
        .next()
        .unwrap_or_default()
        .trim_end_matches(':')
        .to_string();
    (!name.is_empty() && name.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')).then_some(name)
}

fn definition(line: &str) -> Option<(&'static str, String)> {
    let mut words = line.split_whitespace().peekable();
    while words.peek().is_some_and(|w| MODIFIERS.contains(w)) {
        words.next();
    }
    let first = words.next()?;
    let (_, kind) = KEYWORDS.iter().find(|(k, _)| *k == first)?;
    let rest: Vec<&str> = words.collect();
    let name = if *kind == "impl" {
        // `impl<T> Trait for Type` names the whole header.
        let header = rest.join(" ");
        let header = header.split('{').next().unwrap_or_default().trim().to_string();
        (!header.is_empty()).then_some(header)
    } else {
        name_of(&rest.join(" "))
    }?;
    Some((kind, name))
}

/// The definitions of `text`, in order, at indent ≤ 4 columns (tabs count 4).
pub fn outline(text: &str) -> Vec<Symbol> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<Symbol> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let indent: usize = line
            .chars()
            .take_while(|c| c.is_whitespace())
            .map(|c| if c == '\t' { 4 } else { 1 })
            .sum();
        if indent > 4 {
            continue;
        }
        let Some((kind, name)) = definition(line.trim()) else { continue };
        out.push(Symbol {
            kind,
            name,
            start: i + 1,
            end: lines.len(),
            indent,
        });
    }
    for i in 0..out.len() {
        let end = out[i + 1..].iter().find(|s| s.indent <= out[i].indent).map(|s| s.start - 1);
        if let Some(end) = end {
            out[i].end = end.max(out[i].start);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_and_python_definitions_with_their_ranges() {
        let rust = "use x;\n\npub struct Price {\n    cents: i64,\n}\n\nimpl Price {\n    pub fn round(&self) -> i64 {\n        1\n    }\n    fn half_even(v: i64) -> i64 { v }\n}\n\npub(crate) async fn load<T>(p: T) {}\n";
        let o = outline(rust);
        let got: Vec<(&str, &str, usize, usize)> = o.iter().map(|s| (s.kind, s.name.as_str(), s.start, s.end)).collect();
        assert_eq!(
            got,
            [
                ("struct", "Price", 3, 6),
                ("impl", "Price", 7, 13),
                ("fn", "round", 8, 10),
                ("fn", "half_even", 11, 13),
                ("fn", "load", 14, 14)
            ]
        );
        let py = "import os\n\nclass Cart:\n    def total(self):\n        return 1\n\n    async def pay(self):\n        pass\n\ndef main():\n    pass\n";
        let names: Vec<String> = outline(py).iter().map(|s| format!("{} {}-{}", s.name, s.start, s.end)).collect();
        assert_eq!(names, ["Cart 3-9", "total 4-6", "pay 7-9", "main 10-11"]);
        let go = "func (s *Server) Handle(w http.ResponseWriter) {\n}\ntype Server struct {\n}\n";
        let names: Vec<String> = outline(go).iter().map(|s| s.name.clone()).collect();
        assert_eq!(names, ["Handle", "Server"]);
    }
}
