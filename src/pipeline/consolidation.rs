//! Pure rules of the consolidation pass (issue 38): the key under which two observations are
//! near-duplicates (the same words of title and narrative, case, punctuation and spacing aside),
//! and relative dates ("yesterday", "today", "last week", "3 days ago") rewritten to absolute ones
//! from the day the text was written.

use std::collections::BTreeSet;

/// Case, punctuation and spacing aside, the words of a title and narrative.
pub fn duplicate_key(title: Option<&str>, narrative: Option<&str>) -> String {
    let text = format!("{} {}", title.unwrap_or(""), narrative.unwrap_or(""));
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Jaccard similarity of the word sets of two keys.
pub fn similarity(a: &str, b: &str) -> f64 {
    let (x, y): (BTreeSet<&str>, BTreeSet<&str>) = (a.split(' ').collect(), b.split(' ').collect());
    let union = x.union(&y).count();
    if union == 0 {
        return 1.0;
    }
    x.intersection(&y).count() as f64 / union as f64
}

/// Word sets at least this similar (same project, type and title) are near-duplicates.
pub const NEAR_DUPLICATE: f64 = 0.9;

const DAY_MS: i64 = 86_400_000;

/// Relative phrases and the day offset each names.
const PHRASES: &[(&str, i64)] = &[
    ("the day before yesterday", -2),
    ("day before yesterday", -2),
    ("the day after tomorrow", 2),
    ("yesterday", -1),
    ("today", 0),
    ("tonight", 0),
    ("this morning", 0),
    ("this afternoon", 0),
    ("this evening", 0),
    ("tomorrow", 1),
    ("last week", -7),
    ("next week", 7),
];

fn phrase_for(offset: i64, written_ms: i64, week: bool) -> String {
    let day = crate::clock::day(written_ms + offset * DAY_MS);
    if week { format!("the week of {day}") } else { format!("on {day}") }
}

static RELATIVE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    let alts: Vec<String> = PHRASES.iter().map(|(p, _)| regex::escape(p)).collect();
    regex::Regex::new(&format!(r"(?i)\b(?:({})|(\d{{1,3}}) days ago)\b", alts.join("|"))).expect("valid pattern")
});

/// `text` with every relative date rewritten from `written_ms` (None: nothing to rewrite).
/// "on 2026-12-03" replaces "yesterday"; "the week of 2026-11-27" replaces "last week"; "N days
/// ago" becomes "on <day>". Text already absolute is left as it is, so a second run changes nothing.
pub fn absolute_dates(text: &str, written_ms: i64) -> Option<String> {
    if !RELATIVE.is_match(text) {
        return None;
    }
    let out = RELATIVE.replace_all(text, |c: &regex::Captures| {
        if let Some(p) = c.get(1) {
            let p = p.as_str().to_lowercase();
            let offset = PHRASES.iter().find(|(x, _)| *x == p).map_or(0, |(_, o)| *o);
            phrase_for(offset, written_ms, p.ends_with("week"))
        } else {
            let n: i64 = c[2].parse().unwrap_or(0);
            phrase_for(-n, written_ms, false)
        }
    });
    Some(out.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    // 2026-12-04T10:00:00Z
    const WRITTEN: i64 = 1_796_378_400_000;

    #[test]
    fn relative_dates_become_absolute_once() {
        let t = absolute_dates("Fixed yesterday; Today we ship. Deployed 3 days ago.", WRITTEN).unwrap();
        assert_eq!(t, "Fixed on 2026-12-03; on 2026-12-04 we ship. Deployed on 2026-12-01.");
        assert_eq!(absolute_dates(&t, WRITTEN), None, "a second run changes nothing");
        assert_eq!(
            absolute_dates("Reviewed last week", WRITTEN).as_deref(),
            Some("Reviewed the week of 2026-11-27")
        );
    }

    #[test]
    fn words_that_only_contain_a_phrase_are_left_alone() {
        assert_eq!(absolute_dates("todays_total and yesterdays", WRITTEN), None);
        assert_eq!(absolute_dates("no dates here", WRITTEN), None);
    }

    #[test]
    fn duplicates_differ_only_in_case_punctuation_and_spacing() {
        let a = duplicate_key(Some("Prices are cents"), Some("Use integer cents."));
        let b = duplicate_key(Some("prices are  cents"), Some("use integer cents"));
        assert_eq!(a, b);
        assert!(similarity(&a, &duplicate_key(Some("Prices are dollars"), None)) < NEAR_DUPLICATE);
    }
}
