//! A fake Gemini API (`POST /v1beta/models/<model>:streamGenerateContent?alt=sse` and the plain
//! `:generateContent`) for driving the real Gemini CLI offline (`GOOGLE_GEMINI_BASE_URL`): the
//! first turn calls `run_shell_command` (`echo memd-gemini-probe`), the turn after its
//! `functionResponse` answers with text. Every request body is recorded.
#![allow(dead_code)]

use serde_json::{Value, json};

use super::fake_server::FakeServer;

pub const PROBE: &str = "echo memd-gemini-probe";
/// The call's `description` (Gemini's shell tool takes one, as Claude Code's Bash does): memd
/// titles a described shell call by it ("Ran print the memd gemini probe").
pub const PROBE_DESCRIPTION: &str = "print the memd gemini probe";

/// The fake API: `url()` for `GOOGLE_GEMINI_BASE_URL`.
pub struct FakeGemini(pub FakeServer);

impl FakeGemini {
    pub fn start() -> Self {
        Self(FakeServer::start(route))
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.0.port)
    }

    pub fn requests(&self) -> Vec<Value> {
        self.0.requests()
    }
}

fn route(method: &str, path: &str, body: &Value) -> Option<(&'static str, &'static str, String)> {
    if method != "POST" || !path.contains("Content") {
        return None;
    }
    let a = answer(body);
    Some(match path.contains("alt=sse") {
        true => ("200 OK", "text/event-stream", format!("data: {a}\r\n\r\n")),
        false => ("200 OK", "application/json", a.to_string()),
    })
}

fn answer(body: &Value) -> Value {
    let parts = body["contents"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["parts"].as_array())
        .flatten();
    let answered = parts.clone().any(|p| p.get("functionResponse").is_some());
    let offered = body["tools"].to_string().contains("run_shell_command");
    let part = match (answered, offered) {
        (false, true) => {
            json!({"functionCall": {"name": "run_shell_command", "args": {"command": PROBE, "description": PROBE_DESCRIPTION}}})
        }
        _ => json!({"text": "All done."}),
    };
    json!({"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}, "modelVersion": "gemini-fake"})
}
