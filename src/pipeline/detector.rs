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
    pub(super) fn apply(&self, s: &str, mut found: Option<&mut Vec<String>>) -> (String, u64) {
        let marker = &self.marker;
        let (regex, need_digit) = match &self.matcher {
            Matcher::Literal(literal) => {
                let n = s.matches(literal.as_str()).count() as u64;
                if let Some(f) = found.as_deref_mut() {
                    f.extend((0..n).map(|_| literal.clone()));
                }
                return if n == 0 {
                    (String::new(), 0)
                } else {
                    (s.replace(literal.as_str(), marker), n)
                };
            }
            Matcher::Regex(regex) => (regex, false),
            Matcher::RegexWithDigit(regex) => (regex, true),
            Matcher::Context(regex, pick) => return replace_picked(s, regex, *pick, marker, found),
            Matcher::Scan(regex, scan) => return replace_scanned(s, regex, *scan, marker, found),
        };
        let mut out = String::new();
        let mut kept_from = 0;
        let mut n = 0;
        for captures in regex.captures_iter(s) {
            let Some(hit) = captures.name("secret").or_else(|| captures.get(0)) else {
                continue;
            };
            let candidate = hit.as_str();
            if candidate.is_empty() || (need_digit && !candidate.bytes().any(|b| b.is_ascii_digit())) {
                continue;
            }
            if let Some(f) = found.as_deref_mut() {
                f.push(candidate.to_owned());
            }
            out.push_str(&s[kept_from..hit.start()]);
            out.push_str(marker);
            kept_from = hit.end();
            n += 1;
        }
        if n > 0 {
            out.push_str(&s[kept_from..]);
        }
        (out, n)
    }
}

/// Replaces the range `pick` chooses in each match of `regex` (matches it rejects stay).
fn replace_picked(
    s: &str,
    regex: &Regex,
    pick: crate::pipeline::secrets::Pick,
    marker: &str,
    mut found: Option<&mut Vec<String>>,
) -> (String, u64) {
    let mut out = String::new();
    let (mut kept_from, mut n) = (0, 0);
    for captures in regex.captures_iter(s) {
        let Some((start, end)) = pick(&captures) else { continue };
        if start < kept_from || start == end {
            continue;
        }
        if let Some(f) = found.as_deref_mut() {
            f.push(s[start..end].to_owned());
        }
        out.push_str(&s[kept_from..start]);
        out.push_str(marker);
        kept_from = end;
        n += 1;
    }
    if n > 0 {
        out.push_str(&s[kept_from..]);
    }
    (out, n)
}

/// Like [`replace_picked`] for [`Matcher::Scan`]: `find_iter` (no captures), the range from `scan`.
fn replace_scanned(
    s: &str,
    regex: &Regex,
    scan: crate::pipeline::secrets::Scan,
    marker: &str,
    mut found: Option<&mut Vec<String>>,
) -> (String, u64) {
    use crate::pipeline::secrets::Scanned;
    let mut out = String::new();
    let (mut kept_from, mut n, mut at) = (0, 0, 0);
    while at <= s.len() {
        let Some(m) = regex.find_at(s, at) else { break };
        at = if m.end() > m.start() { m.end() } else { m.end() + 1 };
        let (start, end) = match scan(s, m) {
            Scanned::Secret(a, b) => (a, b),
            Scanned::Pass => continue,
            Scanned::PassTo(to) => {
                at = at.max(to);
                while !s.is_char_boundary(at) {
                    at += 1;
                }
                continue;
            }
        };
        if start < kept_from || start == end {
            continue;
        }
        if let Some(f) = found.as_deref_mut() {
            f.push(s[start..end].to_owned());
        }
        out.push_str(&s[kept_from..start]);
        out.push_str(marker);
        kept_from = end;
        at = at.max(end);
        n += 1;
    }
    if n > 0 {
        out.push_str(&s[kept_from..]);
    }
    (out, n)
}
