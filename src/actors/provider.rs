//! ProviderActor — turns claimed batches into observations through the configured observer.
//!
//! Owns the backend (anthropic, openai, gemini, claude-cli or extractive), the circuit breakers
//! ([`super::breaker`]), the daily token budget and the call counters. Supervised by
//! RootSupervisor. Every provider call runs on a spawned task that reports back as
//! [`ProviderMsg::CallDone`] to the provider running *then* (through [`Handles`], so a provider
//! restarted meanwhile continues the job), or, with no provider at all, tells the session so it
//! releases its batch; handlers never block. At most `MEMD_OBSERVER_CONCURRENCY` calls are open at
//! once across all sessions (a FIFO semaphore shared by every provider instance). Routing (docs/spec/pipeline.md §13): no provider,
//! budget spent or auth breaker open → extractive at once; quota/failure breaker open → the batch
//! is deferred (rows back to `pending`) until the breaker's probe time, at most
//! `MEMD_OBSERVER_MAX_DEFER_MS` after the oldest row arrived, then extractive. Transient errors
//! go back to the session (rows retried with backoff). Failure policy: breakers and counters are
//! in memory (today's tokens are reloaded from `token_usage`); a restart loses no durable state,
//! and claude-cli children are killed in `post_stop`.

use std::sync::Arc;
use tokio::time::Instant;

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};

use super::Handles;
use super::breaker::Outcome;
use super::provider_conversation::{Conversation, ConverseDone, spawn_turn};
pub use super::provider_state::{Latency, ProviderState, ProviderStatus, Route, outcome_of};
use super::session::SessionMsg;
use crate::backend::Storage;
use crate::clock::Clock;
use crate::observer::fallback as extractive;
use crate::observer::job::{Job, Step};
pub use crate::observer::setup::ObserverSetup;
use crate::pipeline::privacy::Privacy;
use crate::providers::{Backend, CallError, LlmReply};
use crate::store::batch::UsageDelta;
use crate::store::pending::ClaimedBatch;

pub struct ProviderActor;

pub struct ProviderArgs {
    pub setup: ObserverSetup,
    pub privacy: Arc<Privacy>,
    pub storage: Arc<dyn Storage>,
    /// Where call results go: whichever provider is running when the call ends.
    pub handles: Arc<Handles>,
    pub clock: Clock,
}

pub enum ProviderMsg {
    /// Observe one claimed batch; the result goes to `reply_to` as [`SessionMsg::Observed`]
    /// (or [`SessionMsg::Deferred`] while a quota/failure breaker is open). No provider call
    /// starts after `deadline`, and one still open then fails (the session releases the batch).
    Observe {
        batch: Box<ClaimedBatch>,
        reply_to: ActorRef<SessionMsg>,
        deadline: Instant,
    },
    /// The batch ran out of attempts: the extractive observer takes it.
    Fallback {
        batch: Box<ClaimedBatch>,
        reply_to: ActorRef<SessionMsg>,
    },
    /// A spawned provider call finished.
    CallDone(Box<CallFinished>),
    /// The provider part of `GET /api/status`.
    Status(RpcReplyPort<ProviderStatus>),
    /// Settings reloaded (SIGHUP): backend, model, budget and bounds from now on; the call cap
    /// and calls already open are kept.
    Reconfigure(Box<ObserverSetup>),
    /// One turn of a knowledge agent's conversation ([`super::provider_conversation`]).
    Converse(Box<Conversation>),
    /// A turn finished: count it.
    ConverseDone(Box<ConverseDone>),
}

/// A finished provider call and the job it belongs to.
pub struct CallFinished {
    pub job: Box<Job>,
    pub reply_to: ActorRef<SessionMsg>,
    pub call_id: u64,
    pub result: Result<LlmReply, CallError>,
    pub latency_ms: u64,
}

impl ProviderActor {
    fn observe(&self, batch: Box<ClaimedBatch>, reply_to: ActorRef<SessionMsg>, deadline: Instant, state: &mut ProviderState) {
        match state.route(state.clock.now(), batch.meta.oldest_epoch) {
            Route::Extractive(why) => {
                tracing::debug!(session_id = %batch.meta.content_session_id, why, "extractive observer");
                self.extractive(batch, reply_to, state);
            }
            Route::Defer { retry_at } => self.defer(batch, reply_to, Some(retry_at), "provider breaker open", state),
            Route::Call(call_id) => {
                let mut job = Box::new(Job::new(batch, state.setup.field_max_chars));
                job.deadline = Some(deadline);
                self.start_call(job, reply_to, call_id, state);
            }
        }
    }

    /// The batch waits until `retry_at` ([`ProviderState::defer_to`]); None: the wait would pass
    /// the defer limit, so the extractive observer takes it now.
    fn defer(&self, batch: Box<ClaimedBatch>, reply_to: ActorRef<SessionMsg>, retry_at: Option<i64>, reason: &str, state: &ProviderState) {
        match retry_at {
            Some(retry_at) => {
                let reason = reason.to_string();
                let _ = reply_to.cast(SessionMsg::Deferred { batch, retry_at, reason });
            }
            None => self.extractive(batch, reply_to, state),
        }
    }

    fn extractive(&self, batch: Box<ClaimedBatch>, reply_to: ActorRef<SessionMsg>, state: &ProviderState) {
        let (mode, privacy) = (state.setup.mode.clone(), state.privacy.clone());
        let batch_id = batch.id();
        tokio::spawn(async move {
            let joined = tokio::task::spawn_blocking(move || {
                let out = extractive::observe_batch(&batch, &mode.type_ids(), &mode.concept_ids(), &privacy);
                (batch, out)
            })
            .await;
            let msg = match joined {
                Ok((batch, out)) => SessionMsg::Observed {
                    batch,
                    result: Ok(Box::new(out)),
                },
                Err(e) => SessionMsg::ObserveFailed {
                    batch_id,
                    error: format!("extractive observer crashed: {e}"),
                },
            };
            let _ = reply_to.cast(msg);
        });
    }

    fn start_call(&self, mut job: Box<Job>, reply_to: ActorRef<SessionMsg>, call_id: u64, state: &mut ProviderState) {
        if state.budget_spent() {
            job.rest_extractive();
        }
        let Some(request) = job.request(&state.setup.mode) else {
            return self.finish(job, reply_to, state);
        };
        job.calls += 1;
        let (backend, handles, calls) = (state.setup.backend.clone(), state.handles.clone(), state.setup.calls.clone());
        let (deadline, batch_id) = (job.deadline, job.batch.id());
        tokio::spawn(async move {
            let until = |d: Option<Instant>| d.map_or(std::time::Duration::MAX, |d| d.saturating_duration_since(Instant::now()));
            // Waiting for a free call slot is not the call's latency; nor is it allowed past the deadline.
            let permit = tokio::time::timeout(until(deadline), calls.acquire_owned()).await;
            let started = Instant::now();
            let result = match permit {
                Ok(_) if deadline.is_some_and(|d| Instant::now() >= d) => Err(CallError::Transient("the batch's deadline passed".into())),
                Ok(permit) => {
                    let r = tokio::time::timeout(until(deadline), backend.call(&request)).await;
                    drop(permit);
                    r.unwrap_or_else(|_| Err(CallError::Transient("the batch's deadline passed during the call".into())))
                }
                Err(_) => Err(CallError::Transient("no free provider call before the batch's deadline".into())),
            };
            let latency_ms = started.elapsed().as_millis() as u64;
            let done = ProviderMsg::CallDone(Box::new(CallFinished {
                job,
                reply_to: reply_to.clone(),
                call_id,
                result,
                latency_ms,
            }));
            let delivered = handles.provider().is_some_and(|p| p.cast(done).is_ok());
            if !delivered {
                let _ = reply_to.cast(SessionMsg::ObserveFailed {
                    batch_id,
                    error: "the observer stopped during the call".into(),
                });
            }
        });
    }

    fn call_done(&self, done: CallFinished, state: &mut ProviderState) {
        let CallFinished {
            mut job,
            reply_to,
            call_id,
            result,
            latency_ms,
        } = done;
        let now = state.clock.now();
        state.roll_day(now);
        let (step, tokens) = match result {
            Ok(reply) => {
                job.input_tokens += reply.input_tokens;
                job.output_tokens += reply.output_tokens;
                let step = job.apply_reply(&reply.text, &state.setup.mode);
                (step, reply.input_tokens + reply.output_tokens)
            }
            Err(e) => (Step::Error(e), 0),
        };
        job.failures += i64::from(matches!(step, Step::Error(_)));
        let outcome = match &step {
            Step::Error(e) => outcome_of(e),
            _ => Outcome::Success,
        };
        state.settle(call_id, &outcome, latency_ms, tokens, now);
        match step {
            Step::Next => {
                job.advance();
                self.next_part(job, reply_to, state);
            }
            Step::Reask => {
                let call_id = state.next_call_id();
                self.start_call(job, reply_to, call_id, state);
            }
            Step::Extractive => {
                job.part_extractive();
                self.next_part(job, reply_to, state);
            }
            Step::Error(CallError::Overflow(reason)) => {
                tracing::info!(session_id = %job.batch.meta.content_session_id, reason = %reason, "observer overflow; splitting");
                job.on_overflow();
                self.next_part(job, reply_to, state);
            }
            Step::Error(CallError::Auth(reason)) => {
                tracing::warn!(provider = state.setup.backend.kind().name(), reason = %reason, "provider refused the credentials; auth breaker open");
                job.rest_extractive();
                self.finish(job, reply_to, state);
            }
            Step::Error(CallError::Quota { reason, .. }) => {
                self.record_usage(&job, state);
                let until = state.breakers.quota.until_ms.unwrap_or(now + super::breaker::QUOTA_DEFAULT_MS);
                let retry_at = state.defer_to(now, job.batch.meta.oldest_epoch, until);
                self.defer(job.batch, reply_to, retry_at, &format!("quota: {reason}"), state);
            }
            Step::Error(CallError::Transient(reason)) => {
                self.record_usage(&job, state);
                let _ = reply_to.cast(SessionMsg::Observed {
                    batch: job.batch,
                    result: Err(CallError::Transient(reason)),
                });
            }
        }
    }

    fn next_part(&self, job: Box<Job>, reply_to: ActorRef<SessionMsg>, state: &mut ProviderState) {
        if job.parts.is_empty() {
            return self.finish(job, reply_to, state);
        }
        let call_id = state.next_call_id();
        self.start_call(job, reply_to, call_id, state);
    }

    /// Usage of a job whose calls produced no stored output.
    fn record_usage(&self, job: &Job, state: &ProviderState) {
        let delta = UsageDelta {
            provider: state.setup.backend.kind().name().into(),
            model: state.setup.backend.model().into(),
            calls: job.calls,
            failures: job.failures,
            reasks: job.reasks,
            input_tokens: job.input_tokens,
            output_tokens: job.output_tokens,
        };
        self.record_delta(delta, state);
    }

    /// A knowledge agent's turn: refused at once, or sent on its own task.
    fn converse(&self, c: Conversation, state: &mut ProviderState) {
        let call_id = state.next_call_id();
        match state.admit_conversation(&c.request, state.clock.now(), call_id) {
            Some(refused) => {
                let _ = c.reply.send(Err(refused));
            }
            None => spawn_turn(c, state, call_id),
        }
    }

    fn record_delta(&self, delta: UsageDelta, state: &ProviderState) {
        let (storage, clock) = (state.storage.clone(), state.clock.clone());
        tokio::spawn(async move {
            let now = clock.now();
            if let Err(e) = storage.record_usage(delta, now).await {
                tracing::warn!(error = %e, "cannot record provider usage");
            }
        });
    }

    fn finish(&self, job: Box<Job>, reply_to: ActorRef<SessionMsg>, state: &ProviderState) {
        let (mode, privacy, storage) = (state.setup.mode.clone(), state.privacy.clone(), state.storage.clone());
        let (provider, model) = (state.setup.backend.kind().name(), state.setup.backend.model().to_string());
        let (batch_id, clock) = (job.batch.id(), state.clock.clone());
        tokio::spawn(async move {
            let joined = tokio::task::spawn_blocking(move || job.finish(provider, &model, &mode, &privacy)).await;
            let Ok((batch, out, delta)) = joined else {
                let _ = reply_to.cast(SessionMsg::ObserveFailed {
                    batch_id,
                    error: "observer output processing crashed".into(),
                });
                return;
            };
            if delta.calls != 0 || delta.failures != 0 || delta.reasks != 0 || delta.input_tokens != 0 || delta.output_tokens != 0 {
                let now = clock.now();
                if let Err(e) = storage.record_usage(delta, now).await {
                    tracing::warn!(error = %e, "cannot record provider usage");
                }
            }
            let _ = reply_to.cast(SessionMsg::Observed {
                batch,
                result: Ok(Box::new(out)),
            });
        });
    }
}

impl Actor for ProviderActor {
    type Msg = ProviderMsg;
    type State = ProviderState;
    type Arguments = ProviderArgs;

    async fn pre_start(&self, _myself: ActorRef<ProviderMsg>, args: ProviderArgs) -> Result<ProviderState, ActorProcessingErr> {
        let tokens = args.storage.tokens_today(args.clock.now()).await.unwrap_or(0);
        tracing::info!(
            provider = args.setup.backend.kind().name(),
            model = args.setup.backend.model(),
            "observer ready"
        );
        Ok(ProviderState::new(args, tokens))
    }

    async fn handle(&self, _myself: ActorRef<ProviderMsg>, msg: ProviderMsg, state: &mut ProviderState) -> Result<(), ActorProcessingErr> {
        match msg {
            ProviderMsg::Observe { batch, reply_to, deadline } => self.observe(batch, reply_to, deadline, state),
            ProviderMsg::Fallback { batch, reply_to } => self.extractive(batch, reply_to, state),
            ProviderMsg::CallDone(done) => self.call_done(*done, state),
            ProviderMsg::Status(reply) => {
                state.roll_day(state.clock.now());
                let _ = reply.send(state.status());
            }
            ProviderMsg::Reconfigure(setup) => state.setup = setup.keeping_calls_of(&state.setup),
            ProviderMsg::Converse(c) => self.converse(*c, state),
            ProviderMsg::ConverseDone(done) => {
                let delta = state.conversation_done(&done, state.clock.now());
                self.record_delta(delta, state);
            }
        }
        Ok(())
    }

    async fn post_stop(&self, _myself: ActorRef<ProviderMsg>, state: &mut ProviderState) -> Result<(), ActorProcessingErr> {
        if let Backend::ClaudeCli(cli) = &state.setup.backend {
            let killed = cli.children.kill_all();
            if killed > 0 {
                tracing::info!(killed, "observer subprocesses stopped");
            }
        }
        Ok(())
    }
}
