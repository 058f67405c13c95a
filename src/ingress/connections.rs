//! The accept loop: HTTP/1.1 connections with a header-read timeout, an idle keep-alive timeout
//! and a cap on open connections below the process's fd limit. When the cap is reached the oldest
//! idle connection (no request in flight: kept alive, or still trickling its headers) is closed to
//! make room, so a local process holding sockets open cannot lock out `/api/health`, ingest or the
//! hooks. Body reads have their own timeout ([`super::checks::json_body`]).
//!
//! Shutdown: stop accepting, let in-flight requests finish (idle connections close at once), return
//! when every connection is gone.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// The limits, from settings (`MEMD_HTTP_*`).
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    pub max_connections: usize,
    pub header_timeout: Duration,
    pub idle_timeout: Duration,
}

/// One open connection, as the loop sees it.
struct Conn {
    opened: Instant,
    in_flight: AtomicUsize,
    /// Milliseconds since `opened` of the last request start or end.
    last_active_ms: AtomicI64,
    shed: CancellationToken,
}

impl Conn {
    fn idle_for(&self) -> Duration {
        let now = self.opened.elapsed().as_millis() as i64;
        Duration::from_millis((now - self.last_active_ms.load(Ordering::Relaxed)).max(0) as u64)
    }
    fn touch(&self) {
        self.last_active_ms
            .store(self.opened.elapsed().as_millis() as i64, Ordering::Relaxed);
    }
}

/// Open connections, and the counters status shows.
#[derive(Default)]
pub struct ConnectionTable {
    open: Mutex<HashMap<u64, Arc<Conn>>>,
    next: AtomicU64,
    pub shed_total: AtomicU64,
    pub refused_total: AtomicU64,
}

impl ConnectionTable {
    pub fn open_count(&self) -> usize {
        self.open.lock().map(|m| m.len()).unwrap_or(0)
    }

    /// Closes the idle connection that has been open longest; false when every one is busy.
    fn shed_oldest_idle(&self) -> bool {
        let Ok(map) = self.open.lock() else { return false };
        let victim = map
            .values()
            .filter(|c| c.in_flight.load(Ordering::Relaxed) == 0 && !c.shed.is_cancelled())
            .min_by_key(|c| c.opened);
        match victim {
            Some(c) => {
                c.shed.cancel();
                self.shed_total.fetch_add(1, Ordering::Relaxed);
                true
            }
            None => false,
        }
    }
}

/// Holds a request in flight on its connection until dropped.
struct InFlight(Arc<Conn>);

impl InFlight {
    fn new(conn: &Arc<Conn>) -> Self {
        conn.in_flight.fetch_add(1, Ordering::Relaxed);
        conn.touch();
        Self(conn.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.touch();
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Raises the soft `RLIMIT_NOFILE` to the hard limit and returns the soft limit in effect.
pub fn raise_fd_limit() -> u64 {
    // SAFETY: getrlimit/setrlimit with a valid, owned rlimit struct.
    unsafe {
        let mut lim: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return 1024;
        }
        if lim.rlim_cur < lim.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: lim.rlim_max,
                rlim_max: lim.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                lim.rlim_cur = lim.rlim_max;
            }
        }
        lim.rlim_cur as u64
    }
}

/// The connection cap: the setting, but always 128 descriptors below the fd limit (the store, the
/// logs, the spool and the listener need theirs).
pub fn effective_cap(setting: usize, fd_limit: u64) -> usize {
    setting.min(fd_limit.saturating_sub(128) as usize).max(16)
}

/// Serves `router` on `listener` until `shutdown`, then drains.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ConnectionLimits,
    table: Arc<ConnectionTable>,
    shutdown: CancellationToken,
) {
    let service = TowerToHyperService::new(router);
    let tasks = tokio_util::task::TaskTracker::new();
    let mut accept_errors = 0u64;
    loop {
        let accepted = tokio::select! {
            _ = shutdown.cancelled() => break,
            a = listener.accept() => a,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) => {
                accept_errors += 1;
                if accept_errors.is_power_of_two() {
                    tracing::warn!(error = %e, count = accept_errors, "accept failed");
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
        };
        if table.open_count() >= limits.max_connections && !table.shed_oldest_idle() {
            // Every connection is busy with a request: refuse this one rather than exhaust fds.
            table.refused_total.fetch_add(1, Ordering::Relaxed);
            drop(stream);
            continue;
        }
        let id = table.next.fetch_add(1, Ordering::Relaxed);
        let conn = Arc::new(Conn {
            opened: Instant::now(),
            in_flight: AtomicUsize::new(0),
            last_active_ms: AtomicI64::new(0),
            shed: CancellationToken::new(),
        });
        if let Ok(mut map) = table.open.lock() {
            map.insert(id, conn.clone());
        }
        let (svc, table, stop) = (service.clone(), table.clone(), shutdown.clone());
        tasks.spawn(async move {
            serve_one(stream, svc, &conn, limits, stop).await;
            if let Ok(mut map) = table.open.lock() {
                map.remove(&id);
            }
        });
    }
    tasks.close();
    tasks.wait().await;
}

async fn serve_one(
    stream: tokio::net::TcpStream,
    svc: TowerToHyperService<Router>,
    conn: &Arc<Conn>,
    limits: ConnectionLimits,
    stop: CancellationToken,
) {
    let _ = stream.set_nodelay(true);
    let counted = conn.clone();
    let handler = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
        let guard = InFlight::new(&counted);
        let call = hyper::service::Service::call(&svc, req);
        async move {
            let out = call.await;
            drop(guard);
            out
        }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .keep_alive(true);
    let http = builder.serve_connection(TokioIo::new(stream), handler);
    tokio::pin!(http);
    let mut draining = false;
    loop {
        let check = limits.idle_timeout.saturating_sub(conn.idle_for()).max(Duration::from_millis(50));
        tokio::select! {
            _ = http.as_mut() => return,
            _ = conn.shed.cancelled() => return,
            _ = stop.cancelled(), if !draining => {
                http.as_mut().graceful_shutdown();
                draining = true;
            }
            _ = tokio::time::sleep(check) => {
                if conn.in_flight.load(Ordering::Relaxed) == 0 && conn.idle_for() >= limits.idle_timeout {
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_stays_below_the_fd_limit() {
        assert_eq!(effective_cap(512, 1024), 512);
        assert_eq!(effective_cap(5000, 1024), 896);
        assert_eq!(effective_cap(512, 100), 16);
    }

    #[test]
    fn shedding_takes_the_oldest_idle_connection() {
        let t = ConnectionTable::default();
        let mk = |busy: usize| {
            Arc::new(Conn {
                opened: Instant::now(),
                in_flight: AtomicUsize::new(busy),
                last_active_ms: AtomicI64::new(0),
                shed: CancellationToken::new(),
            })
        };
        let (busy_old, idle_old, idle_new) = (mk(1), mk(0), mk(0));
        std::thread::sleep(Duration::from_millis(2));
        let idle_new = Arc::new(Conn {
            opened: Instant::now(),
            ..Arc::try_unwrap(idle_new).ok().unwrap()
        });
        {
            let mut m = t.open.lock().unwrap();
            m.insert(1, busy_old.clone());
            m.insert(2, idle_old.clone());
            m.insert(3, idle_new.clone());
        }
        assert!(t.shed_oldest_idle());
        assert!(idle_old.shed.is_cancelled() && !busy_old.shed.is_cancelled() && !idle_new.shed.is_cancelled());
        assert!(t.shed_oldest_idle());
        assert!(idle_new.shed.is_cancelled());
        assert!(!t.shed_oldest_idle(), "the busy one is never shed");
    }
}
