//! A local worker's resource use from /proc (Linux): resident memory and CPU time.

use serde::Serialize;

/// One reading of `/proc/<pid>`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ProcSample {
    pub rss_kb: u64,
    /// User + system CPU seconds since the process started.
    pub cpu_s: f64,
}

/// Reads `VmRSS` from `/proc/<pid>/status` and utime+stime from `/proc/<pid>/stat`.
pub fn sample(pid: u32) -> Option<ProcSample> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    Some(ProcSample {
        rss_kb: rss_kb(&status)?,
        cpu_s: cpu_ticks(&stat)? as f64 / clock_ticks_per_s(),
    })
}

fn rss_kb(status: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|n| n.parse().ok())
}

/// Fields 14 and 15 (utime, stime), counted after the `)` that ends the command name.
fn cpu_ticks(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
}

fn clock_ticks_per_s() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 { t as f64 } else { 100.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_status_and_stat() {
        assert_eq!(rss_kb("Name:\tmemd\nVmRSS:\t   12345 kB\n"), Some(12345));
        let stat = "42 (memd serve) S 1 42 42 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 9 0";
        assert_eq!(cpu_ticks(stat), Some(300));
        assert!(sample(std::process::id()).is_some_and(|s| s.rss_kb > 0));
    }
}
