//! Recall of the binary index with exact re-ranking (`memd::vectors::nearest`, OVERSAMPLE) against
//! exact cosine search, on real embeddings: 18-word windows of the recorded sessions in
//! `MEMD_TRANSCRIPTS_DIR` (else the committed fixtures) embedded by all-MiniLM-L6-v2 (cached under the target tmp dir).
//! The first 50 windows are the queries, the rest the corpus; for each candidate count k the Hamming
//! top-k (sign bits, as `vec_quantize_binary`) is re-ranked by exact cosine and compared with the
//! exact top 10 and top 100.
//! Run: `MEMD_TEST_MODEL_DIR=<dir> cargo bench --bench vector_recall` (embedding takes minutes).
#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stdout, clippy::print_stderr, clippy::exit)] // a test or a bench: a failed assumption fails it, and it reports by printing

use std::collections::HashSet;
use std::io::Write;
use std::path::PathBuf;

use memd::config::{EncoderKind, RawSettings};
use memd::vectors::codes::{Code, code_of, hamming};
use memd::vectors::embedder::{DIM, dot};
use memd::vectors::encoder::Encoder;

const WINDOWS: usize = 4_050;
const QUERIES: usize = 50;

fn strings(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::String(s) => {
            let words: Vec<&str> = s.split_whitespace().collect();
            for start in (0..words.len().saturating_sub(8).max(1)).step_by(10) {
                let w = words[start..(start + 18).min(words.len())].join(" ");
                if w.len() >= 40 && !w.starts_with('{') {
                    out.push(w);
                }
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        serde_json::Value::Object(o) => o.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

fn windows() -> Vec<String> {
    // The whole recorded set when MEMD_TRANSCRIPTS_DIR names it, else the committed fixtures.
    let dir = std::env::var_os("MEMD_TRANSCRIPTS_DIR")
        .map(PathBuf::from)
        .filter(|d| d.is_dir())
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/transcripts"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        for line in std::fs::read_to_string(f).unwrap().lines() {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(line) {
                strings(&v, &mut out);
            }
        }
    }
    let mut seen = HashSet::new();
    out.retain(|w| seen.insert(w.clone()));
    // Deterministic spread over all sessions.
    let step = (out.len() / WINDOWS).max(1);
    out.into_iter().step_by(step).take(WINDOWS).collect()
}

/// The encoder of `MEMD_EMBED_ENCODER`, read by the worker's rule.
fn encoder_kind() -> EncoderKind {
    EncoderKind::resolve(&RawSettings::from_pairs(std::env::vars()), &mut Vec::new())
}

/// `MEMD_EMBED_KERNEL` by the settings table's rule.
fn kernel() -> memd_bert::Kernel {
    memd::config::resolve_kernel(&RawSettings::from_pairs(std::env::vars()), &mut Vec::new())
}

fn embeddings(model: &std::path::Path) -> Vec<Vec<f32>> {
    let cache = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("vector-recall-{WINDOWS}-{}.f32", encoder_kind().model_name()));
    if let Ok(b) = std::fs::read(&cache) {
        return b
            .chunks_exact(DIM * 4)
            .map(|c| c.chunks_exact(4).map(|x| f32::from_le_bytes([x[0], x[1], x[2], x[3]])).collect())
            .collect();
    }
    let texts = windows();
    let e = Encoder::load(model, encoder_kind(), kernel()).expect("model");
    let mut out = Vec::with_capacity(texts.len());
    for chunk in texts.chunks(32) {
        out.extend(e.embed(chunk).expect("embed"));
    }
    let mut f = std::fs::File::create(&cache).unwrap();
    for v in &out {
        for x in v {
            f.write_all(&x.to_le_bytes()).unwrap();
        }
    }
    out
}

fn main() {
    let Some(model) = std::env::var("MEMD_TEST_MODEL_DIR")
        .ok()
        .map(PathBuf::from)
        .filter(|d| d.join("model.safetensors").is_file())
    else {
        println!("MEMD_TEST_MODEL_DIR unset: recall not measured");
        return;
    };
    let vecs = embeddings(&model);
    let (queries, corpus) = vecs.split_at(QUERIES);
    let codes: Vec<Code> = corpus.iter().map(|v| code_of(v)).collect();
    println!(
        "binary index + exact re-ranking vs exact search: {} queries over {} real embeddings",
        queries.len(),
        corpus.len()
    );
    for k in [100usize, 200, 400, 1000] {
        let (mut at10, mut at100) = (0usize, 0usize);
        for q in queries {
            let mut exact: Vec<(f32, usize)> = corpus.iter().enumerate().map(|(i, v)| (-dot(q, v), i)).collect();
            exact.sort_by(|a, b| a.0.total_cmp(&b.0));
            let qc = code_of(q);
            let mut ham: Vec<(u32, usize)> = codes.iter().enumerate().map(|(i, c)| (hamming(c, &qc), i)).collect();
            ham.sort();
            let mut reranked: Vec<(f32, usize)> = ham[..k].iter().map(|(_, i)| (-dot(q, &corpus[*i]), *i)).collect();
            reranked.sort_by(|a, b| a.0.total_cmp(&b.0));
            let top = |v: &[(f32, usize)], n: usize| v[..n].iter().map(|x| x.1).collect::<HashSet<_>>();
            at10 += top(&exact, 10).intersection(&top(&reranked, 10)).count();
            at100 += top(&exact, 100).intersection(&top(&reranked, 100)).count();
        }
        println!(
            "  top-{k:<4} Hamming candidates re-ranked: recall@10 {:.3}, recall@100 {:.3}{}",
            at10 as f64 / (10 * QUERIES) as f64,
            at100 as f64 / (100 * QUERIES) as f64,
            if k == 100 * memd::vectors::nearest::OVERSAMPLE {
                "  <- memd (OVERSAMPLE)"
            } else {
                ""
            }
        );
    }
}
