//! The provider actor's second kind of work (issue 41): one turn of a knowledge agent's
//! conversation. Not an actor of its own — these are [`super::provider::ProviderActor`]'s
//! handlers for [`super::provider::ProviderMsg::Converse`] and `ConverseDone`, kept apart from the
//! batch observer's. A turn goes through what an observer call goes through: no call without a
//! model, the daily budget checked *before* the call against the request's estimated size, the
//! breakers' admission, the shared call cap, and the tokens counted and recorded afterwards. The
//! spawned call holds the reply port, so the answer reaches its caller whatever restarted
//! meanwhile; the counters go to the provider running when the call ends.

use ractor::RpcReplyPort;

use super::breaker::{Admission, Outcome};
use super::provider::{ProviderMsg, ProviderState};
use crate::providers::{Backend, CallError, LlmReply, LlmRequest};
use crate::store::batch::UsageDelta;
use crate::text::lines::read_tokens_of_chars;

/// One turn to send: the whole request, and the `claude` CLI session to resume, if any.
pub struct Conversation {
    pub request: LlmRequest,
    pub resume: Option<String>,
    pub reply: RpcReplyPort<Result<LlmReply, Refused>>,
}

/// Why a turn got no answer: the first three before any call was made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error("no model provider is configured (MEMD_PROVIDER resolves to extractive); a knowledge agent needs an LLM")]
    NoModel,
    #[error(
        "the daily token budget would be exceeded: this call needs about {needed} tokens and {left} of {budget} are left today (MEMD_DAILY_TOKEN_BUDGET); no call was made"
    )]
    OverBudget { needed: u64, left: u64, budget: u64 },
    #[error("the provider is not taking calls now ({reason}); no call was made")]
    Unavailable { reason: String, retry_at: Option<i64> },
    #[error("the provider call failed: {0}")]
    Failed(CallError),
}

/// A finished turn, for the counters and breakers of the provider running now.
pub struct ConverseDone {
    pub call_id: u64,
    pub outcome: Outcome,
    pub latency_ms: u64,
    pub input_tokens: i64,
    pub output_tokens: i64,
}

/// The request's size in tokens, as the budget counts it before a call.
pub fn estimated_tokens(req: &LlmRequest) -> u64 {
    let chars = req.system.chars().count() + req.turns.iter().map(|t| t.text.chars().count()).sum::<usize>();
    read_tokens_of_chars(chars) as u64
}

impl ProviderState {
    /// Whether a turn may be sent now: None, or why not.
    pub fn admit_conversation(&mut self, req: &LlmRequest, now: i64, call_id: u64) -> Option<Refused> {
        self.roll_day(now);
        if matches!(self.setup.backend, Backend::Extractive) {
            return Some(Refused::NoModel);
        }
        let budget = self.setup.budget;
        if budget > 0 {
            let used = self.tokens.max(0) as u64;
            let (needed, left) = (estimated_tokens(req), budget.saturating_sub(used));
            if needed > left {
                return Some(Refused::OverBudget { needed, left, budget });
            }
        }
        match self.breakers.admit(now, call_id) {
            Admission::Call | Admission::Probe => None,
            Admission::Fallback(reason) => Some(Refused::Unavailable {
                reason: reason.to_string(),
                retry_at: None,
            }),
            Admission::WaitUntil(t) => Some(Refused::Unavailable {
                reason: "a provider breaker is open".into(),
                retry_at: Some(t),
            }),
        }
    }

    /// Counts a finished turn like an observer call and returns the usage row to record.
    pub fn conversation_done(&mut self, done: &ConverseDone, now: i64) -> UsageDelta {
        self.roll_day(now);
        let ok = matches!(done.outcome, Outcome::Success);
        self.record_call(ok, done.latency_ms, done.input_tokens + done.output_tokens);
        self.breakers.record(done.call_id, &done.outcome, now);
        UsageDelta {
            provider: self.setup.backend.kind().name().into(),
            model: self.setup.backend.model().into(),
            calls: 1,
            failures: i64::from(!ok),
            reasks: 0,
            input_tokens: done.input_tokens,
            output_tokens: done.output_tokens,
        }
    }
}

/// Sends an admitted turn on its own task; the answer goes straight to the caller.
pub fn spawn_turn(c: Conversation, state: &ProviderState, call_id: u64) {
    let (backend, handles, calls) = (state.setup.backend.clone(), state.handles.clone(), state.setup.calls.clone());
    tokio::spawn(async move {
        let Conversation { request, resume, reply } = c;
        let permit = calls.acquire_owned().await;
        let started = tokio::time::Instant::now();
        let result = match permit {
            Ok(_permit) => backend.converse(&request, resume.as_deref()).await,
            Err(_) => Err(CallError::Transient("the provider is shutting down".into())),
        };
        let latency_ms = started.elapsed().as_millis() as u64;
        let (outcome, input_tokens, output_tokens) = match &result {
            Ok(r) => (Outcome::Success, r.input_tokens, r.output_tokens),
            Err(e) => (super::provider::outcome_of(e), 0, 0),
        };
        let done = ConverseDone {
            call_id,
            outcome,
            latency_ms,
            input_tokens,
            output_tokens,
        };
        if let Some(p) = handles.provider() {
            let _ = p.cast(ProviderMsg::ConverseDone(Box::new(done)));
        }
        let _ = reply.send(result.map_err(Refused::Failed));
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::{Role, Turn};

    #[test]
    fn the_estimate_counts_system_and_turns() {
        let req = LlmRequest {
            system: "a".repeat(400),
            turns: vec![Turn {
                role: Role::User,
                text: "b".repeat(40),
            }],
        };
        assert_eq!(estimated_tokens(&req), 110);
    }
}
