//! Rendering helpers shared by context injection, file context, the search index and the
//! timeline (docs/spec/retrieval.md §0): titles, token estimates, thousands separators, UTF-16 length,
//! and the day-grouped row list with ditto marks. One implementation for every surface.

use super::zone::{Zone, day_heading, row_time};
pub use crate::text::lines::{collapse, cut, cut_utf16, one_line, read_tokens_of_chars, thousands, title_or_untitled, utf16_len};

/// Glyph of session summaries.
pub const SUMMARY_GLYPH: &str = "◎";
/// Glyph of user prompts.
pub const PROMPT_GLYPH: &str = "»";
/// Row titles are cut to this many chars (159 + `…`).
pub const TITLE_MAX: usize = 160;

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
