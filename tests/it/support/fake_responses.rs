//! A fake OpenAI Responses API (`POST /v1/responses`, streamed as SSE) for driving the real Codex
//! CLI offline through a custom `model_providers` entry: the first turn of a conversation calls
//! the shell tool Codex offers (`echo memd-codex-probe`), the turn after the tool's output answers
//! with a message. Every request body is recorded.
#![allow(dead_code)]

use serde_json::{Value, json};

use super::fake_server::FakeServer;

pub const PROBE: &str = "echo memd-codex-probe";

/// The fake API: `base_url()` for Codex's `model_providers` entry.
pub struct FakeResponses(pub FakeServer);

impl FakeResponses {
    pub fn start() -> Self {
        Self(FakeServer::start(route))
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.0.port)
    }

    pub fn requests(&self) -> Vec<Value> {
        self.0.requests()
    }
}

fn route(method: &str, path: &str, body: &Value) -> Option<(&'static str, &'static str, String)> {
    (method == "POST" && path.ends_with("/responses")).then(|| ("200 OK", "text/event-stream", sse(answer(body))))
}

/// The turn's one output item.
fn answer(body: &Value) -> Value {
    let inputs = body["input"].as_array().cloned().unwrap_or_default();
    let answered = inputs.iter().any(|i| i["type"] == "function_call_output");
    let tools: Vec<&str> = body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str())
        .collect();
    let shell = ["shell_command", "exec_command", "shell"].into_iter().find(|n| tools.contains(n));
    match (answered, shell) {
        (false, Some(name)) => {
            let args = match name {
                "exec_command" => json!({"cmd": PROBE}),
                "shell" => json!({"command": ["bash", "-lc", PROBE]}),
                _ => json!({"command": PROBE}),
            };
            json!({"type": "function_call", "id": "fc_1", "call_id": "call_probe_1", "name": name, "arguments": args.to_string()})
        }
        _ => json!({"type": "message", "id": "msg_1", "role": "assistant",
            "content": [{"type": "output_text", "text": "All done."}]}),
    }
}

fn sse(item: Value) -> String {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let id = format!("resp_{}", N.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
    let usage = json!({"input_tokens": 10, "input_tokens_details": null, "output_tokens": 5,
        "output_tokens_details": null, "total_tokens": 15});
    [
        json!({"type": "response.created", "response": {"id": id}}),
        json!({"type": "response.output_item.done", "item": item}),
        json!({"type": "response.completed", "response": {"id": id, "usage": usage}}),
    ]
    .iter()
    .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap_or("")))
    .collect()
}
