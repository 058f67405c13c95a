//! The freshness service: anchors queued observations and checks work trees whose HEAD moved,
//! reading and writing its tables through its storage area ([`super::storage::Anchors`]) and
//! running git on blocking threads. One check at a time
//! (a SessionStart and the periodic check never check the same tree twice over). The worker's job
//! table runs anchoring each [`ANCHOR_EVERY`] and the check each [`CHECK_EVERY`], both standing
//! aside while ingest is busy.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::FreshnessError;
use super::anchor_rows::AnchorJob;
use super::git::discover;
use super::storage::Anchors;

/// Observations anchored per step.
const CHUNK: usize = 64;
/// How often the loop looks at the anchor queue.
pub const ANCHOR_EVERY: Duration = Duration::from_secs(1);
/// How often the loop re-checks every work tree.
pub const CHECK_EVERY: Duration = Duration::from_secs(300);
/// How long SessionStart waits for its check (the check goes on after it).
pub const SESSION_START_BUDGET: Duration = Duration::from_millis(300);

pub struct Freshness {
    anchors: Arc<dyn Anchors>,
    /// Requests between arrival and answer (the store's count): the work stands aside for ingest.
    arrivals: Arc<AtomicUsize>,
    checking: tokio::sync::Mutex<()>,
}

impl Freshness {
    pub fn new(anchors: Arc<dyn Anchors>, arrivals: Arc<AtomicUsize>) -> Arc<Self> {
        Arc::new(Self {
            anchors,
            arrivals,
            checking: tokio::sync::Mutex::new(()),
        })
    }

    /// Anchors one chunk of queued observations; answers how many left the queue.
    pub async fn anchor_queued(&self) -> Result<usize, FreshnessError> {
        let jobs: Vec<AnchorJob> = self.anchors.anchors_queued(CHUNK).await?;
        if jobs.is_empty() {
            return Ok(0);
        }
        let for_git = jobs.clone();
        let found = tokio::task::spawn_blocking(move || super::anchor::take(&for_git))
            .await
            .map_err(|_| FreshnessError::Task)?;
        let n = jobs.len();
        self.anchors.write_anchors(jobs, found).await?;
        Ok(n)
    }

    /// Anchors everything queued.
    pub async fn anchor_all(&self) -> Result<(), FreshnessError> {
        while self.anchor_queued().await? > 0 {}
        Ok(())
    }

    /// Checks the work trees holding anchors of `projects` (all when empty) whose HEAD moved;
    /// answers how many observations became stale.
    pub async fn check(&self, projects: Vec<String>, now: i64) -> Result<usize, FreshnessError> {
        let _one = self.checking.lock().await;
        let roots = self.anchors.anchor_roots(projects).await?;
        let mut marked = 0;
        for (root, checked) in roots {
            let Some(repo) = discover(std::path::Path::new(&root)).filter(|r| r.root.to_string_lossy() == root) else {
                continue;
            };
            let head = repo.head();
            if head.is_none() || head == checked {
                continue;
            }
            let head = head.unwrap_or_default();
            let live = self.anchors.live_anchors(root.clone()).await?;
            let h = head.clone();
            let marks = tokio::task::spawn_blocking(move || super::staleness::check(&repo, &h, &live, now))
                .await
                .map_err(|_| FreshnessError::Task)??;
            marked += self.anchors.mark_stale(root, Some(head), marks, now).await?;
        }
        if marked > 0 {
            tracing::info!(marked, "observations marked stale by later commits");
        }
        Ok(marked)
    }

    /// The check SessionStart runs for its project chain: waits at most the budget, and a check
    /// still running then finishes in the background.
    pub async fn before_session_start(self: &Arc<Self>, chain: Vec<String>) {
        let me = self.clone();
        let task = tokio::spawn(async move { me.check(chain, crate::clock::now_ms()).await });
        if let Ok(Ok(Err(e))) = tokio::time::timeout(SESSION_START_BUDGET, task).await {
            tracing::warn!(error = %e, "staleness check at session start failed");
        }
    }

    /// Whether requests are arriving now: the freshness work stands aside for ingest.
    pub fn ingest_busy(&self) -> bool {
        self.arrivals.load(Ordering::Relaxed) > 0
    }
}
