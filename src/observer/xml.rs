//! Observer replies: the classifier (`docs/spec/pipeline.md` §11) and the tolerant parser (§12).
//!
//! Why a hand-written scanner instead of quick-xml events: the replies are model output, and the
//! tolerant rules are exactly the cases a conforming XML reader rejects or reports as errors —
//! unclosed elements that must run to the next root (cut-off replies), stray `&` and `<` in
//! text, close tags that never match, inner markup that must be kept verbatim as text, prose and
//! code fences around the XML. quick-xml stops at the first mismatch (or needs its checks turned
//! off and then still splits text around entities), after which we would have to re-scan anyway.
//! The scanner in `observer_xml_scan.rs` instead turns the reply into a flat list of tags in one
//! linear pass (CDATA and comments skipped, every search bounded by the next `<`), and the rules
//! of §12 are applied on that list by tag index. No input can make it panic or go quadratic;
//! the hostile-input tests pin that down.

mod classify;
mod scan;

pub use classify::{ProseKind, ReplyClass, classify_prose, classify_reply};
use scan::{Doc, TagKind, attribute, decode, root_extents};

/// One parsed observation, normalised per §12 rules 4–7 (bounds and file evidence come later): the
/// observer's [`ObservationDraft`]. Its type may be outside the mode (unknown types are kept, the
/// caller logs them).
pub use crate::observer::types::ObservationDraft as ParsedObservation;
/// A parsed summary; valid only when one of the first five fields is set (rule 9).
pub use crate::observer::types::SummaryDraft as ParsedSummary;

/// Result of [`parse_reply`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParsedReply {
    /// At least one observation survived rule 8.
    Observations(Vec<ParsedObservation>),
    /// The first root was a valid summary.
    Summary(ParsedSummary),
    /// `<skip_summary reason="…"/>` was the first root.
    Skip { reason: Option<String> },
    /// XML with nothing usable: no root, no surviving observation, or an invalid summary.
    EmptyXml,
}

/// Type used when the caller passes no mode types (the `code` mode's first type).
pub const FALLBACK_DEFAULT_TYPE: &str = "bugfix";

/// Rule 1: the inside of a whole-reply code fence, else the reply itself.
pub fn strip_whole_fence(reply: &str) -> &str {
    let trimmed = reply.trim();
    let Some(after) = trimmed.strip_prefix("```") else {
        return reply;
    };
    let lang_len = after
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'+' | b'.'))
        .count();
    let opening = &after[lang_len..];
    let Some(body) = opening.strip_prefix("\r\n").or_else(|| opening.strip_prefix('\n')) else {
        return reply;
    };
    if body == "```" {
        return "";
    }
    match body.strip_suffix("\n```") {
        Some(inner) => inner.strip_suffix('\r').unwrap_or(inner),
        None => reply,
    }
}

/// Rule 6: trimmed, lowercased, whitespace and `-` → `_`; empty → `default_type`.
pub fn normalize_type(raw: Option<&str>, default_type: &str) -> String {
    let t: String = raw
        .unwrap_or("")
        .trim()
        .to_lowercase()
        .chars()
        .map(|c| if c.is_whitespace() || c == '-' { '_' } else { c })
        .collect();
    if t.is_empty() { default_type.to_owned() } else { t }
}

/// Rule 7: each cut at the first `:`, trimmed, lowercased; empties, duplicates and values equal
/// to the (normalised) type dropped, order kept. Concepts outside the mode are kept.
pub fn normalize_concepts<S: AsRef<str>>(raw: &[S], obs_type: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for item in raw {
        let item = item.as_ref();
        let head = item.split(':').next().unwrap_or("").trim().to_lowercase();
        if !head.is_empty() && head != obs_type && !out.contains(&head) {
            out.push(head);
        }
    }
    out
}

/// Parses an observer reply with the tolerant rules of §12. `mode_types` are the mode's type ids
/// in order; the first is the default type (rule 6).
pub fn parse_reply(reply: &str, mode_types: &[&str]) -> ParsedReply {
    let default_type = mode_types.first().copied().unwrap_or(FALLBACK_DEFAULT_TYPE);
    let doc = Doc::scan(strip_whole_fence(reply));
    let roots = root_extents(&doc);
    let Some(&(first, _)) = roots.first() else {
        return ParsedReply::EmptyXml;
    };
    match doc.name(first).to_ascii_lowercase().as_str() {
        "skip_summary" => ParsedReply::Skip {
            reason: attribute(doc.attributes(first), "reason").and_then(non_empty),
        },
        "summary" => {
            let s = summary(&doc, first + 1, roots[0].1);
            let valid = [&s.request, &s.investigated, &s.learned, &s.completed, &s.next_steps]
                .iter()
                .any(|f| f.is_some());
            if valid { ParsedReply::Summary(s) } else { ParsedReply::EmptyXml }
        }
        _ => {
            let observations: Vec<ParsedObservation> = roots
                .iter()
                .filter(|&&(open, _)| doc.name(open).eq_ignore_ascii_case("observation"))
                .map(|&(open, end)| observation(&doc, open + 1, end, default_type))
                .filter(|o| o.title.is_some() || o.narrative.is_some() || !o.facts.is_empty() || !o.concepts.is_empty())
                .collect();
            if observations.is_empty() {
                ParsedReply::EmptyXml
            } else {
                ParsedReply::Observations(observations)
            }
        }
    }
}

fn non_empty(s: String) -> Option<String> {
    let t = s.trim();
    (!t.is_empty()).then(|| t.to_owned())
}

/// Rule 4: first complete `<name>…</name>` in the tag range, decoded and trimmed.
fn scalar(doc: &Doc<'_>, lo: usize, hi: usize, name: &str) -> Option<String> {
    let (open, close) = doc.element(lo, hi, name)?;
    non_empty(decode(doc.inner(open, close)))
}

/// Complete `<item>…</item>` texts in the tag range, skipping the tag range `exclude`.
fn items(doc: &Doc<'_>, lo: usize, hi: usize, item: &str, exclude: Option<(usize, usize)>) -> Vec<String> {
    let mut out = Vec::new();
    let mut k = lo;
    while k < hi {
        if exclude.is_some_and(|(a, b)| (a..=b).contains(&k)) || !doc.is(k, TagKind::Open, item) {
            k += 1;
            continue;
        }
        let Some(close) = (k + 1..hi).find(|&c| doc.is(c, TagKind::Close, item)) else {
            break; // unclosed: no later item can close either
        };
        match exclude {
            // The close belongs to the excluded wrapper: this item is unclosed.
            Some((a, b)) if (a..=b).contains(&close) => k = b + 1,
            _ => {
                out.extend(non_empty(decode(doc.inner(k, close))));
                k = close + 1;
            }
        }
    }
    out
}

/// Rule 5 for one list; `wrapper` is the list's element when present and closed.
fn list(doc: &Doc<'_>, lo: usize, hi: usize, wrapper: Option<(usize, usize)>, item: &str, exclude: Option<(usize, usize)>) -> Vec<String> {
    let raw = match wrapper {
        Some((open, close)) if (open + 1..close).any(|k| doc.is(k, TagKind::Open, item)) => items(doc, open + 1, close, item, None),
        Some((open, close)) => decode(doc.inner(open, close))
            .lines()
            .map(|line| {
                let line = line.trim();
                ["- ", "* ", "• "]
                    .iter()
                    .find_map(|bullet| line.strip_prefix(bullet))
                    .unwrap_or(line)
                    .trim()
                    .to_owned()
            })
            .collect(),
        None => items(doc, lo, hi, item, exclude),
    };
    let mut out: Vec<String> = Vec::with_capacity(raw.len());
    for value in raw {
        if !value.is_empty() && !out.contains(&value) {
            out.push(value);
        }
    }
    out
}

fn observation(doc: &Doc<'_>, lo: usize, hi: usize, default_type: &str) -> ParsedObservation {
    let obs_type = normalize_type(scalar(doc, lo, hi, "type").as_deref(), default_type);
    let facts = list(doc, lo, hi, doc.element(lo, hi, "facts"), "fact", None);
    let concepts = list(doc, lo, hi, doc.element(lo, hi, "concepts"), "concept", None);
    let read_wrapper = doc.element(lo, hi, "files_read");
    let modified_wrapper = doc.element(lo, hi, "files_modified");
    // Bare <file> items (wrapper missing) go to the list whose wrapper is missing; when both are
    // missing they cannot be attributed and count as read (modified files come from evidence).
    let files_read = list(doc, lo, hi, read_wrapper, "file", modified_wrapper);
    let files_modified = match (modified_wrapper, read_wrapper) {
        (None, None) => Vec::new(),
        (wrapper, exclude) => list(doc, lo, hi, wrapper, "file", exclude),
    };
    let relations = list(doc, lo, hi, doc.element(lo, hi, "relations"), "relation", None);
    ParsedObservation {
        relations,
        concepts: normalize_concepts(&concepts, &obs_type),
        obs_type,
        title: scalar(doc, lo, hi, "title"),
        subtitle: scalar(doc, lo, hi, "subtitle"),
        facts,
        narrative: scalar(doc, lo, hi, "narrative"),
        files_read,
        files_modified,
    }
}

fn summary(doc: &Doc<'_>, lo: usize, hi: usize) -> ParsedSummary {
    ParsedSummary {
        request: scalar(doc, lo, hi, "request"),
        investigated: scalar(doc, lo, hi, "investigated"),
        learned: scalar(doc, lo, hi, "learned"),
        completed: scalar(doc, lo, hi, "completed"),
        next_steps: scalar(doc, lo, hi, "next_steps"),
        notes: scalar(doc, lo, hi, "notes"),
    }
}

#[cfg(test)]
mod tests;
