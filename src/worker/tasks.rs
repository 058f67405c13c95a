//! The worker's background loops that are not actors (the spool scanner, the retention schedule,
//! the backup schedule) run under [`supervise`]: a loop that panics or ends before shutdown is
//! logged and started again after a backoff, and counted in status.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio_util::sync::CancellationToken;

use crate::actors::backoff::Backoff;

/// Restart counts of the supervised loops (status: `supervisor.task_restarts`).
#[derive(Default)]
pub struct TaskRestarts(AtomicU64);

impl TaskRestarts {
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// Runs `make()` until `stop` is cancelled; a run that panics or returns early starts again.
pub fn supervise<F, Fut>(name: &'static str, stop: CancellationToken, restarts: Arc<TaskRestarts>, make: F) -> tokio::task::JoinHandle<()>
where
    F: Fn() -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    tokio::spawn(async move {
        let mut n = 0u32;
        loop {
            let run = tokio::spawn(make());
            let abort = run.abort_handle();
            let outcome = tokio::select! {
                r = run => r,
                _ = stop.cancelled() => {
                    abort.abort();
                    return;
                }
            };
            if stop.is_cancelled() {
                return;
            }
            match outcome {
                Err(e) if e.is_panic() => tracing::error!(task = name, "background task panicked; restarting it"),
                _ => tracing::warn!(task = name, "background task ended early; restarting it"),
            }
            restarts.0.fetch_add(1, Ordering::Relaxed);
            tokio::select! {
                _ = tokio::time::sleep(Backoff::LOOP.delay(n)) => {}
                _ = stop.cancelled() => return,
            }
            n = n.saturating_add(1);
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn a_panicking_loop_is_restarted_until_shutdown() {
        let stop = CancellationToken::new();
        let restarts = Arc::new(TaskRestarts::default());
        let runs = Arc::new(AtomicU64::new(0));
        let r = runs.clone();
        let handle = supervise("test", stop.clone(), restarts.clone(), move || {
            let r = r.clone();
            async move {
                if r.fetch_add(1, Ordering::Relaxed) < 2 {
                    panic!("boom");
                }
                std::future::pending::<()>().await;
            }
        });
        tokio::time::sleep(Duration::from_secs(10)).await;
        assert_eq!(runs.load(Ordering::Relaxed), 3);
        assert_eq!(restarts.get(), 2);
        stop.cancel();
        handle.await.unwrap();
    }
}
