//! Time: the injectable [`Clock`] the actors and supervised loops read, the wall-clock
//! [`now_ms`] under it, ISO-8601 UTC strings with milliseconds and `Z`, UTC days.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Where an actor's "now" comes from. The worker runs on [`Clock::System`]; a test hands its
/// actors a clock it moves itself ([`Clock::manual`]) or one that follows tokio's paused time
/// ([`Clock::following_tokio`]), so it advances time instead of sleeping.
#[derive(Clone, Debug, Default)]
pub enum Clock {
    /// The wall clock.
    #[default]
    System,
    /// `base_ms` plus the tokio time elapsed since `start` (paused time in tests moves it).
    Tokio { base_ms: i64, start: tokio::time::Instant },
    /// Epoch milliseconds that change only when the holder sets or advances them.
    Manual(Arc<AtomicI64>),
}

impl Clock {
    /// A clock that reads the wall clock once, then follows tokio's clock.
    pub fn following_tokio() -> Self {
        Clock::Tokio {
            base_ms: now_ms(),
            start: tokio::time::Instant::now(),
        }
    }

    /// A clock standing at `epoch_ms` until it is advanced.
    pub fn manual(epoch_ms: i64) -> Self {
        Clock::Manual(Arc::new(AtomicI64::new(epoch_ms)))
    }

    /// Epoch milliseconds now.
    pub fn now(&self) -> i64 {
        match self {
            Clock::System => now_ms(),
            Clock::Tokio { base_ms, start } => base_ms + start.elapsed().as_millis() as i64,
            Clock::Manual(t) => t.load(Ordering::Relaxed),
        }
    }

    /// Moves a manual clock forward (the others follow their own source).
    pub fn advance(&self, by: Duration) {
        if let Clock::Manual(t) = self {
            t.fetch_add(by.as_millis() as i64, Ordering::Relaxed);
        }
    }
}

pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// (year, month 1..=12, day 1..=31) of a count of days since 1970-01-01 (Howard Hinnant's algorithm).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// `2026-08-19T22:25:03.123Z`.
pub fn iso(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    let (h, min, s, milli) = (rem / 3_600_000, rem / 60_000 % 60, rem / 1000 % 60, rem % 1000);
    format!("{y:04}-{m:02}-{d:02}T{h:02}:{min:02}:{s:02}.{milli:03}Z")
}

/// UTC `YYYY-MM-DD`.
pub fn day(ms: i64) -> String {
    let (y, m, d) = civil_from_days(ms.div_euclid(86_400_000));
    format!("{y:04}-{m:02}-{d:02}")
}

/// Days since 1970-01-01 of a civil date (the inverse of [`civil_from_days`]).
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y2 = if m <= 2 { y - 1 } else { y };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// A time as people and files write it → epoch ms: RFC 3339 (`2026-08-19T22:25:03.123Z`, an
/// offset such as `+02:00`, a space for the `T`, no zone meaning UTC, seconds and fraction
/// optional), a plain date `YYYY-MM-DD`, or epoch milliseconds. None for anything else.
pub fn parse_time(s: &str) -> Option<i64> {
    let s = s.trim();
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return s.parse().ok();
    }
    if !s.is_ascii() {
        return None;
    }
    let num = |a: usize, b: usize| {
        s.get(a..b)
            .filter(|x| x.bytes().all(|c| c.is_ascii_digit()))
            .and_then(|x| x.parse::<i64>().ok())
    };
    let (y, m, d) = (num(0, 4)?, num(5, 7)?, num(8, 10)?);
    if s.get(4..5) != Some("-") || s.get(7..8) != Some("-") || !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let mut ms = days_from_civil(y, m, d) * 86_400_000;
    let rest = &s[10..];
    if rest.is_empty() {
        return Some(ms);
    }
    let rest = rest.strip_prefix(['T', 't', ' '])?;
    let (clock, zone) = match rest.find(['Z', 'z', '+', '-']) {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let mut parts = clock.splitn(3, ':');
    let h: i64 = parts.next()?.parse().ok()?;
    let min: i64 = parts.next()?.parse().ok()?;
    let (sec, frac) = match parts.next() {
        Some(sf) => match sf.split_once('.') {
            Some((sec, frac)) => (sec.parse::<i64>().ok()?, frac),
            None => (sf.parse::<i64>().ok()?, ""),
        },
        None => (0, ""),
    };
    if h > 23 || min > 59 || sec > 60 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let milli = format!("{:0<3}", &frac[..frac.len().min(3)]).parse::<i64>().ok()?;
    ms += ((h * 60 + min) * 60 + sec) * 1000 + milli;
    let offset = match zone {
        "" | "Z" | "z" => 0,
        z => {
            let sign = if z.starts_with('-') { -1 } else { 1 };
            let (oh, om) = z[1..].split_once(':').unwrap_or((z.get(1..3)?, z.get(3..).unwrap_or("0")));
            let (oh, om): (i64, i64) = (oh.parse().ok()?, om.parse().ok()?);
            if oh > 23 || om > 59 {
                return None;
            }
            sign * (oh * 60 + om) * 60_000
        }
    };
    Some(ms - offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_parse_as_rfc_3339_a_date_or_epoch_ms() {
        for ms in [0, 1_790_870_711_000, 951_782_400_123] {
            assert_eq!(parse_time(&iso(ms)), Some(ms));
        }
        assert_eq!(parse_time("2026-10-01 16:05:11"), Some(1_790_870_711_000));
        assert_eq!(parse_time("2026-10-01T18:05:11+02:00"), Some(1_790_870_711_000));
        assert_eq!(parse_time("2026-10-01T11:05:11.5-05:00"), Some(1_790_870_711_500));
        assert_eq!(parse_time("2026-10-01"), Some(1_790_812_800_000));
        assert_eq!(parse_time("1790870711000"), Some(1_790_870_711_000));
        for bad in [
            "garbage",
            "",
            "2026-13-01",
            "2026-10-01T25:00",
            "2026-10-01T10:00:00.１２",
            "2026-10-01\n# IMPORTANT",
        ] {
            assert_eq!(parse_time(bad), None, "{bad}");
        }
    }

    #[test]
    fn formats_known_instants() {
        assert_eq!(iso(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso(1_790_870_711_000), "2026-10-01T16:05:11.000Z");
        assert_eq!(iso(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(day(1_790_870_711_000), "2026-10-01");
    }

    #[test]
    fn a_manual_clock_moves_only_when_advanced() {
        let c = Clock::manual(1_000);
        assert_eq!(c.now(), 1_000);
        c.advance(Duration::from_millis(250));
        assert_eq!(c.now(), 1_250);
    }

    #[tokio::test(start_paused = true)]
    async fn a_tokio_clock_follows_paused_time() {
        let c = Clock::following_tokio();
        let before = c.now();
        tokio::time::advance(Duration::from_secs(5)).await;
        assert_eq!(c.now() - before, 5_000);
    }
}
