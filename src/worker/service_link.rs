//! The worker's side of sd_notify: `READY=1` once readiness would answer 200 (or, if the worker
//! comes up degraded — a damaged database — `READY=1` with the reason in `STATUS=`, since a
//! restart cannot mend it and a degraded worker still serves reads and keeps the spool), then a
//! `STATUS=` line when it changes and `WATCHDOG=1` at half the watchdog interval while the actor
//! tree is alive. A dead tree stops the pings, so systemd restarts the worker. `STOPPING=1` is
//! sent by `memd serve` when the drain begins.

use std::sync::Arc;
use std::time::Duration;

use crate::service::notify::{Notifier, status_line};
use crate::worker::{Phase, WorkerState};

/// How often `STATUS=` is refreshed when no watchdog asks for a faster beat.
const STATUS_EVERY: Duration = Duration::from_secs(5);

pub async fn run(app: Arc<WorkerState>, notifier: Arc<Notifier>, watchdog: Option<Duration>) {
    while app.phase() == Phase::Initializing {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let Ok(svc) = app.services() else { return };
    let degraded = app.unready_reason();
    let status = match &degraded {
        Some(why) => format!("STATUS=degraded: {why}"),
        None => status_line(0, 0),
    };
    notifier.send(&format!("READY=1\n{status}\nMAINPID={}", std::process::id()));
    let beat = watchdog
        .map_or(STATUS_EVERY, |w| w.min(STATUS_EVERY))
        .max(Duration::from_millis(10));
    let mut last_status = status;
    let mut since_status = Duration::ZERO;
    loop {
        tokio::time::sleep(beat).await;
        if app.phase() != Phase::Ready {
            return;
        }
        let dead = svc.handles.tree().dead;
        if watchdog.is_some() && dead.is_none() {
            notifier.send("WATCHDOG=1");
        }
        since_status += beat;
        if since_status >= STATUS_EVERY {
            since_status = Duration::ZERO;
            let status = match app.unready_reason() {
                Some(why) => format!("STATUS=degraded: {why}"),
                None => {
                    let sessions = svc.registry.sessions.len();
                    let queued: i64 = svc.registry.sessions.iter().map(|s| s.queue_depth).sum();
                    status_line(sessions, queued)
                }
            };
            if status != last_status {
                notifier.send(&status);
                last_status = status;
            }
        }
    }
}
