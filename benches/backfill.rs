//! The embedding backfill alone: the worker's vector sync (`memd::vectors::sync::step`, steps of
//! 64 rows until it is idle) over the shipped dataset's saved memories
//! (`datasets/transcripts/memories.jsonl`, 636 memories from real sessions), each round in a fresh
//! store, with the model loaded before the clock starts. It is the work the worker does after
//! `POST /api/memory/save`: documents cut to the model's 128 tokens, embedded on both cores, their
//! vectors committed with the watermark. It prints memories/s per round and the median of the
//! rounds, and which dense kernel ran (`MEMD_EMBED_KERNEL`: int8 on AVX-512 VNNI, else f16).
//!
//! Run: `MEMD_TEST_MODEL_DIR=<dir> cargo bench --bench backfill` (`BACKFILL_ROUNDS`, default 5;
//! `MEMD_EMBED_KERNEL=f16` for the f16 kernel).
#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stdout, clippy::print_stderr, clippy::exit)] // a test or a bench: a failed assumption fails it, and it reports by printing

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use memd::config::{EMBED_MODEL_NAME, EncoderKind, RawSettings, resolve_kernel};
use memd::store::memory::{ManualMemory, save_memory};
use memd::store::{Store, StoreOptions};
use memd::vectors::service::EmbedService;
use memd::vectors::sync::{StepOutcome, check_model, step};

fn memories() -> Vec<ManualMemory> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/transcripts/memories.jsonl");
    std::fs::read_to_string(path)
        .expect("the shipped dataset")
        .lines()
        .map(|l| {
            let m: serde_json::Value = serde_json::from_str(l).expect("a memory");
            let field = |k: &str| m[k].as_str().unwrap_or_default().to_owned();
            ManualMemory {
                platform_source: "claude".into(),
                project: field("project"),
                obs_type: field("type"),
                title: field("title"),
                narrative: field("text"),
                concepts: Vec::new(),
                metadata: None,
                provenance: memd::store::quarantine::Provenance::Agent,
                supersedes: None,
            }
        })
        .collect()
}

/// One round: a fresh store holding `memories`, then sync steps until idle. Returns the seconds
/// the backfill took, the rows it embedded and the rows stored (a duplicate reinforces its first).
async fn round(dir: &Path, memories: &[ManualMemory], embed: &Arc<EmbedService>) -> (f64, usize, usize) {
    let store = Store::open(
        &dir.join("memd.db"),
        &StoreOptions {
            readers: 2,
            queue_max: 1000,
            ..Default::default()
        },
        0,
    )
    .expect("store");
    let batch = memories.to_vec();
    let stored = store
        .write(move |c| {
            let mut stored = 0;
            for (i, m) in batch.iter().enumerate() {
                stored += usize::from(!save_memory(c, m, 1_700_000_000_000 + i as i64)?.reinforced);
            }
            Ok(stored)
        })
        .await
        .expect("saved");
    check_model(&store, EMBED_MODEL_NAME).await.expect("model meta");
    let (started, mut rows) = (Instant::now(), 0);
    while let StepOutcome::Worked(n) = step(&store, embed).await.expect("a sync step") {
        rows += n;
    }
    (started.elapsed().as_secs_f64(), rows, stored)
}

fn main() {
    let Some(model) = std::env::var_os("MEMD_TEST_MODEL_DIR").map(PathBuf::from) else {
        eprintln!("skipped: MEMD_TEST_MODEL_DIR is not set");
        return;
    };
    let rounds: usize = std::env::var("BACKFILL_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(5);
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    let memories = memories();
    rt.block_on(async {
        let kernel = resolve_kernel(&RawSettings::from_pairs(std::env::vars()), &mut Vec::new());
        let embed = EmbedService::new(model, EncoderKind::Transformer, kernel);
        let loading = Instant::now();
        embed.embed(vec!["warm up".into()]).await.expect("the model loads");
        println!(
            "backfill of the dataset's {} memories; model loaded in {:.0} ms, dense kernel {}",
            memories.len(),
            loading.elapsed().as_secs_f64() * 1e3,
            kernel.name()
        );
        let mut rates = Vec::new();
        for r in 0..rounds {
            let dir = tempfile::tempdir().expect("temp dir");
            let (secs, rows, stored) = round(dir.path(), &memories, &embed).await;
            assert_eq!(rows, stored, "every stored memory embedded");
            let rate = rows as f64 / secs;
            println!("round {}: {rows} stored memories in {secs:.2} s = {rate:.0} memories/s", r + 1);
            rates.push(rate);
        }
        rates.sort_by(f64::total_cmp);
        println!("median {:.0} memories/s over {rounds} rounds", rates[rates.len() / 2]);
    });
}
