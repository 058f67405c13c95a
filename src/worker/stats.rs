//! The `memd stats` use-case (`GET /api/stats`): the stored figures per day and project, and the
//! observer's own — today's tokens against the budget and its recent calls' latencies — from the
//! provider actor (absent when it does not answer in time; the stored figures still come back).

use serde::Serialize;

use super::Services;
use crate::actors::provider::{Latency, ProviderMsg};
use crate::clock::now_ms;
use crate::retrieval::RetrievalError;
use crate::retrieval::stats::Stats;

const PROVIDER_RPC_MS: u64 = 2_000;

#[derive(Debug, Clone, Default, Serialize)]
pub struct ObserverFigures {
    /// The provider that runs (`extractive` makes no model calls).
    pub provider: String,
    pub model: String,
    pub tokens_today: i64,
    /// The daily token budget (`MEMD_DAILY_TOKEN_BUDGET`; 0 = none).
    pub budget: u64,
    pub calls_today: u64,
    pub latency_ms: Latency,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct StatsDoc {
    #[serde(flatten)]
    pub stored: Stats,
    /// None when the provider actor did not answer.
    pub observer: Option<ObserverFigures>,
    /// Injected and used per source and project (issue 53).
    pub memory_use: crate::action::injected::MemoryUse,
}

pub async fn stats(svc: &Services, days: i64) -> Result<StatsDoc, RetrievalError> {
    let stored = svc.storage.stats(now_ms(), days).await?;
    let observer = match svc.handles.provider() {
        Some(p) => ractor::call_t!(p, ProviderMsg::Status, PROVIDER_RPC_MS).ok(),
        None => None,
    }
    .map(|p| ObserverFigures {
        provider: p.name,
        model: p.model,
        tokens_today: p.tokens_today,
        budget: p.budget,
        calls_today: p.calls_today,
        latency_ms: p.latency_ms,
    });
    let memory_use = crate::action::injected::MemoryUse::of(&svc.storage.use_totals().await?);
    Ok(StatsDoc {
        stored,
        observer,
        memory_use,
    })
}
