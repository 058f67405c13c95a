//! ProviderActor — turns claimed batches into observations.
//!
//! Owns the observer backends and their counters; in this build the only backend is the
//! deterministic extractive observer (spec/pipeline.md §16). Supervised by RootSupervisor.
//! The work for each batch runs on a spawned blocking task that reports back to the requesting
//! SessionActor as a message, so this actor never stalls. Failure policy: a failed batch is
//! reported to its session (rows go back to `pending` with backoff); the actor itself holds only
//! counters, so a restart loses nothing durable.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use serde::Serialize;

use super::session::SessionMsg;
use crate::ingest::bounds::finish_output;
use crate::observer::extractive;
use crate::pipeline::privacy::Privacy;
use crate::store::batch::BatchOutput;
use crate::store::pending::{BatchWork, ClaimedBatch};

pub struct ProviderActor;

pub struct ProviderArgs {
    pub type_ids: Vec<String>,
    pub concept_ids: Vec<String>,
    pub privacy: Arc<Privacy>,
}

pub enum ProviderMsg {
    /// Observe one claimed batch; the result goes to `reply_to` as [`SessionMsg::Observed`].
    Observe {
        batch: Box<ClaimedBatch>,
        reply_to: ActorRef<SessionMsg>,
    },
    /// A spawned call finished (counters only).
    CallDone { ok: bool, latency_ms: u64 },
    /// The provider part of `GET /api/status`.
    Status(RpcReplyPort<ProviderStatus>),
}

#[derive(Debug, Clone, Serialize)]
pub struct ProviderStatus {
    pub name: String,
    pub model: String,
    pub using_fallback: bool,
    pub calls_today: u64,
    pub failures_today: u64,
    pub latency_ms: Latency,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Latency {
    pub p50: u64,
    pub p95: u64,
}

pub struct ProviderState {
    args: Arc<ProviderArgs>,
    calls: u64,
    failures: u64,
    latencies: VecDeque<u64>,
}

impl ProviderState {
    pub fn new(args: ProviderArgs) -> Self {
        Self {
            args: Arc::new(args),
            calls: 0,
            failures: 0,
            latencies: VecDeque::new(),
        }
    }

    pub fn record(&mut self, ok: bool, latency_ms: u64) {
        self.calls += 1;
        if !ok {
            self.failures += 1;
        }
        if self.latencies.len() >= 100 {
            self.latencies.pop_front();
        }
        self.latencies.push_back(latency_ms);
    }

    pub fn status(&self) -> ProviderStatus {
        let mut v: Vec<u64> = self.latencies.iter().copied().collect();
        v.sort_unstable();
        let pct = |p: usize| v.get((v.len() * p / 100).min(v.len().saturating_sub(1))).copied().unwrap_or(0);
        ProviderStatus {
            name: "extractive".into(),
            model: "extractive".into(),
            using_fallback: true,
            calls_today: self.calls,
            failures_today: self.failures,
            latency_ms: Latency {
                p50: pct(50),
                p95: pct(95),
            },
        }
    }
}

/// Runs the extractive observer over a batch and bounds/redacts its output (pure).
pub fn observe_extractive(args: &ProviderArgs, batch: &ClaimedBatch) -> BatchOutput {
    let types: Vec<&str> = args.type_ids.iter().map(String::as_str).collect();
    let concepts: Vec<&str> = args.concept_ids.iter().map(String::as_str).collect();
    let (observations, summary, source_rows) = match &batch.work {
        BatchWork::Observations(events) => (
            extractive::observe(events, &batch.meta.project_root, &types, &concepts),
            None,
            events.iter().map(|e| e.row_id).collect(),
        ),
        BatchWork::Summary {
            last_assistant_message,
            observation_titles,
        } => (
            Vec::new(),
            extractive::summarize(batch.meta.prompt_text.as_deref(), observation_titles, last_assistant_message),
            Vec::new(),
        ),
    };
    let out = BatchOutput {
        observations,
        summary,
        origin: "extractive",
        provider: "extractive".into(),
        model: "extractive".into(),
        input_tokens: 0,
        output_tokens: 0,
        source_rows,
    };
    finish_output(out, &args.privacy)
}

impl Actor for ProviderActor {
    type Msg = ProviderMsg;
    type State = ProviderState;
    type Arguments = ProviderArgs;

    async fn pre_start(&self, _myself: ActorRef<ProviderMsg>, args: ProviderArgs) -> Result<ProviderState, ActorProcessingErr> {
        Ok(ProviderState::new(args))
    }

    async fn handle(&self, myself: ActorRef<ProviderMsg>, msg: ProviderMsg, state: &mut ProviderState) -> Result<(), ActorProcessingErr> {
        match msg {
            ProviderMsg::Observe { batch, reply_to } => {
                let args = state.args.clone();
                tokio::spawn(async move {
                    let started = Instant::now();
                    let joined = tokio::task::spawn_blocking(move || {
                        let out = observe_extractive(&args, &batch);
                        (batch, out)
                    })
                    .await;
                    let latency_ms = started.elapsed().as_millis() as u64;
                    let ok = joined.is_ok();
                    let _ = myself.cast(ProviderMsg::CallDone { ok, latency_ms });
                    let msg = match joined {
                        Ok((batch, out)) => SessionMsg::Observed {
                            batch,
                            result: Ok(Box::new(out)),
                        },
                        Err(e) => SessionMsg::ObserveFailed {
                            error: format!("extractive observer crashed: {e}"),
                        },
                    };
                    let _ = reply_to.cast(msg);
                });
            }
            ProviderMsg::CallDone { ok, latency_ms } => state.record(ok, latency_ms),
            ProviderMsg::Status(reply) => {
                let _ = reply.send(state.status());
            }
        }
        Ok(())
    }
}
