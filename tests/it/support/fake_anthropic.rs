//! A fake Anthropic Messages API for driving the real Claude Code CLI offline
//! (`ANTHROPIC_BASE_URL=http://127.0.0.1:<port>`): streaming (SSE) and plain JSON answers, scripted
//! tool calls, every request recorded.
//!
//! The script is a list of plans keyed by a word of the session's prompt: a plan is the tool calls
//! the "model" makes in order, then its closing text. The step of a plan is the number of
//! `tool_result` blocks already in the conversation, so each answer depends only on the request —
//! retries and parallel side requests (titles, summaries) cannot derail it.
#![allow(dead_code)]

use std::io::{BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

/// One scripted model turn.
#[derive(Debug, Clone)]
pub enum Turn {
    Tool { name: String, input: Value },
    Text(String),
}

pub fn tool(name: &str, input: Value) -> Turn {
    Turn::Tool {
        name: name.to_string(),
        input,
    }
}

/// A session's plan: chosen when its first prompt contains `key`.
#[derive(Debug, Clone)]
pub struct Plan {
    pub key: String,
    pub turns: Vec<Turn>,
}

#[derive(Debug, Clone)]
pub struct Request {
    pub path: String,
    pub body: Value,
}

impl Request {
    /// Every text of the request's messages (prompts, system reminders, tool results), joined.
    pub fn conversation_text(&self) -> String {
        let mut out = String::new();
        for m in self.body["messages"].as_array().into_iter().flatten() {
            collect_text(&m["content"], &mut out);
        }
        out
    }

    /// The session id Claude Code puts in `metadata.user_id`.
    pub fn session_id(&self) -> Option<String> {
        let meta: Value = serde_json::from_str(self.body["metadata"]["user_id"].as_str()?).ok()?;
        meta["session_id"].as_str().map(String::from)
    }

    pub fn tool_results(&self) -> usize {
        self.body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m["content"].as_array())
            .flatten()
            .filter(|b| b["type"] == "tool_result")
            .count()
    }
}

fn collect_text(v: &Value, out: &mut String) {
    match v {
        Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        Value::Array(items) => items.iter().for_each(|i| collect_text(i, out)),
        Value::Object(o) => {
            for key in ["text", "content"] {
                if let Some(x) = o.get(key) {
                    collect_text(x, out);
                }
            }
        }
        _ => {}
    }
}

struct Inner {
    plans: Vec<Plan>,
    requests: Vec<Request>,
    /// A plan's text also answers requests that offer no tools (a session run with `--tools ""`).
    toolless: bool,
}

pub struct FakeAnthropic {
    pub port: u16,
    inner: Arc<Mutex<Inner>>,
}

impl FakeAnthropic {
    pub fn start(plans: Vec<Plan>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind fake anthropic");
        let port = listener.local_addr().expect("addr").port();
        let inner = Arc::new(Mutex::new(Inner {
            plans,
            requests: Vec::new(),
            toolless: false,
        }));
        let shared = inner.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let shared = shared.clone();
                std::thread::spawn(move || serve(stream, &shared));
            }
        });
        Self { port, inner }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The Messages requests of the main conversation (those that offered tools), in order.
    pub fn conversation_requests(&self) -> Vec<Request> {
        let g = self.inner.lock().unwrap();
        g.requests
            .iter()
            .filter(|r| r.path.starts_with("/v1/messages") && !r.path.contains("count_tokens") && r.body["tools"].is_array())
            .cloned()
            .collect()
    }

    /// Plans answer sessions that offer the model no tools too (their text turns).
    pub fn answer_toolless_sessions(&self) {
        self.inner.lock().unwrap().toolless = true;
    }

    /// Every Messages request whose user turns mention `word`, tools offered or not.
    pub fn messages_mentioning(&self, word: &str) -> Vec<Request> {
        let g = self.inner.lock().unwrap();
        g.requests
            .iter()
            .filter(|r| r.path.starts_with("/v1/messages") && !r.path.contains("count_tokens"))
            .filter(|r| first_user_text(&r.body).contains(word))
            .cloned()
            .collect()
    }

    /// Requests whose conversation mentions `word` (the plan key of a session).
    pub fn requests_of(&self, word: &str) -> Vec<Request> {
        self.conversation_requests()
            .into_iter()
            .filter(|r| first_user_text(&r.body).contains(word))
            .collect()
    }
}

/// The last user message that is a typed prompt (not a tool result or a reminder), as text.
fn first_user_text(body: &Value) -> String {
    let mut out = String::new();
    for m in body["messages"].as_array().into_iter().flatten().filter(|m| m["role"] == "user") {
        collect_text(&m["content"], &mut out);
    }
    out
}

fn answer_for(inner: &Inner, body: &Value) -> (Vec<Value>, &'static str) {
    let offered = body["tools"].is_array();
    let prompt = first_user_text(body);
    let plan = inner.plans.iter().rev().find(|p| prompt.contains(&p.key));
    let step = Request {
        path: String::new(),
        body: body.clone(),
    }
    .tool_results();
    let answers = |t: &&Turn| offered || (inner.toolless && matches!(t, Turn::Text(_)));
    match plan.and_then(|p| p.turns.get(step)).filter(answers) {
        Some(Turn::Tool { name, input }) => {
            let id = format!("toolu_fake_{:04}_{step}", prompt.len() % 10_000);
            (
                vec![json!({"type": "tool_use", "id": id, "name": name, "input": input})],
                "tool_use",
            )
        }
        Some(Turn::Text(t)) => (vec![json!({"type": "text", "text": t})], "end_turn"),
        None => (vec![json!({"type": "text", "text": "Done."})], "end_turn"),
    }
}

fn sse(blocks: &[Value], stop: &str, model: &str) -> String {
    let mut events = vec![(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_fake", "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
    )];
    for (i, b) in blocks.iter().enumerate() {
        if b["type"] == "tool_use" {
            let start = json!({"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}});
            events.push((
                "content_block_start",
                json!({"type": "content_block_start", "index": i, "content_block": start}),
            ));
            let partial = b["input"].to_string();
            events.push((
                "content_block_delta",
                json!({"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": partial}}),
            ));
        } else {
            events.push((
                "content_block_start",
                json!({"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}}),
            ));
            events.push((
                "content_block_delta",
                json!({"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": b["text"]}}),
            ));
        }
        events.push(("content_block_stop", json!({"type": "content_block_stop", "index": i})));
    }
    events.push((
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 5}}),
    ));
    events.push(("message_stop", json!({"type": "message_stop"})));
    events.iter().map(|(e, d)| format!("event: {e}\ndata: {d}\n\n")).collect()
}

fn serve(stream: TcpStream, shared: &Arc<Mutex<Inner>>) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone stream"));
    let mut stream = stream;
    loop {
        let Some((method, path, raw)) = super::http_read::next_request(&mut reader) else {
            return;
        };
        let body: Value = serde_json::from_slice(&raw).unwrap_or(Value::Null);
        let (content_type, text) = if method == "POST" && path.contains("count_tokens") {
            ("application/json", json!({"input_tokens": 10}).to_string())
        } else if method == "POST" && path.starts_with("/v1/messages") {
            let mut g = shared.lock().unwrap();
            g.requests.push(Request {
                path: path.clone(),
                body: body.clone(),
            });
            let (blocks, stop) = answer_for(&g, &body);
            drop(g);
            let model = body["model"].as_str().unwrap_or("claude-fake");
            if body["stream"] == true {
                ("text/event-stream", sse(&blocks, stop, model))
            } else {
                let msg = json!({"id": "msg_fake", "type": "message", "role": "assistant", "model": model, "content": blocks,
                    "stop_reason": stop, "stop_sequence": null, "usage": {"input_tokens": 10, "output_tokens": 5}});
                ("application/json", msg.to_string())
            }
        } else {
            ("application/json", "{}".to_string())
        };
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: keep-alive\r\n\r\n",
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
