//! A scripted MCP client over real stdio (newline-delimited JSON-RPC) against `memd mcp` and a real
//! worker: initialize, tools/list, tools/call for every tool; results match the HTTP API's.

use crate::support;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use crate::support::TestWorker;
use serde_json::{Value, json};

pub(crate) struct McpClient {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: i64,
}

impl McpClient {
    fn start_with(w: &TestWorker, env: &[(&str, &str)]) -> Self {
        let mut child = w
            .command()
            .envs(env.iter().copied())
            .arg("mcp")
            .env("MEMD_PROJECT", "acme")
            .current_dir(w.data_dir())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(w.data_dir().join("mcp.stderr")).expect("stderr file"))
            .spawn()
            .expect("spawn memd mcp");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let stdin = child.stdin.take();
        Self {
            child,
            stdin,
            lines,
            next_id: 1,
        }
    }

    fn send(&mut self, msg: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{msg}").expect("write");
        stdin.flush().expect("flush");
    }

    /// Sends a request and returns its response (every stdout line must be JSON-RPC).
    pub(crate) fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let line = self.lines.recv_timeout(Duration::from_secs(30)).expect("an answer within 30 s");
            let v: Value = serde_json::from_str(&line).unwrap_or_else(|_| panic!("stdout carried a non-protocol line: {line}"));
            assert_eq!(v["jsonrpc"], "2.0", "{line}");
            if v["id"] == json!(id) {
                return v;
            }
        }
    }

    /// tools/call → (text, isError); panics on a JSON-RPC error.
    pub(crate) fn call(&mut self, tool: &str, args: Value) -> (String, bool) {
        let r = self.request("tools/call", json!({"name": tool, "arguments": args}));
        let result = &r["result"];
        assert!(result.is_object(), "{tool}: {r}");
        let text = result["content"][0]["text"].as_str().unwrap_or_default().to_string();
        let is_error = result["isError"].as_bool().unwrap_or(false);
        (unfenced(tool, &text, is_error), is_error)
    }
}

/// A recall tool's answer without its fence (issue 36), checking the fence on the way: the nonce
/// tag around, the note line first. Confirmations and errors are not fenced.
fn unfenced(tool: &str, text: &str, is_error: bool) -> String {
    let recall = memd::mcp::schema::find(tool).is_none_or(|t| t.recall);
    if !recall || is_error {
        assert!(!text.starts_with("<memd-recall"), "{tool}: {text}");
        return text.to_string();
    }
    let lines: Vec<&str> = text.split('\n').collect();
    assert!(lines.len() >= 3, "{tool}: {text}");
    let open = lines[0];
    assert!(open.starts_with("<memd-recall id=\"") && open.ends_with("\">"), "{tool}: {text}");
    assert_eq!(lines[1], memd::protocol::fence::FENCE_NOTE, "{tool}");
    assert_eq!(*lines.last().unwrap(), open.replacen("<memd-recall", "</memd-recall", 1), "{tool}");
    lines[2..lines.len() - 1].join("\n")
}

impl Drop for McpClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn initialized(w: &TestWorker) -> McpClient {
    initialized_with(w, &[])
}

fn initialized_with(w: &TestWorker, env: &[(&str, &str)]) -> McpClient {
    let mut c = McpClient::start_with(w, env);
    let init = c.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "memd-test", "version": "0"}}),
    );
    let result = &init["result"];
    assert_eq!(result["serverInfo"]["name"], "memd", "{init}");
    assert_eq!(result["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));
    assert!(result["capabilities"]["tools"].is_object());
    assert!(result["instructions"].as_str().unwrap_or_default().contains("get_observations"));
    c.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    c
}

#[test]
fn lists_tools_and_runs_the_write_tools() {
    let w = TestWorker::start(&[]);
    let mut c = initialized(&w);
    let list = c.request("tools/list", json!({}));
    let mut names: Vec<String> = list["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().unwrap_or_default().to_string())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "build_corpus",
            "forget",
            "get_observations",
            "get_tool_uses",
            "list_corpora",
            "prime_corpus",
            "query_corpus",
            "rebuild_corpus",
            "related",
            "reprime_corpus",
            "save_memory",
            "search",
            "session_start_context",
            "timeline",
            "work_state_read",
            "work_state_write"
        ]
    );

    let (text, err) = c.call("save_memory", json!({"text": "Prices are integer cents"}));
    assert!(!err);
    assert_eq!(text, "Saved memory #1 in acme.");
    let (text, _) = c.call("save_memory", json!({"text": "Prices are integer cents"}));
    assert_eq!(text, "Already remembered as #1 (seen 2 times).");
    assert_eq!(
        w.count("SELECT count(*) FROM observations WHERE project = 'acme' AND origin = 'manual'"),
        1
    );

    let bad = c.request("tools/call", json!({"name": "save_memory", "arguments": {"title": "no text"}}));
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    let bad = c.request(
        "tools/call",
        json!({"name": "timeline", "arguments": {"anchor": "1", "depth_before": 21}}),
    );
    assert_eq!(bad["error"]["code"], -32602, "{bad}");

    let (text, err) = c.call("forget", json!({"ids": [1, "#99"]}));
    assert!(!err);
    assert_eq!(text, "Forgot: #1. Not found: #99.");
    assert_eq!(w.count("SELECT count(*) FROM observations"), 0);
    c.call("save_memory", json!({"text": "a second note", "project": "other"}));
    let (text, _) = c.call("forget", json!({"project": "other"}));
    assert_eq!(text, "Forgot 1 observations, 0 summaries, 0 prompts.");
}

#[test]
fn exits_when_stdin_closes() {
    let w = TestWorker::start(&[]);
    let mut c = initialized(&w);
    c.stdin.take();
    assert!(support::wait_until(support::DEADLINE, || matches!(c.child.try_wait(), Ok(Some(_)))));
}

#[test]
fn read_tools_match_the_http_api_and_forget_hides_everywhere() {
    let w = TestWorker::start(&[]);
    let mut c = initialized(&w);
    let (saved, _) = c.call(
        "save_memory",
        json!({"text": "Uploads retry three times with jittered backoff", "title": "Upload retries"}),
    );
    assert_eq!(saved, "Saved memory #1 in acme.");

    let (search, err) = c.call("search", json!({"query": "upload retries"}));
    assert!(!err, "{search}");
    let http = w.get("/api/search?query=upload%20retries&project=acme");
    let http_text = http
        .json()
        .and_then(|v| v.pointer("/content/0/text").and_then(Value::as_str).map(String::from))
        .unwrap_or(http.text());
    assert_eq!(search, http_text);
    assert!(search.contains("#1"), "{search}");

    let (timeline, err) = c.call("timeline", json!({"anchor": "#1"}));
    assert!(!err, "{timeline}");
    assert!(timeline.contains("<- anchor"), "{timeline}");

    let (records, err) = c.call("get_observations", json!({"ids": ["#1", 42]}));
    assert!(!err, "{records}");
    let v: Value = serde_json::from_str(&records).expect("pretty JSON");
    assert_eq!(v["observations"][0]["id"], 1);
    assert!(v["observations"][0]["facts"].is_array());
    assert_eq!(v["missing"], json!(["#42"]));

    let (uses, err) = c.call("get_tool_uses", json!({"id": "#1"}));
    assert!(!err, "{uses}");
    let uses: Value = serde_json::from_str(&uses).expect("pretty JSON");
    assert_eq!(
        uses,
        w.get("/api/tool-uses?observation=1").json().unwrap(),
        "the MCP tool is the route"
    );
    assert_eq!(uses["items"], json!([]), "a saved memory has no tool uses");
    let (missing, err) = c.call("get_tool_uses", json!({"id": 42}));
    assert!(err, "{missing}");

    let (context, err) = c.call("session_start_context", json!({}));
    assert!(!err, "{context}");
    let http_context = w.get("/api/context/inject?projects=acme&platformSource=claude&fence=false").text();
    assert_eq!(context, http_context);
    assert!(context.contains("Upload retries"), "{context}");

    let (gone, _) = c.call("forget", json!({"ids": [1]}));
    assert_eq!(gone, "Forgot: #1.");
    let (search, _) = c.call("search", json!({"query": "upload retries"}));
    assert!(!search.contains("#1 "), "{search}");
    let (timeline, err) = c.call("timeline", json!({"anchor": "#1"}));
    assert!(err, "{timeline}");
    let (records, _) = c.call("get_observations", json!({"ids": [1]}));
    assert_eq!(serde_json::from_str::<Value>(&records).unwrap()["missing"], json!(["#1"]));
    let (context, _) = c.call("session_start_context", json!({}));
    assert!(!context.contains("Upload retries"), "{context}");
}

fn process_gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

#[test]
fn exits_when_its_parent_dies() {
    let w = TestWorker::start(&[]);
    // `sh` starts memd mcp in the background (stdin kept open by us) and exits.
    let mut cmd = std::process::Command::new("sh");
    cmd.args([
        "-c",
        &format!("exec 3<&0; '{}' mcp <&3 & echo $!; sleep 1", env!("CARGO_BIN_EXE_memd")),
    ])
    .env("MEMD_DATA_DIR", w.data_dir())
    .env("MEMD_LOG", "warn")
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::null());
    let mut child = cmd.spawn().expect("spawn sh");
    let _stdin = child.stdin.take();
    let mut out = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut out)
        .expect("pid line");
    let pid: i32 = out.trim().parse().expect("pid");
    std::thread::sleep(Duration::from_millis(300));
    assert!(!process_gone(pid), "memd mcp must run while its parent lives and stdin is open");
    let _ = child.wait();
    assert!(
        support::wait_until(support::DEADLINE, || process_gone(pid)),
        "memd mcp outlived its parent"
    );
}

#[test]
fn starts_the_worker_when_none_runs() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_memd"))
        .arg("mcp")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", dir.path())
        .env("MEMD_DATA_DIR", dir.path())
        .env("MEMD_PORT", "0")
        .env("MEMD_PROJECT", "auto")
        .env("MEMD_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut ask = |msgs: &[Value]| -> Value {
        for msg in msgs {
            writeln!(stdin, "{msg}").unwrap();
        }
        stdin.flush().unwrap();
        let line = lines.next().expect("answer").expect("line");
        serde_json::from_str(&line).expect("json")
    };
    ask(&[json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}})]);
    let r = ask(&[
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "save_memory", "arguments": {"text": "auto-started"}}}),
    ]);
    let pid = memd::data_dir::read_pid_file(&dir.path().join("memd.pid")).map(|p| p.pid);
    if let Some(pid) = pid {
        // SAFETY: stopping the worker this test caused to start.
        unsafe { libc::kill(pid as i32, libc::SIGTERM) };
    }
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(r["result"]["content"][0]["text"], "Saved memory #1 in auto.", "{r}");
    assert!(pid.is_some(), "a worker was started");
}

#[test]
fn read_tools_answer_from_the_database_when_no_worker_can_start() {
    let mut w = TestWorker::start(&[]);
    let saved = w.post(
        "/api/memory/save",
        &json!({"text": "The nightly backup rotates the archive volumes", "project": "acme", "title": "Backup rotation"}),
    );
    assert_eq!(saved.status, 200, "{}", saved.text());
    w.stop();
    let mut c = initialized_with(&w, &[("MEMD_AUTOSTART", "false")]);
    let (text, is_error) = c.call("search", json!({"query": "backup rotation"}));
    assert!(!is_error, "{text}");
    assert!(text.contains("Backup rotation"), "{text}");
    assert!(
        text.ends_with("(memd worker not running: answered from the database, keyword only)"),
        "{text}"
    );
    let (text, is_error) = c.call("timeline", json!({"query": "backup rotation"}));
    assert!(!is_error && text.contains("Backup rotation"), "{text}");
    assert!(text.ends_with("keyword only)"), "{text}");
    let id = saved.json().unwrap()["id"].as_i64().expect("saved id");
    let (text, is_error) = c.call("get_observations", json!({"ids": [id]}));
    assert!(!is_error && text.contains("nightly backup rotates"), "{text}");
    // Write tools still need the worker and say so.
    let (text, is_error) = c.call("save_memory", json!({"text": "x"}));
    assert!(is_error && text.contains("not running"), "{text}");
}

/// Issue 19: Claude Code shows an MCP server's stderr as errors — only warnings and errors go
/// there, everything (info included) to `mcp.log`, without colour codes.
#[test]
fn stderr_carries_warnings_only() {
    let w = TestWorker::start(&[]);
    let mut c = McpClient::start_with(&w, &[("MEMD_LOG", "info")]);
    c.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    let (text, _) = c.call("search", json!({"query": "anything"}));
    assert!(!text.is_empty());
    drop(c);
    let log = std::fs::read_to_string(w.data_dir().join("logs/mcp.log")).unwrap();
    assert!(log.contains("memd mcp starting") && !log.contains('\u{1b}'), "{log}");
    let stderr = std::fs::read_to_string(w.data_dir().join("mcp.stderr")).unwrap();
    assert!(!stderr.contains("INFO") && !stderr.contains("memd mcp starting"), "{stderr}");
}

/// Characters that break naive FTS5 queries: NUL and other controls, quotes, operators, column
/// filters, prefix and grouping marks, CJK.
fn hostile_query() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let pieces: Vec<&'static str> = vec![
        "\u{0}",
        "\u{1}",
        "\u{7f}",
        "\t",
        "\n",
        "\"",
        "'",
        "(",
        ")",
        "*",
        "^",
        ":",
        "-",
        "+",
        "AND",
        "OR",
        "NOT",
        "NEAR(",
        "title:",
        "narrative:",
        "{",
        "}",
        "[",
        "]",
        "\\",
        "%",
        "_",
        "缓存",
        "é",
        " ",
        "a",
        "zebra",
        "x y",
        "\u{feff}",
        "\u{200b}",
    ];
    proptest::collection::vec(proptest::sample::select(pieces), 0..12).prop_map(|v| v.concat())
}

/// Issue 14: no query string makes search or timeline fail — over HTTP (text and JSON answers) and
/// through the MCP tools: a 4xx or results, never a 5xx or a JSON-RPC internal error.
#[test]
fn hostile_queries_never_fail() {
    use memd::client::http::query_value;
    use proptest::test_runner::{Config, TestRunner};
    let w = TestWorker::start(&[]);
    for i in 0..5 {
        let body = json!({"text": format!("Zebra note {i}: 缓存 cache layer"), "project": "acme"});
        assert_eq!(w.post("/api/memory/save", &body).status, 200);
    }
    for q in ["a\u{0}b", "\u{0}", "\"\u{0}\""] {
        let r = w.get(&format!("/api/search?query={}&format=json", query_value(q)));
        assert!(r.status < 500, "search {q:?}: {} {}", r.status, r.text());
    }
    let c = std::cell::RefCell::new(initialized(&w));
    let mut runner = TestRunner::new(Config {
        cases: 200,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&hostile_query(), |q| {
            let e = query_value(&q);
            for path in [
                format!("/api/search?query={e}"),
                format!("/api/search?query={e}&format=json&project=acme"),
                format!("/api/timeline?query={e}"),
                format!("/api/timeline?query={e}&format=json"),
            ] {
                let r = w.get(&path);
                assert!(r.status < 500, "{path}: {} {}", r.status, r.text());
            }
            for tool in ["search", "timeline"] {
                let r = c
                    .borrow_mut()
                    .request("tools/call", json!({"name": tool, "arguments": {"query": q}}));
                let text = r["result"]["content"][0]["text"].as_str().unwrap_or_default().to_string();
                assert!(r.get("error").is_none_or(|e| e["code"] != -32603), "{tool} {q:?}: {r}");
                assert!(!text.contains("internal"), "{tool} {q:?}: {text}");
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn issue_34_a_line_that_cannot_be_parsed_gets_a_parse_error_with_a_null_id() {
    let w = TestWorker::start(&[]);
    let mut c = initialized(&w);
    let next = |c: &mut McpClient| -> Value {
        let line = c.lines.recv_timeout(Duration::from_secs(30)).expect("an answer within 30 s");
        serde_json::from_str(&line).unwrap_or_else(|_| panic!("stdout carried a non-protocol line: {line}"))
    };
    for raw in ["{not json".to_string(), format!("{}{}", "[".repeat(100_000), "]".repeat(100_000))] {
        let stdin = c.stdin.as_mut().unwrap();
        writeln!(stdin, "{raw}").unwrap();
        stdin.flush().unwrap();
        let answer = next(&mut c);
        assert_eq!(answer["error"]["code"], -32700, "{answer}");
        assert!(answer["id"].is_null(), "{answer}");
    }
    c.send(&json!({"id": 41, "method": "tools/list"}));
    let answer = next(&mut c);
    assert_eq!(
        (answer["error"]["code"].as_i64(), answer["id"].as_i64()),
        (Some(-32600), Some(41)),
        "{answer}"
    );
    let listed = c.request("tools/list", json!({}));
    assert!(listed["result"]["tools"].is_array(), "the server still answers: {listed}");
}
