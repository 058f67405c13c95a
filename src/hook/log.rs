//! `<data>/logs/hook.log`: one line per spooled, rejected or dropped event and per internal
//! problem (time, handler, how long the run had taken, event id, reason; never bodies). Rotates
//! like the worker's log.

use std::io::Write;
use std::time::Instant;

use crate::clock::{iso, now_ms};
use crate::data_dir::DataDir;
use crate::logging::{ROTATE_BYTES, RotatingFile};

/// Appends one line; `started` is when the hook process began (the line says how long the run
/// had taken). Failures are ignored (the hook never fails because of its log).
pub fn hook_log(dir: &DataDir, started: Instant, handler: &str, event_id: Option<&str>, reason: &str) {
    let logs = dir.logs();
    if dir.private_dir(&logs).is_err() {
        return;
    }
    let mut file = RotatingFile::open(logs.join("hook.log"), ROTATE_BYTES);
    let line = format!(
        "{} pid={} handler={} ms={} event_id={} {}\n",
        iso(now_ms()),
        std::process::id(),
        handler,
        started.elapsed().as_millis(),
        event_id.unwrap_or("-"),
        reason.replace('\n', " ")
    );
    let _ = file.write_all(line.as_bytes());
}
