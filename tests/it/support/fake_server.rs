//! The loopback HTTP server the fake model APIs of Codex and Gemini run on: every request's JSON
//! body recorded, each answered by the API's own function (content type and text).
#![allow(dead_code)]

use std::io::{BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use serde_json::Value;

/// How an API answers: `(method, path, body)` → `(status line, content type, text)`, or None for
/// a request not to record (answered `{}`).
pub type Answer = fn(&str, &str, &Value) -> Option<(&'static str, &'static str, String)>;

pub struct FakeServer {
    pub port: u16,
    requests: Arc<Mutex<Vec<Value>>>,
}

impl FakeServer {
    pub fn start(answer: Answer) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind fake server");
        let port = listener.local_addr().expect("addr").port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let shared = requests.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let shared = shared.clone();
                std::thread::spawn(move || serve(stream, &shared, answer));
            }
        });
        Self { port, requests }
    }

    /// The recorded bodies of the answered requests, in order.
    pub fn requests(&self) -> Vec<Value> {
        self.requests.lock().unwrap().clone()
    }
}

fn serve(stream: TcpStream, shared: &Arc<Mutex<Vec<Value>>>, answer: Answer) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone stream"));
    let mut stream = stream;
    loop {
        let Some((method, path, raw)) = super::http_read::next_request(&mut reader) else {
            return;
        };
        let body: Value = serde_json::from_slice(&raw).unwrap_or(Value::Null);
        let (status, content_type, text) = match answer(&method, &path, &body) {
            Some(a) => {
                shared.lock().unwrap().push(body);
                a
            }
            None => ("200 OK", "application/json", "{}".to_string()),
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
