//! Lines of text as every surface shows them (docs/spec/retrieval.md §0): stored text folded to
//! one safe line ([`super::sink`]), cut to a length in characters or UTF-16 units (the host's
//! measure), titles or `Untitled`, token estimates, thousands separators. Pure.

/// Stored text as one safe line ([`super::sink::inline`]): whitespace runs collapsed to one space,
/// trimmed, nothing that could forge structure.
pub fn collapse(s: &str) -> String {
    super::sink::inline(s)
}

/// At most `max` chars: `max − 1` chars + `…` when longer.
pub fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// §0 title rule: collapsed, trimmed, ≤ `max` chars; missing or blank → `Untitled`.
pub fn title_or_untitled(title: Option<&str>, max: usize) -> String {
    let t = collapse(title.unwrap_or_default());
    if t.is_empty() { "Untitled".into() } else { cut(&t, max) }
}

/// Text collapsed to one line and cut to `max` chars.
pub fn one_line(s: &str, max: usize) -> String {
    cut(&collapse(s), max)
}

/// ceil(chars / 4).
pub fn read_tokens_of_chars(chars: usize) -> i64 {
    chars.div_ceil(4) as i64
}

/// `1234567` → `1,234,567`.
pub fn thousands(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if n < 0 {
        out.push('-');
    }
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Length in UTF-16 code units (the host's measure of the 10,000-char caps).
pub fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// Cut to at most `max` UTF-16 units: `max − 1` units + `…` when longer.
pub fn cut_utf16(s: &str, max: usize) -> String {
    if utf16_len(s) <= max {
        return s.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        if used + c.len_utf16() > max.saturating_sub(1) {
            break;
        }
        used += c.len_utf16();
        out.push(c);
    }
    out.push('…');
    out
}
