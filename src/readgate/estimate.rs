//! What the read gate would have done on recorded sessions (`memd replay --read-gate`): the
//! sessions' Read and Write calls in time order; a whole-file Read of a code file at least the
//! threshold in size is *affected* when an earlier call in the recordings gave memd the file's
//! full text (the outline's evidence). Bytes saved = the read's bytes minus the reason's bytes:
//! an upper bound, since the agent may then read a part, or the whole file again.

use std::collections::HashMap;

use serde::Serialize;
use serde_json::Value;

use super::outline::outline;
use super::{is_code, reason, whole_read};
use crate::replay::event::{EventKind, SessionEvents};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct GateEstimate {
    pub sessions: usize,
    pub reads: usize,
    pub whole_reads: usize,
    /// Whole-file reads of code files of at least `min_bytes`.
    pub large_code_whole_reads: usize,
    pub large_code_bytes: u64,
    /// Of those, the ones memd had seen before: the gate would answer them.
    pub affected: usize,
    pub affected_bytes: u64,
    pub reason_bytes: u64,
    pub saved_bytes_upper_bound: u64,
    pub min_bytes: u64,
}

/// The full text a Read's response carries (`file.content` of a read from line 1 to the end), or a
/// Write's content.
pub fn full_text<'a>(tool: &str, input: &'a Value, response: &'a Value) -> Option<&'a str> {
    match tool {
        "Write" => input["content"].as_str(),
        "Read" if whole_read(input) => {
            let f = &response["file"];
            let complete = f["startLine"].as_u64().is_none_or(|s| s <= 1)
                && f["numLines"].as_u64().zip(f["totalLines"].as_u64()).is_none_or(|(n, t)| n >= t);
            f["content"].as_str().filter(|_| complete).or_else(|| response.as_str())
        }
        _ => None,
    }
}

/// The estimate over `sessions` (taken in the order given: oldest first).
pub fn estimate(sessions: &[SessionEvents], min_bytes: u64) -> GateEstimate {
    let mut e = GateEstimate {
        sessions: sessions.len(),
        min_bytes,
        ..Default::default()
    };
    let mut seen: HashMap<String, (String, i64)> = HashMap::new();
    for s in sessions {
        for ev in s.events.iter().filter(|ev| ev.kind == EventKind::PostToolUse) {
            let (tool, input, response) = (
                ev.tool_name().unwrap_or_default(),
                &ev.payload["tool_input"],
                &ev.payload["tool_response"],
            );
            let path = input["file_path"].as_str().unwrap_or_default().to_string();
            if tool == "Read" {
                e.reads += 1;
            }
            let text = full_text(tool, input, response);
            if tool == "Read" && whole_read(input) {
                e.whole_reads += 1;
                let bytes = text.map_or(0, |t| t.len() as u64);
                if is_code(&path) && bytes >= min_bytes {
                    e.large_code_whole_reads += 1;
                    e.large_code_bytes += bytes;
                    if let Some((before, at)) = seen.get(&path) {
                        let r = reason(
                            &path,
                            bytes,
                            text.map_or(0, |t| t.lines().count()),
                            &crate::clock::iso(*at),
                            &outline(before),
                        );
                        e.affected += 1;
                        e.affected_bytes += bytes;
                        e.reason_bytes += r.len() as u64;
                        e.saved_bytes_upper_bound += bytes.saturating_sub(r.len() as u64);
                    }
                }
            }
            if let Some(t) = text.filter(|_| !path.is_empty()) {
                seen.insert(path, (t.to_string(), ev.at_ms));
            }
        }
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::event::{HookEvent, Origin};
    use serde_json::json;

    fn post(tool: &str, input: Value, response: Value, at: i64) -> HookEvent {
        HookEvent {
            kind: EventKind::PostToolUse,
            origin: Origin::Main,
            at_ms: at,
            payload: json!({"tool_name": tool, "tool_input": input, "tool_response": response}),
        }
    }

    #[test]
    fn a_second_whole_read_of_a_large_known_file_is_affected() {
        let big = "fn a() {\n    1\n}\n".repeat(3_000);
        let read = |at| {
            post(
                "Read",
                json!({"file_path": "/w/src/big.rs"}),
                json!({"file": {"content": big, "startLine": 1}}),
                at,
            )
        };
        let part = post(
            "Read",
            json!({"file_path": "/w/src/big.rs", "offset": 10, "limit": 5}),
            json!({}),
            3,
        );
        let small = post(
            "Read",
            json!({"file_path": "/w/src/small.rs"}),
            json!({"file": {"content": "fn s() {}"}}),
            4,
        );
        let session = SessionEvents {
            events: vec![read(1), part, read(5), small],
            ..Default::default()
        };
        let e = estimate(&[session], 32_768);
        assert_eq!((e.reads, e.whole_reads, e.large_code_whole_reads, e.affected), (4, 3, 2, 1));
        assert_eq!(e.affected_bytes, big.len() as u64);
        assert!(e.saved_bytes_upper_bound > 0 && e.saved_bytes_upper_bound < big.len() as u64);
    }
}
