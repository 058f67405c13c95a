//! A fake OpenAI Responses API (`POST /v1/responses`, streamed as SSE) for driving the real Codex
//! CLI offline through a custom `model_providers` entry: the first turn of a conversation calls
//! the shell tool Codex offers (`echo memd-codex-probe`), the turn after the tool's output answers
//! with a message. Every request body is recorded.
#![allow(dead_code)]

use std::io::{BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

pub const PROBE: &str = "echo memd-codex-probe";

pub struct FakeResponses {
    pub port: u16,
    requests: Arc<Mutex<Vec<Value>>>,
}

impl FakeResponses {
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind fake responses");
        let port = listener.local_addr().expect("addr").port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let shared = requests.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let shared = shared.clone();
                std::thread::spawn(move || serve(stream, &shared));
            }
        });
        Self { port, requests }
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    pub fn requests(&self) -> Vec<Value> {
        self.requests.lock().unwrap().clone()
    }
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

fn sse(item: Value, n: usize) -> String {
    let id = format!("resp_{n}");
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

fn serve(stream: TcpStream, shared: &Arc<Mutex<Vec<Value>>>) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone stream"));
    let mut stream = stream;
    loop {
        let Some((method, path, raw)) = super::http_read::next_request(&mut reader) else {
            return;
        };
        let (status, content_type, text) = if method == "POST" && path.ends_with("/responses") {
            let body: Value = serde_json::from_slice(&raw).unwrap_or(Value::Null);
            let mut g = shared.lock().unwrap();
            g.push(body.clone());
            let n = g.len();
            drop(g);
            ("200 OK", "text/event-stream", sse(answer(&body), n))
        } else {
            ("404 Not Found", "application/json", "{}".to_string())
        };
        let head = format!(
            "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: keep-alive\r\n\r\n",
            text.len()
        );
        if stream
            .write_all(head.as_bytes())
            .and_then(|_| stream.write_all(text.as_bytes()))
            .is_err()
        {
            return;
        }
    }
}
