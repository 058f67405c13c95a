//! The observer request (`docs/spec/pipeline.md` §8–§9), built from a mode. Pure: no I/O.
//!
//! * Part A ([`part_a`]) depends on the mode alone — no dates, ids, paths or counts — so it is
//!   byte-identical across sessions, projects and days and provider prompt caches hit. It goes
//!   into [`ObserverRequest::system`].
//! * Part B ([`part_b`]) opens the session part: the mode's banner for a first or a later prompt,
//!   then the user request and its date.
//! * Part C: one `<observed_from_primary_session>` block per tool event ([`render_event`]), then
//!   the fixed reply instructions ([`reply_instructions`]). Summary requests replace Part C with
//!   the checkpoint section of §8.4 ([`build_summary_request`]).
//!
//! Every interpolated value is envelope-neutralised ([`neutralise_envelope`]) so tool output can
//! never close or forge an envelope element; the `<elided …/>` marker of §9 is inserted after that.

mod render;

pub use render::{neutralise_envelope, render_value, truncate_field};

use crate::modes::Mode;
use render::{bound_chars, cut_chars, failure_outcome, observation_skeleton, render_field, summary_skeleton};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::fmt::Write as _;

/// `MEMD_OBSERVER_FIELD_MAX_CHARS` default (§9).
pub const DEFAULT_FIELD_MAX_CHARS: usize = 16_000;
/// Floor of the field limit on the overflow path (§9, §13).
pub const MIN_FIELD_MAX_CHARS: usize = 2_000;
/// `<user_request>` bound (§8.2).
pub const USER_REQUEST_MAX_CHARS: usize = 4_000;
/// Newest recorded observations listed in a summary request (§8.4).
pub const RECORDED_OBSERVATIONS_MAX: usize = 50;
/// Title bound in the recorded-observations list (§8.4).
pub const RECORDED_TITLE_MAX_CHARS: usize = 160;

/// One tool event as the observer sees it (already privacy-processed).
#[derive(Debug, Clone, PartialEq)]
pub struct PromptEvent {
    pub tool_name: String,
    pub tool_input: Value,
    /// For failures (`is_error`): `{"error": …, "is_interrupt": …}`.
    pub tool_response: Value,
    pub is_error: bool,
    pub cwd: Option<String>,
    pub occurred_at_iso: String,
}

/// The session part of a request (Part B).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptSession {
    /// 1-based prompt number within the session; ≤ 1 opens with `header_memory_start`.
    pub prompt_number: i64,
    /// Stored prompt text (ignored when private).
    pub user_request: String,
    pub is_private: bool,
    /// Prompt date, `YYYY-MM-DD` (UTC).
    pub requested_at_date: String,
}

/// An observation already stored for the prompt, listed in summary requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedObservation {
    pub obs_type: String,
    pub title: String,
}

/// A rendered request: `system` = Part A, `user` = Parts B and C (or the summary section).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObserverRequest {
    pub system: String,
    pub user: String,
}

impl ObserverRequest {
    /// Size of the whole rendered request in chars (the batching bound of §7).
    pub fn total_chars(&self) -> usize {
        self.system.chars().count() + self.user.chars().count()
    }
}

const REDACTED_MARKER: &str = "<redacted type=";

const REPLY_RULES: [&str; 4] = [
    "(1) A field containing an <elided …/> marker is partial: describe only what is shown and never guess the omitted middle.",
    "(2) Answer with one or more <observation> elements, or with <skip_summary reason=\"…\"/> when nothing here is worth keeping.",
    "(3) Concrete debugging findings (log lines, queue or database state, code paths) are durable discoveries: record them.",
    "(4) Write no prose outside the XML: it is discarded.",
];
const REDACTION_RULE: &str =
    "(5) A <redacted type=…/> marker stands for a removed secret: do not guess it and do not copy the marker into memory.";
const SUMMARY_ROOT_RULE: &str = "The root element must be <summary>; any <observation> in this reply is ignored.";

/// Part A (§8.1): the mode's fixed sections and the observation skeleton.
pub fn part_a(mode: &Mode) -> String {
    let skeleton = observation_skeleton(mode);
    let sections = [
        mode.prompt("system_identity"),
        mode.prompt("observer_role"),
        mode.prompt("spatial_awareness"),
        mode.prompt("recording_focus"),
        mode.prompt("skip_guidance"),
        mode.prompt("output_format_header"),
        skeleton.as_str(),
        mode.prompt("format_examples"),
        mode.prompt("footer"),
    ];
    join_sections(&sections)
}

/// Lowercase hex `sha256(Part A)`, shown per mode by `memd status`.
pub fn part_a_sha256(mode: &Mode) -> String {
    let digest = Sha256::digest(part_a(mode).as_bytes());
    let mut hex = String::with_capacity(64);
    for byte in digest.iter() {
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

/// Part B (§8.2): banner(s) and the user request block.
pub fn part_b(mode: &Mode, session: &PromptSession) -> String {
    let banner = if session.prompt_number <= 1 {
        join_sections(&[mode.prompt("header_memory_start")])
    } else {
        join_sections(&[
            mode.prompt("continuation_greeting"),
            mode.prompt("header_memory_continued"),
            mode.prompt("continuation_instruction"),
        ])
    };
    let request = if session.is_private {
        "[private]".to_owned()
    } else {
        neutralise_envelope(&cut_chars(&session.user_request, USER_REQUEST_MAX_CHARS))
    };
    let block = format!(
        "<observed_from_primary_session>\n  <user_request>{request}</user_request>\n  <requested_at>{}</requested_at>\n</observed_from_primary_session>",
        neutralise_envelope(&session.requested_at_date)
    );
    join_sections(&[&banner, &block])
}

/// One Part C block (§8.3) with fields truncated to `field_max_chars` (§9).
pub fn render_event(event: &PromptEvent, field_max_chars: usize) -> String {
    let outcome = if event.is_error {
        failure_outcome(&event.tool_response)
    } else {
        event.tool_response.clone()
    };
    let mut out = String::from("<observed_from_primary_session>\n");
    let _ = writeln!(out, "  <what_happened>{}</what_happened>", neutralise_envelope(&event.tool_name));
    let _ = writeln!(out, "  <occurred_at>{}</occurred_at>", neutralise_envelope(&event.occurred_at_iso));
    if let Some(cwd) = event.cwd.as_deref().filter(|c| !c.is_empty()) {
        let _ = writeln!(out, "  <working_directory>{}</working_directory>", neutralise_envelope(cwd));
    }
    let params = render_field(&render_value(&event.tool_input), field_max_chars);
    let _ = writeln!(out, "  <parameters>{params}</parameters>");
    let outcome = render_field(&render_value(&outcome), field_max_chars);
    let _ = writeln!(out, "  <outcome>{outcome}</outcome>");
    out.push_str("</observed_from_primary_session>");
    out
}

/// The fixed reply instructions after the last event, one per line; (5) only when `redacted`.
pub fn reply_instructions(redacted: bool) -> String {
    let mut lines = REPLY_RULES.join("\n");
    if redacted {
        lines.push('\n');
        lines.push_str(REDACTION_RULE);
    }
    lines
}

/// A full observation request for a batch of events.
pub fn build_observation_request(mode: &Mode, session: &PromptSession, events: &[PromptEvent], field_max_chars: usize) -> ObserverRequest {
    let mut user = part_b(mode, session);
    for event in events {
        user.push_str("\n\n");
        user.push_str(&render_event(event, field_max_chars));
    }
    let redacted = user.contains(REDACTED_MARKER);
    user.push_str("\n\n");
    user.push_str(&reply_instructions(redacted));
    ObserverRequest {
        system: part_a(mode),
        user,
    }
}

/// A summary request (§8.4). `recorded` is in stored order (oldest first); the newest
/// [`RECORDED_OBSERVATIONS_MAX`] are listed, in that order.
pub fn build_summary_request(
    mode: &Mode,
    session: &PromptSession,
    recorded: &[RecordedObservation],
    last_assistant_message: &str,
    field_max_chars: usize,
) -> ObserverRequest {
    let recorded_block = if recorded.is_empty() {
        String::new()
    } else {
        let newest = &recorded[recorded.len().saturating_sub(RECORDED_OBSERVATIONS_MAX)..];
        let mut block = String::from("<recorded_observations>\n");
        for obs in newest {
            let title = obs.title.split_whitespace().collect::<Vec<_>>().join(" ");
            let title = bound_chars(&title, RECORDED_TITLE_MAX_CHARS);
            let _ = writeln!(block, "- [{}] {}", neutralise_envelope(&obs.obs_type), neutralise_envelope(&title));
        }
        block.push_str("</recorded_observations>");
        block
    };
    let message = format!(
        "{}\n<last_assistant_message>{}</last_assistant_message>",
        mode.prompt("summary_context_label").trim(),
        render_field(last_assistant_message, field_max_chars)
    );
    let skeleton = summary_skeleton(mode);
    let head = part_b(mode, session);
    let mut user = join_sections(&[
        &head,
        mode.prompt("header_summary_checkpoint"),
        mode.prompt("summary_instruction"),
        &recorded_block,
        message.trim_start(),
        mode.prompt("summary_format_instruction"),
        &skeleton,
        mode.prompt("summary_footer"),
    ]);
    user.push_str("\n\n");
    user.push_str(SUMMARY_ROOT_RULE);
    if user.contains(REDACTED_MARKER) {
        user.push('\n');
        user.push_str(REDACTION_RULE.trim_start_matches("(5) "));
    }
    ObserverRequest {
        system: part_a(mode),
        user,
    }
}

/// Non-blank sections, trimmed, separated by one blank line.
fn join_sections(sections: &[&str]) -> String {
    sections
        .iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n")
}

#[cfg(test)]
mod overhead_tests;
#[cfg(test)]
mod tests;
