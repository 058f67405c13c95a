//! [`EmbedService`]: the shared, lazily loaded embedder used by the sync actors and by search.
//!
//! The model loads on first use (never at start-up), on a blocking thread; inference runs there too,
//! one batch at a time (a mutex), so no actor or request handler stalls on the CPU-bound work.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use super::VectorError;
use super::embedder::model_present;
use super::encoder::Encoder;
use crate::config::EncoderKind;

/// Texts per forward pass (spec: ≤ 64).
pub const MAX_BATCH: usize = 64;

enum Slot {
    NotLoaded,
    Ready(Arc<Encoder>),
    Failed(String),
}

pub struct EmbedService {
    dir: PathBuf,
    kind: EncoderKind,
    /// The transformer's dense kernel (`MEMD_EMBED_KERNEL`).
    kernel: memd_bert::Kernel,
    slot: Mutex<Slot>,
    /// A load holds the slot now (the transformer takes a second or two, a static table's first
    /// distillation a minute or more).
    loading: AtomicBool,
    /// Serialises batches (two cores: parallel batches only thrash); a search query does not
    /// take it.
    run: Arc<Mutex<()>>,
    /// Forward passes and tokens not yet added to `token_usage` (the sync records them).
    unrecorded: Mutex<Usage>,
    /// Vectors of recent queries.
    queries: Mutex<super::query_cache::QueryCache>,
}

/// Embedding work to account for: forward passes (`calls`) and real tokens read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub calls: u64,
    pub tokens: u64,
}

impl std::fmt::Debug for EmbedService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbedService")
            .field("dir", &self.dir)
            .field("kind", &self.kind)
            .field("kernel", &self.kernel)
            .finish()
    }
}

/// The model's matrix work runs on rayon's pool: its threads get nice 10 so that embedding yields
/// the CPU to ingest and queries (ingest must not slow down because of vectors).
fn lower_pool_priority() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let built = rayon::ThreadPoolBuilder::new()
            .start_handler(|_| {
                // SAFETY: setpriority on the calling thread (who = 0) has no memory-safety preconditions.
                unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, 10) };
            })
            .build_global();
        if built.is_err() {
            tracing::debug!("rayon pool already built; embedding runs at normal priority");
        }
    });
}

impl EmbedService {
    pub fn new(dir: PathBuf, kind: EncoderKind, kernel: memd_bert::Kernel) -> Arc<Self> {
        lower_pool_priority();
        Arc::new(Self {
            dir,
            kind,
            kernel,
            slot: Mutex::new(Slot::NotLoaded),
            loading: AtomicBool::new(false),
            run: Arc::new(Mutex::new(())),
            unrecorded: Mutex::new(Usage::default()),
            queries: Mutex::new(Default::default()),
        })
    }

    /// The name recorded with the vectors this service makes.
    pub fn model_name(&self) -> &'static str {
        self.kind.model_name()
    }

    /// The model files are in place (checked on every call: `memd models install` may add them later).
    pub fn model_present(&self) -> bool {
        model_present(&self.dir)
    }

    /// The model failed to load (status shows the reason). Never waits: while a load holds the
    /// slot (a static table's distillation takes about a minute) there is no error yet.
    pub fn load_error(&self) -> Option<String> {
        match &*self.slot.try_lock().ok()? {
            Slot::Failed(e) => Some(e.clone()),
            _ => None,
        }
    }

    /// True once the model is in memory. Never waits: false while it is loading.
    pub fn loaded(&self) -> bool {
        matches!(self.slot.try_lock().map(|s| matches!(&*s, Slot::Ready(_))), Ok(true))
    }

    /// True while the model is being loaded (status: a search meanwhile answers keyword-only).
    pub fn loading(&self) -> bool {
        self.loading.load(Ordering::Acquire)
    }

    /// Blocking: the loaded model, loading it on first use.
    fn embedder(&self) -> Result<Arc<Encoder>, VectorError> {
        let mut slot = self.slot.lock().map_err(|_| VectorError::Model("embedder lock poisoned".into()))?;
        match &*slot {
            Slot::Ready(e) => return Ok(e.clone()),
            // Sticky: a broken model is not re-read on every query (a restart retries).
            Slot::Failed(e) => return Err(VectorError::Model(e.clone())),
            Slot::NotLoaded => {}
        }
        if !self.model_present() {
            return Err(VectorError::NoModel(self.dir.display().to_string()));
        }
        let started = std::time::Instant::now();
        self.loading.store(true, Ordering::Release);
        let loaded = Encoder::load(&self.dir, self.kind, self.kernel);
        self.loading.store(false, Ordering::Release);
        match loaded {
            Ok(e) => {
                tracing::info!(dir = %self.dir.display(), model = self.kind.model_name(), kernel = self.kernel.name(), load_ms = started.elapsed().as_millis() as u64, "embedding model loaded");
                let e = Arc::new(e);
                *slot = Slot::Ready(e.clone());
                Ok(e)
            }
            Err(err) => {
                tracing::warn!(error = %err, "embedding model failed to load");
                *slot = Slot::Failed(err.to_string());
                Err(err)
            }
        }
    }

    /// Blocking: embeds `texts` in batches of [`MAX_BATCH`], in length order (a batch's texts run
    /// side by side on the pool, so similar lengths keep its threads equally busy); the vectors
    /// come back in the input order. Each batch takes the turn (`run`).
    pub fn embed_blocking(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, VectorError> {
        self.embed_batches(texts, true)
    }

    fn embed_batches(&self, texts: &[String], take_turn: bool) -> Result<Vec<Vec<f32>>, VectorError> {
        let embedder = self.embedder()?;
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        let mut out: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
        for chunk in order.chunks(MAX_BATCH) {
            let batch: Vec<String> = chunk.iter().map(|&i| texts[i].clone()).collect();
            let _turn = if take_turn {
                Some(self.run.lock().map_err(|_| VectorError::Embed("embedder lock poisoned".into()))?)
            } else {
                None
            };
            let (vectors, tokens) = embedder.embed_counted(&batch)?;
            for (&i, v) in chunk.iter().zip(vectors) {
                out[i] = v;
            }
            self.add_usage(Usage { calls: 1, tokens });
        }
        Ok(out)
    }

    fn add_usage(&self, u: Usage) {
        if let Ok(mut acc) = self.unrecorded.lock() {
            acc.calls += u.calls;
            acc.tokens += u.tokens;
        }
    }

    /// Takes the usage not yet recorded (zero when none).
    pub fn take_usage(&self) -> Usage {
        self.unrecorded.lock().map(|mut u| std::mem::take(&mut *u)).unwrap_or_default()
    }

    /// Gives back usage whose recording failed (the next step records it).
    pub fn restore_usage(&self, u: Usage) {
        self.add_usage(u);
    }

    /// The vector of a search query: from the cache of recent queries, else embedded on a
    /// blocking thread (and remembered).
    pub async fn embed_query(self: &Arc<Self>, text: &str) -> Result<Arc<Vec<f32>>, VectorError> {
        if let Some(v) = self.queries.lock().ok().and_then(|c| c.get(text)) {
            return Ok(v);
        }
        let texts = vec![text.to_owned()];
        // Not behind the backfill's turn: a query would wait for a whole batch, and it is one
        // short text on its blocking thread at normal priority, while a batch's texts run on the
        // low-priority pool.
        let mut v = self.on_blocking_thread(move |me| me.embed_batches(&texts, false)).await?;
        let v = Arc::new(v.pop().ok_or_else(|| VectorError::Embed("no vector".into()))?);
        if let Ok(mut c) = self.queries.lock() {
            c.put(text, v.clone());
        }
        Ok(v)
    }

    /// Embeds `texts` on a blocking thread.
    pub async fn embed(self: &Arc<Self>, texts: Vec<String>) -> Result<Vec<Vec<f32>>, VectorError> {
        self.on_blocking_thread(move |me| me.embed_blocking(&texts)).await
    }

    async fn on_blocking_thread<T: Send + 'static>(
        self: &Arc<Self>,
        work: impl FnOnce(&Self) -> Result<T, VectorError> + Send + 'static,
    ) -> Result<T, VectorError> {
        let me = self.clone();
        tokio::task::spawn_blocking(move || work(&me))
            .await
            .map_err(|e| VectorError::Embed(format!("embedding task: {e}")))?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression (stop 24): `GET /api/status` waited 51 s for a static table's distillation,
    /// because the status read the model slot with a blocking lock the load was holding.
    #[test]
    fn status_reads_never_wait_for_a_model_that_is_loading() {
        let svc = EmbedService::new(PathBuf::from("/nonexistent"), EncoderKind::Static, memd_bert::Kernel::best());
        let loading = svc.slot.lock().expect("slot");
        let (tx, rx) = std::sync::mpsc::channel();
        let reader = svc.clone();
        std::thread::spawn(move || {
            let _ = tx.send((reader.loaded(), reader.load_error()));
        });
        let got = rx.recv_timeout(std::time::Duration::from_secs(10));
        drop(loading);
        assert_eq!(got.expect("the status reads returned while the slot was held"), (false, None));
    }

    /// A search query is embedded while a backfill batch holds the turn: it used to wait for the
    /// batch (seconds), and the search's 800 ms budget then dropped its vector half.
    #[tokio::test]
    async fn a_query_does_not_wait_for_a_backfill_batch() {
        let Some(dir) = crate::vectors::embedder::tests::test_model_dir() else {
            return;
        };
        let svc = EmbedService::new(dir, EncoderKind::Transformer, memd_bert::Kernel::best());
        let (held_tx, held_rx) = std::sync::mpsc::channel();
        let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
        let run = svc.run.clone();
        let holder = std::thread::spawn(move || {
            let _batch = run.lock().expect("turn");
            held_tx.send(()).expect("held");
            let _ = release_rx.recv();
        });
        held_rx.recv().expect("the batch holds the turn");
        let got = tokio::time::timeout(std::time::Duration::from_secs(60), svc.embed_query("how do we stop the daemon")).await;
        release_tx.send(()).expect("release");
        holder.join().expect("holder");
        let v = got.expect("the query waited for the batch").expect("embedded");
        assert_eq!(v.len(), crate::vectors::embedder::DIM);
    }

    /// A load that ended, here by failing at once on broken model files, leaves no loading state.
    #[test]
    fn a_failed_load_leaves_no_loading_state_behind() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("model.safetensors"), b"not a model").unwrap();
        std::fs::write(dir.path().join("tokenizer.json"), b"{}").unwrap();
        std::fs::write(dir.path().join("config.json"), b"{}").unwrap();
        let svc = EmbedService::new(dir.path().to_path_buf(), EncoderKind::Transformer, memd_bert::Kernel::best());
        assert!(!svc.loading());
        assert!(
            svc.embed_blocking(&["x".into()]).is_err(),
            "a broken model is an error, not a panic"
        );
        assert!(!svc.loading(), "the status would say loading forever");
        assert!(svc.load_error().is_some());
    }
}
