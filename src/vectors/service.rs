//! [`EmbedService`]: the shared, lazily loaded embedder used by the sync actors and by search.
//!
//! The model loads on first use (never at start-up), on a blocking thread; inference runs there too,
//! one batch at a time (a mutex), so no actor or request handler stalls on the CPU-bound work.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::VectorError;
use super::embedder::{Embedder, model_present};

/// Texts per forward pass (spec: ≤ 64).
pub const MAX_BATCH: usize = 64;

enum Slot {
    NotLoaded,
    Ready(Arc<Embedder>),
    Failed(String),
}

pub struct EmbedService {
    dir: PathBuf,
    slot: Mutex<Slot>,
    /// Serialises forward passes (two cores: parallel batches only thrash).
    run: Arc<Mutex<()>>,
}

impl std::fmt::Debug for EmbedService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbedService").field("dir", &self.dir).finish()
    }
}

impl EmbedService {
    pub fn new(dir: PathBuf) -> Arc<Self> {
        Arc::new(Self {
            dir,
            slot: Mutex::new(Slot::NotLoaded),
            run: Arc::new(Mutex::new(())),
        })
    }

    /// The model files are in place (checked on every call: `memd models install` may add them later).
    pub fn model_present(&self) -> bool {
        model_present(&self.dir)
    }

    /// The model failed to load (status shows the reason).
    pub fn load_error(&self) -> Option<String> {
        match &*self.slot.lock().ok()? {
            Slot::Failed(e) => Some(e.clone()),
            _ => None,
        }
    }

    /// True once the model is in memory.
    pub fn loaded(&self) -> bool {
        matches!(self.slot.lock().map(|s| matches!(&*s, Slot::Ready(_))), Ok(true))
    }

    /// Blocking: the loaded model, loading it on first use.
    fn embedder(&self) -> Result<Arc<Embedder>, VectorError> {
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
        match Embedder::load(&self.dir) {
            Ok(e) => {
                tracing::info!(dir = %self.dir.display(), load_ms = started.elapsed().as_millis() as u64, "embedding model loaded");
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

    /// Blocking: embeds `texts` in batches of [`MAX_BATCH`].
    pub fn embed_blocking(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, VectorError> {
        let embedder = self.embedder()?;
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(MAX_BATCH) {
            let _turn = self.run.lock().map_err(|_| VectorError::Embed("embedder lock poisoned".into()))?;
            out.extend(embedder.embed(chunk)?);
        }
        Ok(out)
    }

    /// Embeds `texts` on a blocking thread.
    pub async fn embed(self: &Arc<Self>, texts: Vec<String>) -> Result<Vec<Vec<f32>>, VectorError> {
        let me = self.clone();
        tokio::task::spawn_blocking(move || me.embed_blocking(&texts))
            .await
            .map_err(|e| VectorError::Embed(format!("embedding task: {e}")))?
    }
}
