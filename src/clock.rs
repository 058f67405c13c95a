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

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(c.clone().now(), 1_250);
    }

    #[tokio::test(start_paused = true)]
    async fn a_tokio_clock_follows_paused_time() {
        let c = Clock::following_tokio();
        let before = c.now();
        tokio::time::advance(Duration::from_secs(5)).await;
        assert_eq!(c.now() - before, 5_000);
    }
}
