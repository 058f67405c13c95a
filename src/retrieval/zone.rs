//! Time zones and the time formats of retrieval texts (docs/spec/retrieval.md §0).
//!
//! Renderers take a [`Zone`] as a parameter so tests are deterministic (`Zone::Utc`); the worker
//! uses `Zone::Local` (the tz database through `localtime_r`). Formats: header
//! `2026-08-19 3:25pm PDT`, row `3:25p`, day heading `Aug 19, 2026`, index `2026-08-19 09:05`.

use crate::clock::civil_from_days;

const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/// The zone times are rendered in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Zone {
    Utc,
    /// A fixed offset east of UTC in seconds with its abbreviation (empty → `UTC+02:00` style).
    Fixed {
        offset_s: i64,
        abbrev: String,
    },
    /// The process's local zone (TZ / /etc/localtime).
    Local,
}

/// A local instant broken into fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalTime {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    /// Days since 1970-01-01 in local time: the day-grouping key.
    pub day_number: i64,
    pub abbrev: String,
}

impl Zone {
    /// Offset east of UTC (seconds) and abbreviation at `ms`.
    fn offset_at(&self, ms: i64) -> (i64, String) {
        match self {
            Zone::Utc => (0, "UTC".into()),
            Zone::Fixed { offset_s, abbrev } => (*offset_s, abbrev.clone()),
            Zone::Local => local_offset(ms.div_euclid(1000)),
        }
    }

    pub fn local(&self, ms: i64) -> LocalTime {
        let (offset, abbrev) = self.offset_at(ms);
        let shifted = ms + offset * 1000;
        let day_number = shifted.div_euclid(86_400_000);
        let rem = shifted.rem_euclid(86_400_000);
        let (year, month, day) = civil_from_days(day_number);
        let abbrev = if abbrev.is_empty() || abbrev.starts_with(['+', '-']) {
            let sign = if offset < 0 { '-' } else { '+' };
            let a = offset.abs();
            format!("UTC{sign}{:02}:{:02}", a / 3600, a / 60 % 60)
        } else {
            abbrev
        };
        LocalTime {
            year,
            month,
            day,
            hour: (rem / 3_600_000) as u32,
            minute: (rem / 60_000 % 60) as u32,
            day_number,
            abbrev,
        }
    }

    /// Offset (ms) of this zone at about `ms`, for turning local wall times into instants.
    pub fn offset_ms(&self, ms: i64) -> i64 {
        self.offset_at(ms).0 * 1000
    }
}

#[cfg(unix)]
fn local_offset(secs: i64) -> (i64, String) {
    let t = secs as libc::time_t;
    // SAFETY: `tm` is plain data; localtime_r writes into it and returns null on failure.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: `t` and `tm` outlive the call; localtime_r is the reentrant form.
    let ok = unsafe { !libc::localtime_r(&t, &mut tm).is_null() };
    if !ok {
        return (0, "UTC".into());
    }
    let abbrev = if tm.tm_zone.is_null() {
        String::new()
    } else {
        // SAFETY: tm_zone points at a NUL-terminated string owned by libc's tz state.
        unsafe { std::ffi::CStr::from_ptr(tm.tm_zone) }.to_string_lossy().into_owned()
    };
    (tm.tm_gmtoff as i64, abbrev)
}

#[cfg(not(unix))]
fn local_offset(_secs: i64) -> (i64, String) {
    (0, "UTC".into())
}

fn hour12(h: u32) -> u32 {
    match h % 12 {
        0 => 12,
        x => x,
    }
}

/// `2026-08-19 3:25pm PDT`.
pub fn header_time(zone: &Zone, ms: i64) -> String {
    let t = zone.local(ms);
    let ampm = if t.hour < 12 { "am" } else { "pm" };
    format!(
        "{:04}-{:02}-{:02} {}:{:02}{ampm} {}",
        t.year,
        t.month,
        t.day,
        hour12(t.hour),
        t.minute,
        t.abbrev
    )
}

/// `3:25p` / `10:02a`.
pub fn row_time(zone: &Zone, ms: i64) -> String {
    let t = zone.local(ms);
    let ap = if t.hour < 12 { 'a' } else { 'p' };
    format!("{}:{:02}{ap}", hour12(t.hour), t.minute)
}

/// `Aug 19, 2026`.
pub fn day_heading(zone: &Zone, ms: i64) -> String {
    let t = zone.local(ms);
    format!("{} {}, {}", MONTHS[(t.month as usize).saturating_sub(1) % 12], t.day, t.year)
}

/// `2026-08-19 09:05`.
pub fn index_time(zone: &Zone, ms: i64) -> String {
    let t = zone.local(ms);
    format!("{:04}-{:02}-{:02} {:02}:{:02}", t.year, t.month, t.day, t.hour, t.minute)
}

/// `2026-08-19` (local).
pub fn local_date(zone: &Zone, ms: i64) -> String {
    let t = zone.local(ms);
    format!("{:04}-{:02}-{:02}", t.year, t.month, t.day)
}

/// Days since 1970-01-01 of a civil date (inverse of `civil_from_days`).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Parses epoch ms, an ISO date (local day start, or end with `end_of_day`) or an ISO date-time
/// (`T` or space; `Z` / `±HH:MM` offset, else local time). `None` when malformed.
pub fn parse_time(raw: &str, zone: &Zone, end_of_day: bool) -> Option<i64> {
    let s = raw.trim();
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && s.len() > 8 {
        return s.parse().ok();
    }
    let num = |a: usize, b: usize| -> Option<i64> {
        let part = s.get(a..b)?;
        if part.bytes().all(|c| c.is_ascii_digit()) {
            part.parse().ok()
        } else {
            None
        }
    };
    let (y, m, d) = (num(0, 4)?, num(5, 7)?, num(8, 10)?);
    if s.get(4..5)? != "-" || s.get(7..8)? != "-" || !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let day_ms = days_from_civil(y, m as u32, d as u32) * 86_400_000;
    if s.len() == 10 {
        let local = if end_of_day { day_ms + 86_399_999 } else { day_ms };
        return Some(local - zone.offset_ms(local));
    }
    if !matches!(s.get(10..11)?, "T" | "t" | " ") {
        return None;
    }
    let (h, min) = (num(11, 13)?, num(14, 16)?);
    if s.get(13..14)? != ":" || h > 23 || min > 59 {
        return None;
    }
    let mut rest = s.get(16..)?;
    let mut ms = day_ms + h * 3_600_000 + min * 60_000;
    if let Some(r) = rest.strip_prefix(':') {
        let sec: i64 = r.get(..2)?.parse().ok()?;
        ms += sec * 1000;
        rest = &r[2..];
        if let Some(frac) = rest.strip_prefix('.') {
            let digits: String = frac.chars().take_while(char::is_ascii_digit).collect();
            let padded = format!("{:0<3}", &digits[..digits.len().min(3)]);
            ms += padded.parse::<i64>().ok()?;
            rest = &frac[digits.len()..];
        }
    }
    match rest {
        "" => Some(ms - zone.offset_ms(ms)),
        "Z" | "z" => Some(ms),
        off => {
            let sign = match off.get(..1)? {
                "+" => 1,
                "-" => -1,
                _ => return None,
            };
            let digits: String = off[1..].chars().filter(|c| *c != ':').collect();
            if digits.len() != 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let oh: i64 = digits[..2].parse().ok()?;
            let om: i64 = digits[2..].parse().ok()?;
            Some(ms - sign * (oh * 3_600_000 + om * 60_000))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const AUG19_1525_UTC: i64 = 1_787_153_100_000; // 2026-08-19T15:25:00Z

    #[test]
    fn formats_in_utc() {
        let z = Zone::Utc;
        assert_eq!(header_time(&z, AUG19_1525_UTC), "2026-08-19 3:25pm UTC");
        assert_eq!(row_time(&z, AUG19_1525_UTC), "3:25p");
        assert_eq!(row_time(&z, AUG19_1525_UTC - 15 * 3_600_000), "12:25a");
        assert_eq!(day_heading(&z, AUG19_1525_UTC), "Aug 19, 2026");
        assert_eq!(index_time(&z, AUG19_1525_UTC - 6 * 3_600_000), "2026-08-19 09:25");
    }

    #[test]
    fn fixed_zone_without_abbreviation_uses_offset() {
        let z = Zone::Fixed {
            offset_s: 7200,
            abbrev: "+02".into(),
        };
        assert_eq!(header_time(&z, AUG19_1525_UTC), "2026-08-19 5:25pm UTC+02:00");
        let pdt = Zone::Fixed {
            offset_s: -7 * 3600,
            abbrev: "PDT".into(),
        };
        assert_eq!(header_time(&pdt, AUG19_1525_UTC + 7 * 3_600_000), "2026-08-19 3:25pm PDT");
    }

    #[test]
    fn parses_times() {
        let z = Zone::Utc;
        assert_eq!(parse_time("1787153100000", &z, false), Some(AUG19_1525_UTC));
        assert_eq!(parse_time("2026-08-19T15:25:00Z", &z, false), Some(AUG19_1525_UTC));
        assert_eq!(parse_time("2026-08-19T15:25:00.000Z", &z, false), Some(AUG19_1525_UTC));
        assert_eq!(parse_time("2026-08-19T17:25+02:00", &z, false), Some(AUG19_1525_UTC));
        assert_eq!(parse_time("2026-08-19 15:25", &z, false), Some(AUG19_1525_UTC));
        assert_eq!(parse_time("2026-08-19", &z, false), Some(AUG19_1525_UTC - 55_500_000));
        assert_eq!(parse_time("2026-08-19", &z, true), Some(AUG19_1525_UTC - 55_500_000 + 86_399_999));
        for bad in [
            "",
            "yesterday",
            "2026-13-01",
            "2026-08-19T25:00",
            "2026-08-19Tx",
            "2026-08-19T10:00+2",
        ] {
            assert_eq!(parse_time(bad, &z, false), None, "{bad}");
        }
    }

    #[test]
    fn civil_round_trip() {
        for d in [-1000, 0, 59, 60, 20_000, 20_684] {
            let (y, m, dd) = civil_from_days(d);
            assert_eq!(days_from_civil(y, m, dd), d);
        }
    }
}
