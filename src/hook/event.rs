//! One ingest event of a hook run (docs/spec/hooks.md §2.8): its random UUID v4 `eventId`, the time
//! stdin was parsed, the route it goes to, and the body — shrunk below 4 MiB before sending.

use serde_json::{Value, json};

use crate::protocol::IngestRoute;

/// Bodies above this are shrunk (the server limit is 5 MiB).
pub const BODY_MAX_BYTES: usize = 4 * 1024 * 1024;
const KEEP_HEAD: usize = 1024 * 1024;
const KEEP_TAIL: usize = 512 * 1024;
const SHRINKABLE: [&str; 4] = ["tool_response", "tool_input", "prompt", "last_assistant_message"];

#[derive(Debug, Clone)]
pub struct IngestEvent {
    pub handler: &'static str,
    pub route: IngestRoute,
    pub event_id: String,
    pub body: Value,
}

impl IngestEvent {
    /// Adds `eventId` and `occurredAtEpoch` to `body` (a JSON object).
    pub fn new(handler: &'static str, route: IngestRoute, mut body: Value, occurred_at: i64) -> Self {
        let event_id = uuid_v4();
        body["eventId"] = json!(event_id);
        body["occurredAtEpoch"] = json!(occurred_at);
        Self {
            handler,
            route,
            event_id,
            body,
        }
    }

    /// The serialised body, shrinking the largest big field while it exceeds 4 MiB.
    pub fn serialized(&mut self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec(&self.body).unwrap_or_default();
        let mut rounds = 0;
        while bytes.len() > BODY_MAX_BYTES && rounds < SHRINKABLE.len() {
            rounds += 1;
            let largest = SHRINKABLE
                .iter()
                .filter_map(|k| self.body.get(*k).map(|v| (*k, serialized_len(v))))
                .filter(|(k, _)| !self.body[*k].get("memd_truncated").is_some_and(|t| t == true))
                .max_by_key(|(_, n)| *n);
            let Some((key, _)) = largest else { break };
            let shrunk = shrink(&self.body[key]);
            self.body[key] = shrunk;
            bytes = serde_json::to_vec(&self.body).unwrap_or_default();
        }
        bytes
    }
}

fn serialized_len(v: &Value) -> usize {
    match v {
        Value::String(s) => s.len(),
        other => serde_json::to_vec(other).map(|b| b.len()).unwrap_or(0),
    }
}

/// Largest prefix of `s` of at most `n` bytes on a character boundary.
fn head(s: &str, n: usize) -> &str {
    let mut end = n.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

fn tail(s: &str, n: usize) -> &str {
    let mut start = s.len().saturating_sub(n);
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}

fn shrink(v: &Value) -> Value {
    match v {
        Value::String(s) => Value::String(format!("{}…[truncated by memd]", head(s, KEEP_HEAD))),
        other => {
            let text = other.to_string();
            json!({
                "memd_truncated": true,
                "original_bytes": text.len(),
                "text": format!("{}…{}", head(&text, KEEP_HEAD), tail(&text, KEEP_TAIL)),
            })
        }
    }
}

/// A random UUID v4 from the OS generator.
pub fn uuid_v4() -> String {
    let mut b = [0u8; 16];
    fill_random(&mut b);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = crate::data_dir::hex(&b);
    format!("{}-{}-{}-{}-{}", &h[0..8], &h[8..12], &h[12..16], &h[16..20], &h[20..32])
}

fn fill_random(buf: &mut [u8]) {
    // SAFETY: getrandom writes at most buf.len() bytes into a valid, owned buffer.
    let n = unsafe { libc::getrandom(buf.as_mut_ptr().cast(), buf.len(), 0) };
    if n != buf.len() as isize {
        // Fall back to time and pid: unique enough for an idempotency key.
        let seed = crate::clock::now_ms() as u128 ^ ((std::process::id() as u128) << 64);
        buf.copy_from_slice(&seed.to_le_bytes()[..buf.len().min(16)]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_shape() {
        let u = uuid_v4();
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4");
        assert_ne!(u, uuid_v4());
    }

    #[test]
    fn large_bodies_are_shrunk() {
        let big = "é".repeat(3 * 1024 * 1024);
        let mut e = IngestEvent::new(
            "observation",
            IngestRoute::Observations,
            json!({"tool_input": {"x": big}, "tool_response": big}),
            1,
        );
        let bytes = e.serialized();
        assert!(bytes.len() <= BODY_MAX_BYTES);
        assert!(e.body["tool_response"].as_str().unwrap().ends_with("…[truncated by memd]"));
        assert_eq!(e.body["tool_input"]["memd_truncated"], true);
    }
}
