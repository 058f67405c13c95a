//! One detector of the redactor: a name, its marker, the keywords that gate it, and how it
//! matches (a regex, a regex whose candidates need a digit, a literal, or a context rule whose
//! filter picks the secret's range).

use regex::Regex;

#[derive(Clone)]
pub(super) enum Matcher {
    Regex(Regex),
    /// A regex whose candidates must contain an ASCII digit (`openai_key`).
    RegexWithDigit(Regex),
    Literal(String),
    /// A context rule ([`crate::pipeline::secrets`]): the rule's own filter picks the range.
    Context(Regex, crate::pipeline::secrets::Pick),
    /// A context rule that reads its value by hand after each (capture-free) match.
    Scan(Regex, crate::pipeline::secrets::Scan),
}

/// Whether a match must start and/or end at an identifier edge: next to a character that is not
/// an ASCII letter or digit (so `_`, `-`, `.`, `/` are edges, unlike the regex `\b`: a key inside
/// `mcp__db__AKIA…` is found).
#[derive(Clone, Copy, Default)]
pub(super) struct Edges {
    pub(super) leading: bool,
    pub(super) trailing: bool,
}

impl Edges {
    fn hold(self, s: &str, start: usize, end: usize) -> bool {
        let alnum = |b: Option<&u8>| b.is_some_and(u8::is_ascii_alphanumeric);
        let glued_before = self.leading && start > 0 && alnum(s.as_bytes().get(start - 1));
        let glued_after = self.trailing && alnum(s.as_bytes().get(end));
        !glued_before && !glued_after
    }
}

#[derive(Clone)]
pub(super) struct Detector {
    pub(super) name: String,
    /// Lowercase words one of which the text must contain for the detector to run (none: always).
    pub(super) keywords: &'static [&'static str],
    /// Bits of [`super::redact::Redactor`]'s keyword automaton for `keywords` (0: always runs).
    pub(super) keyword_mask: u64,
    /// `<redacted type='NAME'/>`.
    pub(super) marker: String,
    pub(super) matcher: Matcher,
    pub(super) edges: Edges,
}

impl Detector {
    pub(super) fn new(name: String, matcher: Matcher) -> Self {
        Self {
            marker: format!("<redacted type='{name}'/>"),
            name,
            matcher,
            keywords: &[],
            keyword_mask: 0,
            edges: Edges::default(),
        }
    }

    /// The ranges this detector would replace in `s`, in order, never overlapping.
    pub(super) fn ranges(&self, s: &str) -> Vec<(usize, usize)> {
        let mut collect = Collect::new(s, None);
        self.collect(s, &mut collect);
        collect.ranges
    }

    /// Returns the rewritten text and the number of replacements (text is empty when 0); each
    /// replaced secret goes to `found` when given (`memd redact --audit`).
    pub(super) fn apply(&self, s: &str, found: Option<&mut Vec<String>>) -> (String, u64) {
        let mut collect = Collect::new(s, found);
        self.collect(s, &mut collect);
        let ranges: Vec<(usize, usize, &str)> = collect.ranges.iter().map(|&(a, b)| (a, b, self.marker.as_str())).collect();
        (splice(s, &ranges), ranges.len() as u64)
    }

    fn collect(&self, s: &str, collect: &mut Collect<'_>) {
        match &self.matcher {
            Matcher::Literal(literal) => {
                for (start, _) in s.match_indices(literal.as_str()) {
                    collect.replace(start, start + literal.len());
                }
            }
            Matcher::Regex(regex) | Matcher::RegexWithDigit(regex) => {
                let need_digit = matches!(self.matcher, Matcher::RegexWithDigit(_));
                for captures in regex.captures_iter(s) {
                    let (Some(whole), Some(hit)) = (captures.get(0), captures.name("secret").or_else(|| captures.get(0))) else {
                        continue;
                    };
                    if !self.edges.hold(s, whole.start(), whole.end()) {
                        continue;
                    }
                    if !need_digit || hit.as_str().bytes().any(|b| b.is_ascii_digit()) {
                        collect.replace(hit.start(), hit.end());
                    }
                }
            }
            Matcher::Context(regex, pick) => {
                for captures in regex.captures_iter(s) {
                    if let Some((start, end)) = pick(&captures) {
                        collect.replace(start, end);
                    }
                }
            }
            Matcher::Scan(regex, scan) => scan_matches(s, regex, *scan, collect),
        }
    }
}

/// `s` with each range replaced by its marker (`ranges` sorted, not overlapping; "" when none).
pub(super) fn splice(s: &str, ranges: &[(usize, usize, &str)]) -> String {
    if ranges.is_empty() {
        return String::new();
    }
    let (mut out, mut kept_from) = (String::with_capacity(s.len()), 0);
    for &(start, end, marker) in ranges {
        out.push_str(&s[kept_from..start]);
        out.push_str(marker);
        kept_from = end;
    }
    out.push_str(&s[kept_from..]);
    out
}

/// The ranges one detector replaces: each new range must start after the previous one ended.
struct Collect<'a> {
    s: &'a str,
    found: Option<&'a mut Vec<String>>,
    ranges: Vec<(usize, usize)>,
    kept_from: usize,
}

impl<'a> Collect<'a> {
    fn new(s: &'a str, found: Option<&'a mut Vec<String>>) -> Self {
        Self {
            s,
            found,
            ranges: Vec::new(),
            kept_from: 0,
        }
    }

    /// Takes `start..end` unless it is empty or overlaps what was already taken.
    fn replace(&mut self, start: usize, end: usize) -> bool {
        if start < self.kept_from || start >= end {
            return false;
        }
        if let Some(f) = self.found.as_deref_mut() {
            f.push(self.s[start..end].to_owned());
        }
        self.ranges.push((start, end));
        self.kept_from = end;
        true
    }
}

/// [`Matcher::Scan`]: capture-free matches, the range from `scan`, which may also say where the
/// search goes on.
fn scan_matches(s: &str, regex: &Regex, scan: crate::pipeline::secrets::Scan, splice: &mut Collect<'_>) {
    use crate::pipeline::secrets::Scanned;
    let mut at = 0;
    while let Some(m) = regex.find_at(s, at) {
        at = m.end().max(m.start() + 1);
        match scan(s, m) {
            Scanned::Secret(start, end) => {
                if splice.replace(start, end) {
                    at = at.max(end);
                }
            }
            Scanned::Pass => {}
            Scanned::PassTo(to) => at = at.max(to),
        }
        if at > s.len() {
            break;
        }
        while !s.is_char_boundary(at) {
            at += 1;
        }
    }
}
