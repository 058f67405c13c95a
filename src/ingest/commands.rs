//! The four ingest commands (docs/spec/api.md §3): `init`, `observations`, `summarize`, `complete`.
//! Each validates its body, runs the pipeline, commits through the store writer, wakes the
//! session's actor, and returns a typed outcome. The HTTP routes and the spool both call them, so
//! a spooled event goes through exactly the validation and pipeline of its HTTP route.

use std::sync::Arc;

use serde_json::Value;

use super::{Pipeline, Skip, event_time};
use crate::backend::Storage;
use crate::clock::now_ms;
use crate::protocol::IngestRoute;
use crate::protocol::api::{CompleteBody, InitBody, Invalid, ObservationBody, SummarizeBody, describe_json_error};
use crate::store::StoreError;
use crate::store::prompts::PromptOutcome;
use crate::store::sessions::{CompleteOutcome as StoreComplete, SessionKey};
use crate::store::tool_events::{SummaryRequestOutcome, ToolEventOutcome};

/// Why a command did not store its event.
#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    /// The body is not what the route accepts: the same body will never be accepted.
    #[error("{0}")]
    Invalid(String),
    /// The store could not commit (overloaded, read-only, disk full, closed …).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The pipeline's worker thread failed.
    #[error("privacy processing failed")]
    Pipeline,
}

impl IngestError {
    /// Retrying cannot help: the spool moves such a line to `spool/rejected/`.
    pub fn is_permanent(&self) -> bool {
        matches!(self, IngestError::Invalid(_))
    }
}

impl From<Invalid> for IngestError {
    fn from(e: Invalid) -> Self {
        IngestError::Invalid(e.0)
    }
}

/// `POST /api/sessions/init`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InitOutcome {
    Stored {
        session_db_id: i64,
        prompt_number: i64,
        /// The session already had a live actor (its context was injected at SessionStart).
        context_injected: bool,
    },
    Private {
        session_db_id: i64,
        prompt_number: i64,
    },
    Duplicate {
        session_db_id: i64,
        prompt_number: i64,
    },
    Skipped(Skip),
}

/// `POST /api/sessions/observations`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ObservationOutcome {
    Queued { pending_id: i64 },
    Duplicate,
    Private,
    Skipped(Skip),
}

/// `POST /api/sessions/summarize`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SummarizeOutcome {
    Queued { pending_id: i64, replaced: bool },
    Duplicate,
    Private,
    Skipped(Skip),
}

/// `POST /api/sessions/complete`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompleteOutcome {
    Duplicate,
    UnknownSession,
    Completing { pending: i64 },
    Completed,
}

/// What ingest wakes once a session's rows are committed: the live session actors (the actor
/// tree implements it, `actors::Doorbell`; ingest knows nothing of actors).
pub trait SessionDoorbell: Send + Sync {
    /// Whether a session actor of `key` is running now.
    fn is_live(&self, key: &SessionKey) -> bool;
    /// Tells the session of `key` that rows wait for it.
    fn notify(&self, key: SessionKey, session_db_id: i64);
}

/// The ingest pipeline with what its commands write to and wake.
pub struct IngestService {
    pub pipeline: Arc<Pipeline>,
    storage: Arc<dyn Storage>,
    doorbell: Arc<dyn SessionDoorbell>,
}

/// Parses a JSON object body into a route's wire type (the error names the field).
fn typed<T: serde::de::DeserializeOwned>(body: Value) -> Result<T, IngestError> {
    if !body.is_object() {
        return Err(IngestError::Invalid("the body must be a JSON object".into()));
    }
    serde_json::from_value(body).map_err(|e| IngestError::Invalid(describe_json_error(&e)))
}

/// The platform of a body as the HTTP route would see it without query or headers.
pub fn body_platform(body: &Value) -> String {
    let raw = ["platformSource", "platform_source"]
        .iter()
        .find_map(|k| body.get(*k).and_then(Value::as_str))
        .filter(|s| !s.trim().is_empty());
    crate::pipeline::platform::normalize_platform_source(raw)
}

impl IngestService {
    pub fn new(pipeline: Arc<Pipeline>, storage: Arc<dyn Storage>, doorbell: Arc<dyn SessionDoorbell>) -> Self {
        Self {
            pipeline,
            storage,
            doorbell,
        }
    }

    fn notify(&self, key: SessionKey, session_db_id: i64) {
        self.doorbell.notify(key, session_db_id);
    }

    /// Runs the command of `route` (the spool's entry point; the outcome is not needed there).
    pub async fn apply(&self, route: IngestRoute, body: Value, platform: String) -> Result<(), IngestError> {
        match route {
            IngestRoute::Init => self.init(body, platform).await.map(drop),
            IngestRoute::Observations => self.observations(body, platform).await.map(drop),
            IngestRoute::Summarize => self.summarize(body, platform).await.map(drop),
            IngestRoute::Complete => self.complete(body, platform).await.map(drop),
        }
    }

    pub async fn init(&self, body: Value, platform: String) -> Result<InitOutcome, IngestError> {
        let b: InitBody = typed(body)?;
        b.validate()?;
        let now = now_ms();
        let prompt = match self.pipeline.prompt(&b, platform, event_time(b.occurred_at_epoch, now)) {
            Ok(p) => p,
            Err(skip) => return Ok(InitOutcome::Skipped(skip)),
        };
        let live = self.doorbell.is_live(&prompt.seed.key);
        Ok(match self.storage.ingest_prompt(prompt).await? {
            PromptOutcome::Stored {
                session_db_id,
                prompt_number,
                ..
            } => InitOutcome::Stored {
                session_db_id,
                prompt_number,
                context_injected: live,
            },
            PromptOutcome::Private {
                session_db_id,
                prompt_number,
            } => InitOutcome::Private {
                session_db_id,
                prompt_number,
            },
            PromptOutcome::Duplicate {
                session_db_id,
                prompt_number,
            } => InitOutcome::Duplicate {
                session_db_id,
                prompt_number,
            },
        })
    }

    pub async fn observations(&self, body: Value, platform: String) -> Result<ObservationOutcome, IngestError> {
        let b: ObservationBody = typed(body)?;
        b.validate()?;
        let now = now_ms();
        let at = event_time(b.occurred_at_epoch, now);
        let pipeline = self.pipeline.clone();
        // Privacy processing of a large payload is CPU work: keep it off the async workers.
        let prepared = tokio::task::spawn_blocking(move || pipeline.tool_event(b, platform, at, now))
            .await
            .map_err(|_| IngestError::Pipeline)?;
        let event = match prepared {
            Ok(e) => e,
            Err(skip) => return Ok(ObservationOutcome::Skipped(skip)),
        };
        let key = event.seed.key.clone();
        Ok(match self.storage.ingest_tool_event(event).await? {
            ToolEventOutcome::Queued { pending_id, session_db_id } => {
                self.notify(key, session_db_id);
                ObservationOutcome::Queued { pending_id }
            }
            ToolEventOutcome::Duplicate => ObservationOutcome::Duplicate,
            ToolEventOutcome::Private => ObservationOutcome::Private,
        })
    }

    pub async fn summarize(&self, body: Value, platform: String) -> Result<SummarizeOutcome, IngestError> {
        let b: SummarizeBody = typed(body)?;
        b.validate()?;
        let now = now_ms();
        let req = match self.pipeline.summary_request(&b, platform, event_time(b.occurred_at_epoch, now)) {
            Ok(r) => r,
            Err(skip) => return Ok(SummarizeOutcome::Skipped(skip)),
        };
        let key = req.seed.key.clone();
        Ok(match self.storage.ingest_summary_request(req).await? {
            SummaryRequestOutcome::Queued {
                pending_id,
                session_db_id,
                replaced,
            } => {
                // A turn ended: what memd showed the session so far may have been used (issue 53).
                crate::action::service::check_uses(self.storage.clone(), key.content_session_id.clone());
                self.notify(key, session_db_id);
                SummarizeOutcome::Queued { pending_id, replaced }
            }
            SummaryRequestOutcome::Duplicate => SummarizeOutcome::Duplicate,
            SummaryRequestOutcome::Private => SummarizeOutcome::Private,
        })
    }

    pub async fn complete(&self, body: Value, platform: String) -> Result<CompleteOutcome, IngestError> {
        let b: CompleteBody = typed(body)?;
        b.validate()?;
        let key = SessionKey::new(platform, b.content_session_id.clone());
        let reason = b.reason.clone().unwrap_or_else(|| "other".into());
        let out = self
            .storage
            .complete_session(key.clone(), reason, b.event_id.clone(), now_ms())
            .await?;
        if matches!(out, Some(StoreComplete::Completing { .. } | StoreComplete::Completed { .. })) {
            crate::action::service::check_uses(self.storage.clone(), key.content_session_id.clone());
        }
        Ok(match out {
            None => CompleteOutcome::Duplicate,
            Some(StoreComplete::Unknown) => CompleteOutcome::UnknownSession,
            Some(StoreComplete::Completing { session_db_id, pending }) => {
                self.notify(key, session_db_id);
                CompleteOutcome::Completing { pending }
            }
            Some(StoreComplete::Completed { .. }) => CompleteOutcome::Completed,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_invalid_bodies_are_permanent() {
        assert!(IngestError::Invalid("x".into()).is_permanent());
        assert!(!IngestError::Store(StoreError::Overloaded).is_permanent());
        assert!(!IngestError::Store(StoreError::Closed).is_permanent());
        assert!(!IngestError::Pipeline.is_permanent());
    }

    #[test]
    fn non_objects_are_invalid() {
        let e = typed::<CompleteBody>(serde_json::json!([1])).unwrap_err();
        assert!(e.is_permanent());
        let e = typed::<CompleteBody>(serde_json::json!({})).unwrap_err();
        assert!(e.to_string().contains("contentSessionId"), "{e}");
    }
}
