//! `memd eval`: the retrieval benchmark (issue 15). A dataset ([`dataset`]) of memories,
//! questions with evidence and the recorded sessions they came from, made from real transcripts
//! by [`generate`]; [`run`] loads it into a fresh worker through the public API and asks every
//! question in each search mode; [`metrics`] scores the answers; [`report`] tables them.

pub mod dataset;
pub mod generate;
pub mod metrics;
pub mod poisoning;
pub mod report;
pub mod run;
pub mod true_now;
pub mod where_changed;

use std::path::PathBuf;

/// Errors of the benchmark.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error("{0}: {1}")]
    Io(PathBuf, std::io::Error),
    #[error("{0} line {1}: {2}")]
    Format(PathBuf, usize, String),
    #[error("question {0} has no evidence among the memories")]
    Evidence(String),
    #[error("worker: {0}")]
    Worker(String),
}
