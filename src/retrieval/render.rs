//! Rendering helpers shared by context injection, file context, the search index and the
//! timeline (docs/spec/retrieval.md §0): titles, token estimates, thousands separators, UTF-16 length,
//! and the day-grouped row list with ditto marks. One implementation for every surface.

use super::zone::{Zone, day_heading, row_time};

/// Glyph of session summaries.
pub const SUMMARY_GLYPH: &str = "◎";
/// Glyph of user prompts.
pub const PROMPT_GLYPH: &str = "»";
/// Row titles are cut to this many chars (159 + `…`).
pub const TITLE_MAX: usize = 160;

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

/// One row of a day-grouped list.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub at_ms: i64,
    /// `4411`, `S812`, `P3310`.
    pub id: String,
    pub glyph: String,
    pub title: String,
    /// Appended after the title (` (~84t)`, ` <- anchor`).
    pub suffix: String,
    /// Full rows: bold id and title, then this text on its own line.
    pub detail: Option<String>,
}

/// Renders rows (already in display order) under `### <Mon D, YYYY>` headings, one per local day
/// change; a row whose time equals the previous row's in the same day shows `"`.
pub fn day_grouped(rows: &[Row], zone: &Zone) -> Vec<String> {
    let mut lines = Vec::with_capacity(rows.len() + 4);
    let mut prev: Option<(i64, String)> = None;
    for row in rows {
        let local = zone.local(row.at_ms);
        let time = row_time(zone, row.at_ms);
        let same_day = prev.as_ref().is_some_and(|(d, _)| *d == local.day_number);
        if !same_day {
            lines.push(format!("### {}", day_heading(zone, row.at_ms)));
        }
        let shown = match &prev {
            Some((_, t)) if same_day && *t == time => "\"".to_string(),
            _ => time.clone(),
        };
        match &row.detail {
            Some(detail) => {
                lines.push(format!("**{}** {shown} {} **{}**{}", row.id, row.glyph, row.title, row.suffix));
                lines.push(detail.clone());
            }
            None => lines.push(format!("{} {shown} {} {}{}", row.id, row.glyph, row.title, row.suffix)),
        }
        prev = Some((local.day_number, time));
    }
    lines
}

/// The shortest a row can render (ditto form, no heading), in UTF-16 units incl. its newline.
pub fn min_row_len(row: &Row) -> usize {
    let base = utf16_len(&row.id) + utf16_len(&row.glyph) + utf16_len(&row.title) + utf16_len(&row.suffix) + 4;
    match &row.detail {
        Some(d) => base + 4 + utf16_len(d) + 1,
        None => base,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(at: i64, id: &str) -> Row {
        Row {
            at_ms: at,
            id: id.into(),
            glyph: "○".into(),
            title: format!("t{id}"),
            suffix: String::new(),
            detail: None,
        }
    }

    #[test]
    fn ditto_and_day_headings() {
        // K1: 09:14, 09:14 and 14:40 on one day; then the next day.
        let d = 1_787_097_600_000; // 2026-08-19T00:00Z
        let rows = [
            row(d + 9 * 3_600_000 + 14 * 60_000, "1"),
            row(d + 9 * 3_600_000 + 14 * 60_000 + 30_000, "2"),
            row(d + 14 * 3_600_000 + 40 * 60_000, "3"),
            row(d + 86_400_000 + 14 * 3_600_000 + 40 * 60_000, "4"),
        ];
        assert_eq!(
            day_grouped(&rows, &Zone::Utc),
            vec![
                "### Aug 19, 2026",
                "1 9:14a ○ t1",
                "2 \" ○ t2",
                "3 2:40p ○ t3",
                "### Aug 20, 2026",
                "4 2:40p ○ t4"
            ]
        );
    }

    #[test]
    fn titles_and_numbers() {
        assert_eq!(title_or_untitled(Some("  a \n\t b  "), 160), "a b");
        assert_eq!(title_or_untitled(None, 160), "Untitled");
        assert_eq!(title_or_untitled(Some(&"x".repeat(200)), 160).chars().count(), 160);
        assert_eq!(thousands(412_330), "412,330");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(read_tokens_of_chars(5), 2);
        assert_eq!(utf16_len("a😀"), 3);
        assert_eq!(cut_utf16("abcdef", 4), "abc…");
    }
}
