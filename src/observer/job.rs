//! One claimed batch on its way through an LLM observer (docs/spec/pipeline.md §8–§16), pure.
//!
//! A job is a queue of parts (event ranges of the batch, each with its field limit). Each part
//! becomes one self-contained request; its reply is classified and parsed, observations get their
//! file evidence corrected from that part's events. Overflow splits a part in halves, a one-event
//! part is retried with the field limit halved (down to 2,000), then handed to the extractive
//! observer. Prose gets exactly one re-ask (same request + the reply as an assistant turn + a
//! corrective user turn); prose again sends the part to the extractive observer.

use std::collections::VecDeque;
use std::ops::Range;

use super::bounds::finish_output;
use super::evidence;
use super::fallback as extractive;
use super::prompt::{
    MIN_FIELD_MAX_CHARS, PromptEvent, PromptSession, RecordedObservation, build_observation_request, build_summary_request,
};
use super::types::{BatchOutput, BatchWork, ClaimedBatch, ObservationDraft, SummaryDraft, UsageDelta};
use super::xml::{ParsedReply, ProseKind, ReplyClass, classify_reply, parse_reply};
use crate::clock::{day, iso};
use crate::modes::Mode;
use crate::pipeline::privacy::Privacy;
use crate::providers::{CallError, LlmRequest, Role, Turn};

/// The corrective user turn of a re-ask (§13).
pub const CORRECTIVE_TURN: &str = "Your reply was not in the required format. Answer again using only XML: one or more \
<observation> elements (or <summary> when a summary was requested), or <skip_summary reason=\"…\"/> when nothing is worth \
keeping. Write no prose outside the XML.";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    pub range: Range<usize>,
    pub field_max: usize,
}

/// What to do after a call's answer was applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// The part is done; go on with the next one.
    Next,
    /// Prose: ask again once.
    Reask,
    /// Prose after the re-ask (or an unusable part): the extractive observer takes the part.
    Extractive,
    Error(CallError),
}

pub struct Job {
    pub batch: Box<ClaimedBatch>,
    pub parts: VecDeque<Part>,
    /// The prose reply of the current part, when it is being re-asked.
    pub reask: Option<String>,
    pub observations: Vec<ObservationDraft>,
    pub summary: Option<SummaryDraft>,
    pub extractive_ranges: Vec<Range<usize>>,
    pub summary_extractive: bool,
    pub calls: i64,
    pub failures: i64,
    pub reasks: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    /// When the session stops waiting for this batch: no call starts after it, and a call still
    /// open then ends as a transient failure (set by the caller; None = no deadline).
    pub deadline: Option<tokio::time::Instant>,
}

impl Job {
    pub fn new(batch: Box<ClaimedBatch>, field_max: usize) -> Self {
        let n = match &batch.work {
            BatchWork::Observations(events) => events.len(),
            BatchWork::Summary { .. } => 0,
        };
        Self {
            batch,
            parts: VecDeque::from([Part { range: 0..n, field_max }]),
            reask: None,
            observations: Vec::new(),
            summary: None,
            extractive_ranges: Vec::new(),
            summary_extractive: false,
            calls: 0,
            failures: 0,
            reasks: 0,
            input_tokens: 0,
            output_tokens: 0,
            deadline: None,
        }
    }

    fn session(&self) -> PromptSession {
        let m = &self.batch.meta;
        PromptSession {
            prompt_number: m.prompt_number,
            user_request: m.prompt_text.clone().unwrap_or_default(),
            is_private: m.prompt_private,
            requested_at_date: day(m.prompt_epoch),
        }
    }

    /// The request of the current part (None when no part is left).
    pub fn request(&self, mode: &Mode) -> Option<LlmRequest> {
        let part = self.parts.front()?;
        let req = match &self.batch.work {
            BatchWork::Observations(events) => {
                let events: Vec<PromptEvent> = events
                    .get(part.range.clone())
                    .unwrap_or_default()
                    .iter()
                    .map(|e| PromptEvent {
                        tool_name: e.tool_name.clone(),
                        tool_input: e.tool_input.clone(),
                        tool_response: e.tool_response.clone(),
                        is_error: e.is_error,
                        cwd: e.cwd.clone(),
                        occurred_at_iso: iso(e.occurred_at_epoch),
                    })
                    .collect();
                build_observation_request(mode, &self.session(), &events, part.field_max)
            }
            BatchWork::Summary {
                last_assistant_message,
                observation_titles,
                observation_types,
            } => {
                let recorded: Vec<RecordedObservation> = observation_titles
                    .iter()
                    .zip(observation_types)
                    .map(|(title, t)| RecordedObservation {
                        obs_type: t.clone(),
                        title: title.clone(),
                    })
                    .collect();
                build_summary_request(mode, &self.session(), &recorded, last_assistant_message, part.field_max)
            }
        };
        let mut turns = vec![Turn {
            role: Role::User,
            text: req.user,
        }];
        if let Some(previous) = &self.reask {
            turns.push(Turn {
                role: Role::Assistant,
                text: previous.clone(),
            });
            turns.push(Turn {
                role: Role::User,
                text: CORRECTIVE_TURN.into(),
            });
        }
        Some(LlmRequest { system: req.system, turns })
    }

    /// Applies a reply to the current part (§11–§14.1).
    pub fn apply_reply(&mut self, text: &str, mode: &Mode) -> Step {
        let class = classify_reply(text);
        let snippet = || text.chars().take(200).collect::<String>();
        match class {
            ReplyClass::Idle => Step::Next,
            ReplyClass::Xml => {
                match parse_reply(text, &mode.type_ids()) {
                    ParsedReply::Observations(parsed) if !self.is_summary() => self.add_observations(parsed),
                    ParsedReply::Summary(s) if self.is_summary() => self.summary = Some(s),
                    _ => {}
                }
                Step::Next
            }
            ReplyClass::Prose(ProseKind::Auth) => Step::Error(CallError::Auth(snippet())),
            ReplyClass::Prose(ProseKind::Quota) => Step::Error(CallError::Quota {
                retry_after_ms: None,
                reason: snippet(),
            }),
            ReplyClass::Prose(ProseKind::Overflow) => Step::Error(CallError::Overflow(snippet())),
            ReplyClass::Prose(ProseKind::Plain) if self.reask.is_none() => {
                self.reask = Some(text.to_string());
                self.reasks += 1;
                Step::Reask
            }
            ReplyClass::Prose(ProseKind::Plain) => Step::Extractive,
        }
    }

    fn is_summary(&self) -> bool {
        matches!(self.batch.work, BatchWork::Summary { .. })
    }

    fn add_observations(&mut self, parsed: Vec<ObservationDraft>) {
        let root = self.batch.meta.project_root.clone();
        let part = match (&self.batch.work, self.parts.front()) {
            (BatchWork::Observations(events), Some(p)) => events.get(p.range.clone()).unwrap_or_default(),
            _ => &[][..],
        };
        let ev = evidence::collect(part, &root);
        let words = super::grounding::batch_words(part);
        for mut draft in parsed {
            evidence::correct(&mut draft, &ev, &root);
            let dropped = super::grounding::drop_ungrounded(&mut draft, &words);
            if dropped > 0 {
                tracing::info!(dropped, "observer named identifiers the batch does not hold; dropped");
            }
            self.observations.push(draft);
        }
    }

    /// The current part is done.
    pub fn advance(&mut self) {
        self.parts.pop_front();
        self.reask = None;
    }

    /// The current part goes to the extractive observer.
    pub fn part_extractive(&mut self) {
        if let Some(p) = self.parts.pop_front() {
            if self.is_summary() {
                self.summary_extractive = true;
            } else {
                self.extractive_ranges.push(p.range);
            }
        }
        self.reask = None;
    }

    /// Every part left goes to the extractive observer.
    pub fn rest_extractive(&mut self) {
        while !self.parts.is_empty() {
            self.part_extractive();
        }
    }

    /// Overflow: halve the part, or its field limit, or give it to the extractive observer.
    pub fn on_overflow(&mut self) {
        self.reask = None;
        let Some(p) = self.parts.pop_front() else { return };
        let len = p.range.len();
        if len > 1 {
            let mid = p.range.start + len / 2;
            self.parts.push_front(Part {
                range: mid..p.range.end,
                field_max: p.field_max,
            });
            self.parts.push_front(Part {
                range: p.range.start..mid,
                field_max: p.field_max,
            });
        } else if p.field_max / 2 >= MIN_FIELD_MAX_CHARS {
            self.parts.push_front(Part {
                range: p.range,
                field_max: p.field_max / 2,
            });
        } else {
            self.parts.push_front(p);
            self.part_extractive();
        }
    }

    /// Whether any part went to the extractive observer or nothing came from the model.
    fn llm_output(&self) -> bool {
        !self.observations.is_empty() || self.summary.is_some()
    }

    /// The batch's output and the usage not carried by it (`provider`/`model` of the backend).
    pub fn finish(self, provider: &str, model: &str, mode: &Mode, privacy: &Privacy) -> (Box<ClaimedBatch>, BatchOutput, UsageDelta) {
        let types = mode.type_ids();
        let concepts = mode.concept_ids();
        let mut delta = UsageDelta {
            provider: provider.into(),
            model: model.into(),
            calls: self.calls,
            failures: self.failures,
            reasks: self.reasks,
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
        };
        let any_extractive = !self.extractive_ranges.is_empty() || self.summary_extractive;
        if any_extractive && !self.llm_output() {
            let out = extractive::observe_batch(&self.batch, &types, &concepts, privacy);
            return (self.batch, out, delta);
        }
        let mut observations = self.observations;
        let mut summary = self.summary;
        let (root, events) = match &self.batch.work {
            BatchWork::Observations(events) => (self.batch.meta.project_root.as_str(), events.as_slice()),
            BatchWork::Summary { .. } => ("", &[][..]),
        };
        for r in &self.extractive_ranges {
            let part = events.get(r.clone()).unwrap_or_default();
            observations.extend(extractive::observe_events(part, root, &types, &concepts, privacy).observations);
        }
        if self.summary_extractive && summary.is_none() {
            summary = extractive::observe_batch(&self.batch, &types, &concepts, privacy).summary;
        }
        // store_batch records this output's tokens as one call; the rest goes through the delta.
        delta.calls -= 1;
        delta.input_tokens = 0;
        delta.output_tokens = 0;
        let out = BatchOutput {
            observations,
            summary,
            origin: "observer",
            provider: provider.into(),
            model: model.into(),
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            source_rows: events.iter().map(|e| e.row_id).collect(),
        };
        (self.batch, finish_output(out, privacy), delta)
    }
}

#[cfg(test)]
mod tests;
