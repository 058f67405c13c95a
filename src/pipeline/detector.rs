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
}

impl Detector {
    pub(super) fn new(name: String, matcher: Matcher) -> Self {
        Self {
            marker: format!("<redacted type='{name}'/>"),
            name,
            matcher,
            keywords: &[],
            keyword_mask: 0,
        }
    }

    /// Returns the rewritten text and the number of replacements (text is empty when 0); each
    /// replaced secret goes to `found` when given (`memd redact --audit`).
    pub(super) fn apply(&self, s: &str, found: Option<&mut Vec<String>>) -> (String, u64) {
        let mut splice = Splice::new(s, &self.marker, found);
        match &self.matcher {
            Matcher::Literal(literal) => {
                for (start, _) in s.match_indices(literal.as_str()) {
                    splice.replace(start, start + literal.len());
                }
            }
            Matcher::Regex(regex) | Matcher::RegexWithDigit(regex) => {
                let need_digit = matches!(self.matcher, Matcher::RegexWithDigit(_));
                for captures in regex.captures_iter(s) {
                    let Some(hit) = captures.name("secret").or_else(|| captures.get(0)) else {
                        continue;
                    };
                    if !need_digit || hit.as_str().bytes().any(|b| b.is_ascii_digit()) {
                        splice.replace(hit.start(), hit.end());
                    }
                }
            }
            Matcher::Context(regex, pick) => {
                for captures in regex.captures_iter(s) {
                    if let Some((start, end)) = pick(&captures) {
                        splice.replace(start, end);
                    }
                }
            }
            Matcher::Scan(regex, scan) => scan_matches(s, regex, *scan, &mut splice),
        }
        splice.finish()
    }
}

/// The rewritten text being built: each replaced range becomes the marker.
struct Splice<'a> {
    s: &'a str,
    marker: &'a str,
    found: Option<&'a mut Vec<String>>,
    out: String,
    kept_from: usize,
    n: u64,
}

impl<'a> Splice<'a> {
    fn new(s: &'a str, marker: &'a str, found: Option<&'a mut Vec<String>>) -> Self {
        Self {
            s,
            marker,
            found,
            out: String::new(),
            kept_from: 0,
            n: 0,
        }
    }

    /// Replaces `start..end` unless it is empty or overlaps what was already replaced.
    fn replace(&mut self, start: usize, end: usize) -> bool {
        if start < self.kept_from || start >= end {
            return false;
        }
        if let Some(f) = self.found.as_deref_mut() {
            f.push(self.s[start..end].to_owned());
        }
        self.out.push_str(&self.s[self.kept_from..start]);
        self.out.push_str(self.marker);
        self.kept_from = end;
        self.n += 1;
        true
    }

    fn finish(mut self) -> (String, u64) {
        if self.n > 0 {
            self.out.push_str(&self.s[self.kept_from..]);
        }
        (self.out, self.n)
    }
}

/// [`Matcher::Scan`]: capture-free matches, the range from `scan`, which may also say where the
/// search goes on.
fn scan_matches(s: &str, regex: &Regex, scan: crate::pipeline::secrets::Scan, splice: &mut Splice<'_>) {
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
