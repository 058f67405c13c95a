//! ACT-R reinforcement ranking of context candidates (docs/spec/retrieval.md §1.2).
//!
//! `score = ln(1 + age_c^(−d) + ALPHA · Σ_r age_r^(−d))`, d = 0.5, ages in whole days (≥ 1).
//! The newest ceil(N/4) candidates are kept by recency; the rest of the N slots go by score.

use super::zone::days_from_civil;

const DECAY: f64 = 0.5;
const DAY_MS: i64 = 86_400_000;

/// What ranking needs of a candidate.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub id: i64,
    pub created_at_epoch: i64,
    /// UTC days `YYYY-MM-DD` on which the record was seen again.
    pub reinforcement_dates: Vec<String>,
}

fn utc_day_number(date: &str) -> Option<i64> {
    let mut it = date.trim().splitn(3, '-');
    let y = it.next()?.parse().ok()?;
    let m = it.next()?.parse().ok()?;
    let d = it.next()?.get(..2)?.parse().ok()?;
    Some(days_from_civil(y, m, d))
}

/// The activation score of one candidate at `now_ms`.
pub fn score(c: &Candidate, now_ms: i64, alpha: f64) -> f64 {
    let age_c = ((now_ms - c.created_at_epoch) / DAY_MS).max(1) as f64;
    let today = now_ms.div_euclid(DAY_MS);
    let reinforced: f64 = c
        .reinforcement_dates
        .iter()
        .filter_map(|d| utc_day_number(d))
        .map(|day| ((today - day).max(1) as f64).powf(-DECAY))
        .sum();
    (1.0 + age_c.powf(-DECAY) + alpha * reinforced).ln()
}

/// Picks N ids from a pool ordered newest first (`created_at_epoch DESC, id DESC`).
/// With `alpha` 0 this is the N newest.
pub fn select(pool: &[Candidate], n: usize, now_ms: i64, alpha: f64) -> Vec<i64> {
    if alpha <= 0.0 || pool.len() <= n {
        return pool.iter().take(n).map(|c| c.id).collect();
    }
    let head = n.div_ceil(4);
    let mut chosen: Vec<i64> = pool.iter().take(head).map(|c| c.id).collect();
    let mut rest: Vec<(&Candidate, f64)> = pool.iter().skip(head).map(|c| (c, score(c, now_ms, alpha))).collect();
    rest.sort_by(|a, b| {
        b.1.total_cmp(&a.1)
            .then(b.0.created_at_epoch.cmp(&a.0.created_at_epoch))
            .then(b.0.id.cmp(&a.0.id))
    });
    chosen.extend(rest.into_iter().take(n - head).map(|(c, _)| c.id));
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_787_153_100_000;

    fn cand(id: i64, days_old: i64, reinforced: &[&str]) -> Candidate {
        Candidate {
            id,
            created_at_epoch: NOW - days_old * DAY_MS,
            reinforcement_dates: reinforced.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn calibration() {
        // The spec rounds to 4 places; ln(1 + 3^-0.5) = 0.455746 is listed as 0.4558, so compare within 1e-4.
        let near = |x: f64, want: f64| assert!((x - want).abs() <= 1e-4, "{x} vs {want}");
        near(score(&cand(1, 1, &[]), NOW, 0.0), std::f64::consts::LN_2);
        near(score(&cand(1, 2, &[]), NOW, 0.0), 0.5348);
        near(score(&cand(1, 3, &[]), NOW, 0.0), 0.4558);
        near(score(&cand(1, 4, &[]), NOW, 0.0), 0.4055);
        // NOW is 2026-08-19; yesterday = 2026-08-18.
        near(score(&cand(1, 90, &["2026-08-18"]), NOW, 1.0), 0.7445);
        near(score(&cand(1, 90, &["2026-08-18"]), NOW, 0.0), 0.1002);
    }

    #[test]
    fn k4_alpha_zero_takes_newest() {
        let pool: Vec<_> = (0..10).map(|i| cand(100 - i, i, &[])).collect();
        assert_eq!(select(&pool, 4, NOW, 0.0), vec![100, 99, 98, 97]);
    }

    #[test]
    fn k5_reinforced_old_row_wins_a_slot() {
        let pool = vec![
            cand(1, 0, &[]),
            cand(2, 2, &[]),
            cand(3, 3, &[]),
            cand(4, 4, &[]),
            cand(5, 90, &["2026-08-18"]),
        ];
        assert_eq!(select(&pool, 4, NOW, 1.0), vec![1, 5, 2, 3]);
    }
}
