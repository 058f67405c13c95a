//! A fake LLM server for tests: a real HTTP/1.1 server on 127.0.0.1:0 speaking the Anthropic
//! (`/v1/messages`), OpenAI (`/chat/completions`) and Gemini (`:generateContent`) wire formats.
//! Replies come from a script (then a default reply); every request is recorded with its arrival
//! time, path, headers and JSON body.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Reply {
    /// 200 with this model text (valid XML, fenced XML, prose, …).
    Text(String),
    /// A non-200 status with a body and an optional Retry-After header.
    Status {
        code: u16,
        body: String,
        retry_after: Option<String>,
    },
    /// The inner reply after a delay.
    Slow(Duration, Box<Reply>),
}

impl Reply {
    pub fn text(s: &str) -> Self {
        Reply::Text(s.to_string())
    }
    pub fn status(code: u16, body: &str) -> Self {
        Reply::Status {
            code,
            body: body.to_string(),
            retry_after: None,
        }
    }
    pub fn too_many(retry_after: &str) -> Self {
        Reply::Status {
            code: 429,
            body: r#"{"type":"error","error":{"type":"rate_limit_error","message":"rate limited"}}"#.into(),
            retry_after: Some(retry_after.into()),
        }
    }
    pub fn prompt_too_long() -> Self {
        Reply::status(
            400,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 250000 tokens > 200000 maximum"}}"#,
        )
    }
}

#[derive(Debug, Clone)]
pub struct Recorded {
    pub at: Instant,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The user text of the first turn, whatever the wire format.
    pub fn first_user_text(&self) -> String {
        let b = &self.body;
        if let Some(m) = b["messages"].as_array() {
            let user = m.iter().find(|t| t["role"] == "user");
            return user.and_then(|t| t["content"].as_str()).unwrap_or("").to_string();
        }
        b["contents"][0]["parts"][0]["text"].as_str().unwrap_or("").to_string()
    }

    /// The system text (Part A), whatever the wire format.
    pub fn system_text(&self) -> String {
        let b = &self.body;
        if let Some(s) = b["system"][0]["text"].as_str() {
            return s.to_string();
        }
        if let Some(m) = b["messages"].as_array()
            && let Some(s) = m.iter().find(|t| t["role"] == "system")
        {
            return s["content"].as_str().unwrap_or("").to_string();
        }
        b["systemInstruction"]["parts"][0]["text"].as_str().unwrap_or("").to_string()
    }

    /// Number of conversation turns (user/assistant/model), system excluded.
    pub fn turns(&self) -> usize {
        if let Some(m) = self.body["messages"].as_array() {
            return m.iter().filter(|t| t["role"] != "system").count();
        }
        self.body["contents"].as_array().map_or(0, Vec::len)
    }
}

struct Inner {
    script: VecDeque<Reply>,
    requests: Vec<Recorded>,
    usage: (i64, i64),
    served: usize,
    /// System blocks marked `cache_control` already seen: the Anthropic prompt cache's rule (a
    /// second request with the same cacheable prefix reads it from the cache).
    cached: std::collections::HashSet<String>,
    emulate_cache: bool,
}

pub struct FakeLlm {
    pub port: u16,
    inner: Arc<Mutex<Inner>>,
}

/// A valid one-observation reply whose title is unique per call (no dedup between batches).
pub fn default_xml(n: usize) -> String {
    format!(
        "<observation>\n  <type>discovery</type>\n  <title>Fake observation {n}</title>\n  <facts><fact>fact {n}</fact></facts>\n  \
         <narrative>The fake model saw call {n}.</narrative>\n  <concepts><concept>how-it-works</concept></concepts>\n</observation>"
    )
}

impl FakeLlm {
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind fake llm");
        let port = listener.local_addr().expect("addr").port();
        let inner = Arc::new(Mutex::new(Inner {
            script: VecDeque::new(),
            requests: Vec::new(),
            usage: (100, 50),
            served: 0,
            cached: Default::default(),
            emulate_cache: false,
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

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn push(&self, reply: Reply) {
        self.inner.lock().unwrap().script.push_back(reply);
    }

    /// Token usage reported by every 200 reply: (input, output).
    pub fn set_usage(&self, input: i64, output: i64) {
        self.inner.lock().unwrap().usage = (input, output);
    }

    /// Reports Anthropic prompt-cache use like the API: a cacheable system block is written the
    /// first time and read on every later request that repeats it.
    pub fn emulate_prompt_cache(&self) {
        self.inner.lock().unwrap().emulate_cache = true;
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.inner.lock().unwrap().requests.clone()
    }

    pub fn count(&self) -> usize {
        self.inner.lock().unwrap().requests.len()
    }
}

fn serve(stream: TcpStream, shared: &Arc<Mutex<Inner>>) {
    let mut reader = BufReader::new(match stream.try_clone() {
        Ok(s) => s,
        Err(_) => return,
    });
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" || h == "\n" {
            break;
        }
        if let Some((k, v)) = h.trim_end().split_once(':') {
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let len: usize = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let (reply, usage, n, cache) = {
        let mut g = shared.lock().unwrap();
        let cache = match g.emulate_cache {
            true => cache_use(&body, &mut g.cached),
            false => None,
        };
        g.requests.push(Recorded {
            at: Instant::now(),
            path: path.clone(),
            headers,
            body,
        });
        g.served += 1;
        let n = g.served;
        (
            g.script.pop_front().unwrap_or_else(|| Reply::Text(default_xml(n))),
            g.usage,
            n,
            cache,
        )
    };
    let _ = n;
    respond(stream, &path, reply, usage, cache);
}

/// `(cache_creation_input_tokens, cache_read_input_tokens)` of an Anthropic request whose system
/// block is marked cacheable: written the first time, read afterwards (characters / 4).
fn cache_use(body: &Value, cached: &mut std::collections::HashSet<String>) -> Option<(i64, i64)> {
    let block = &body["system"][0];
    block["cache_control"].as_object()?;
    let text = block["text"].as_str()?.to_string();
    let tokens = text.chars().count().div_ceil(4) as i64;
    Some(match cached.insert(text) {
        true => (tokens, 0),
        false => (0, tokens),
    })
}

fn respond(mut stream: TcpStream, path: &str, reply: Reply, usage: (i64, i64), cache: Option<(i64, i64)>) {
    let (code, body, retry_after) = match reply {
        Reply::Slow(d, inner) => {
            std::thread::sleep(d);
            return respond(stream, path, *inner, usage, cache);
        }
        Reply::Status { code, body, retry_after } => (code, body, retry_after),
        Reply::Text(text) => {
            let mut v = wire_body(path, &text, usage);
            if let (Some((written, read)), true) = (cache, path.ends_with("/v1/messages")) {
                v["usage"]["cache_creation_input_tokens"] = json!(written);
                v["usage"]["cache_read_input_tokens"] = json!(read);
            }
            (200, v.to_string(), None)
        }
    };
    let mut head = format!(
        "HTTP/1.1 {code} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if let Some(r) = retry_after {
        head.push_str(&format!("Retry-After: {r}\r\n"));
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body.as_bytes());
    let _ = stream.flush();
}

fn wire_body(path: &str, text: &str, (input, output): (i64, i64)) -> Value {
    if path.ends_with("/chat/completions") {
        json!({"id": "c1", "object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
               "usage": {"prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output}})
    } else if path.contains(":generateContent") {
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}],
               "usageMetadata": {"promptTokenCount": input, "candidatesTokenCount": output, "totalTokenCount": input + output}})
    } else {
        json!({"id": "msg_1", "type": "message", "role": "assistant", "content": [{"type": "text", "text": text}],
               "stop_reason": "end_turn", "usage": {"input_tokens": input, "output_tokens": output}})
    }
}
