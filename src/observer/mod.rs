//! The observer: everything that turns a claimed batch of tool events into observations, except
//! the transport. The prompt it sends (Part A + events), the tolerant reader of the model's XML
//! reply, the job state machine of one batch (parts, overflow splits, one re-ask), the output
//! bounds, file evidence, and the deterministic extractive observer used when no LLM is available
//! (docs/spec/pipeline.md §8–§16). the providers are the transports only (HTTP APIs, the
//! `claude` CLI); the provider actor (`actors/provider.rs`) runs jobs and calls them.
//!
//! Everything here is pure: no I/O, no filesystem access, no clock.
//!
//! | file | concern |
//! |---|---|
//! | [`types`] | drafts and the types handed between batching, the observer and the store |
//! | [`prompt`] | Part A and the per-batch prompt (truncation, neutralisation) |
//! | [`xml`] | the reply classifier and the tolerant XML parser |
//! | [`job`] | one batch's state machine: parts, overflow splits, re-ask, extractive fallback |
//! | [`bounds`] | field bounds and final clean-up of every observation and summary stored |
//! | [`evidence`] | file evidence from the events, and correction of what the observer claims |
//! | [`extractive`] | the deterministic observer |
//! | [`fallback`] | the extractive observer over a whole claimed batch (bounded, re-redacted) |
//! | [`tool_names`] | other hosts' tool names read as Claude Code's |
//! | [`written`] | the text a call wrote, apart from the rest of its input (the raw index's columns) |

pub mod bounds;
pub mod evidence;
pub mod extractive;
pub mod fallback;
pub mod grounding;
pub mod job;
pub mod prompt;
pub mod setup;
pub(crate) mod tool_names;
pub mod types;
pub mod written;
pub mod xml;
