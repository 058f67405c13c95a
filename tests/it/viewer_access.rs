//! Issue 17: the viewer's access rules over real HTTP — 401 without the cookie or the token, 403
//! for a forged Origin and for a mutating request without the CSRF token, the one-time code spent
//! once, the cookie's attributes — and `/stream`: each stored observation once per client across
//! a `Last-Event-ID` reconnect, and closed when the worker shuts down.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use memd::client::http::{self, Request, Response};
use serde_json::{Value, json};

use crate::support::{self, TestWorker, init_body, observation_body, wait_until};

fn send(w: &TestWorker, method: &str, path: &str, headers: Vec<(&str, String)>, body: Option<&Value>) -> Response {
    let text = body.map(Value::to_string);
    let req = Request {
        method,
        path,
        headers,
        body: text.as_deref().map(str::as_bytes),
        ..Default::default()
    };
    http::send(w.addr(), &req, Duration::from_secs(30)).unwrap()
}

/// Spends a fresh code; returns the cookie header value and the page's CSRF token.
fn login(w: &TestWorker) -> (String, String) {
    let code = w.post("/api/viewer/code", &json!({})).json().unwrap();
    let url = code["url"].as_str().unwrap();
    let path = &url[url.find("/viewer").unwrap()..];
    let r = send(w, "GET", path, vec![], None);
    assert_eq!(r.status, 303);
    assert_eq!(r.header("location"), Some("/"));
    let set = r.header("set-cookie").unwrap().to_string();
    assert!(
        set.contains("HttpOnly") && set.contains("SameSite=Strict") && set.contains("Path=/"),
        "{set}"
    );
    assert_eq!(send(w, "GET", path, vec![], None).status, 401, "a code works once");
    let cookie = set.split(';').next().unwrap().to_string();
    let page = send(w, "GET", "/", vec![("Cookie", cookie.clone())], None);
    assert_eq!(page.status, 200);
    assert!(
        page.header("content-security-policy")
            .is_some_and(|c| c.contains("script-src 'self'"))
    );
    let html = String::from_utf8(page.body).unwrap();
    assert!(!html.contains(&w.token), "the bearer token is never in the page");
    let csrf = html
        .split("name=\"csrf\" content=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_string();
    assert_eq!(csrf.len(), 32);
    (cookie, csrf)
}

#[test]
fn issue_17_without_cookie_or_token_401_forged_origin_403_no_csrf_403() {
    let w = TestWorker::start_in_process(&[("MEMD_EMBEDDINGS", "none")]);
    for path in [
        "/",
        "/api/search?query=x",
        "/api/observations",
        "/api/tool-uses?observation=1",
        "/stream",
        "/viewer/app.js",
    ] {
        assert_eq!(send(&w, "GET", path, vec![], None).status, 401, "{path}");
    }
    let bearer = ("Authorization", format!("Bearer {}", w.token));
    let evil = ("Origin", "http://evil.example".to_string());
    assert_eq!(
        send(&w, "GET", "/api/observations", vec![bearer.clone(), evil.clone()], None).status,
        403
    );
    let (cookie, csrf) = login(&w);
    let c = ("Cookie", cookie);
    let token = ("X-CSRF-Token", csrf.clone());
    assert_eq!(
        send(&w, "GET", "/api/observations", vec![c.clone(), evil.clone()], None).status,
        403
    );
    let memory = json!({"text": "viewer saved memory", "project": "acme"});
    let no_csrf = send(&w, "POST", "/api/memory/save", vec![c.clone()], Some(&memory));
    assert_eq!(no_csrf.status, 403, "{}", no_csrf.text());
    let wrong = send(
        &w,
        "POST",
        "/api/memory/save",
        vec![c.clone(), ("X-CSRF-Token", "x".repeat(32))],
        Some(&memory),
    );
    assert_eq!(wrong.status, 403);
    assert_eq!(w.count("SELECT count(*) FROM observations"), 0, "refused requests store nothing");
    let saved = send(&w, "POST", "/api/memory/save", vec![c.clone(), token.clone()], Some(&memory));
    assert_eq!(saved.status, 200, "{}", saved.text());
    let id = saved.json().unwrap()["id"].as_i64().unwrap();
    let edit = json!({"title": "Corrected title", "facts": ["one", "key AKIAIOSFODNN7EXAMPLE"]});
    let path = format!("/api/observation/{id}");
    assert_eq!(send(&w, "PATCH", &path, vec![c.clone()], Some(&edit)).status, 403);
    let edited = send(&w, "PATCH", &path, vec![c.clone(), token.clone()], Some(&edit));
    assert_eq!(edited.status, 200, "{}", edited.text());
    let o = edited.json().unwrap();
    assert_eq!(o["title"], "Corrected title");
    let facts = o["facts"].as_array().expect("memd's own routes answer list columns as arrays");
    assert_eq!(facts.len(), 2);
    assert!(
        !o["facts"].to_string().contains("AKIA"),
        "an edit passes the privacy pipeline: {}",
        o["facts"]
    );
    let found = w.get("/api/search?query=corrected&format=json").json().unwrap();
    assert_eq!(found["observations"][0]["id"], id, "the edit is searchable");
    assert_eq!(send(&w, "DELETE", &path, vec![c.clone()], None).status, 403);
    assert_eq!(
        send(&w, "POST", "/api/viewer/code", vec![c.clone(), token.clone()], None).status,
        403,
        "codes need the bearer token"
    );
    assert_eq!(
        send(&w, "POST", "/api/admin/gc", vec![c.clone(), token.clone()], Some(&json!({}))).status,
        403
    );
    // The cookie is bound to the host it was issued on.
    let other_host = Request {
        method: "GET",
        path: "/api/observations",
        host: Some("localhost"),
        headers: vec![c.clone()],
        ..Default::default()
    };
    assert_eq!(http::send(w.addr(), &other_host, Duration::from_secs(10)).unwrap().status, 401);
    // Browse routes answer the viewer; bad input is a 400, a missing row a 404.
    assert_eq!(send(&w, "GET", "/api/tool-uses?observation=abc", vec![c.clone()], None).status, 400);
    assert_eq!(send(&w, "GET", "/api/tool-uses?observation=999", vec![c.clone()], None).status, 404);
    assert_eq!(send(&w, "GET", "/api/session/0", vec![c.clone()], None).status, 400);
    assert_eq!(send(&w, "GET", "/api/observations?limit=100000", vec![c.clone()], None).status, 400);
    let page = send(&w, "GET", "/api/observations?project=acme", vec![c.clone()], None)
        .json()
        .unwrap();
    assert_eq!(page["items"][0]["id"], id);
    let del = send(&w, "DELETE", &path, vec![c.clone(), token], None);
    assert_eq!(del.status, 200, "{}", del.text());
    let out = send(&w, "POST", "/viewer/logout", vec![c.clone(), ("X-CSRF-Token", csrf)], None);
    assert_eq!(out.status, 200);
    assert_eq!(send(&w, "GET", "/", vec![c], None).status, 401, "logged out");
}

/// A raw SSE client: the frames' (id, data) pairs, read as they come.
struct Sse {
    reader: BufReader<TcpStream>,
}

impl Sse {
    fn open(w: &TestWorker, last_id: Option<&str>) -> Self {
        let mut s = TcpStream::connect(w.addr()).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
        let resume = last_id.map(|id| format!("Last-Event-ID: {id}\r\n")).unwrap_or_default();
        write!(s, "GET /stream?token={} HTTP/1.1\r\nHost: 127.0.0.1\r\n{resume}\r\n", w.token).unwrap();
        let mut reader = BufReader::new(s);
        let mut status = String::new();
        reader.read_line(&mut status).unwrap();
        assert!(status.contains(" 200 "), "{status}");
        Self { reader }
    }

    /// The next frame with data: (its id, its JSON); None at the end of the stream.
    fn next(&mut self) -> Option<(Option<String>, Value)> {
        let (mut id, mut data) = (None, None);
        loop {
            let mut line = String::new();
            match self.reader.read_line(&mut line) {
                Ok(0) | Err(_) => return None,
                Ok(_) => {}
            }
            let line = line.trim_end();
            if let Some(d) = line.strip_prefix("data: ") {
                data = serde_json::from_str(d).ok();
            } else if let Some(i) = line.strip_prefix("id: ") {
                id = Some(i.to_string());
            } else if line.is_empty()
                && let Some(d) = data.take()
            {
                return Some((id, d));
            }
        }
    }

    /// Reads to the end: true at a clean end of stream, false when the read timed out.
    fn ends(&mut self) -> bool {
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match self.reader.read_until(b'\n', &mut buf) {
                Ok(0) => return true,
                Ok(_) => {}
                Err(_) => return false,
            }
        }
    }

    /// Titles of new observations until `last` arrives (and the id of its frame).
    fn titles_until(&mut self, last: &str) -> (Vec<String>, String) {
        let mut titles = Vec::new();
        while let Some((id, e)) = self.next() {
            if e["type"] == "new_observation" {
                let t = e["observation"]["title"].as_str().unwrap().to_string();
                titles.push(t.clone());
                if t == last {
                    return (titles, id.unwrap());
                }
            }
        }
        panic!("the stream ended before {last:?}; got {titles:?}");
    }
}

fn save(w: &TestWorker, title: &str) {
    let r = w.post(
        "/api/memory/save",
        &json!({"text": format!("{title} body"), "title": title, "project": "acme"}),
    );
    assert_eq!(r.status, 200, "{}", r.text());
}

#[test]
fn issue_17_stream_delivers_each_observation_once_across_reconnects_and_closes_on_shutdown() {
    let mut w = TestWorker::start(&[("MEMD_EMBEDDINGS", "none")]);
    save(&w, "before anyone listened");
    let mut a = Sse::open(&w, None);
    let (_, connected) = a.next().unwrap();
    assert_eq!(connected["type"], "connected");
    for t in ["one", "two", "three"] {
        save(&w, t);
    }
    let (titles, last_id) = a.titles_until("three");
    assert_eq!(titles, ["one", "two", "three"], "a new client starts at the head, each row once");
    drop(a);
    for t in ["four", "five"] {
        save(&w, t);
    }
    let mut b = Sse::open(&w, Some(&last_id));
    assert_eq!(b.next().unwrap().1["type"], "connected");
    save(&w, "six");
    let (titles, _) = b.titles_until("six");
    assert_eq!(
        titles,
        ["four", "five", "six"],
        "resumed after the last id: nothing lost, nothing twice"
    );
    // Two clients at once each get the row once.
    let mut c = Sse::open(&w, None);
    assert_eq!(c.next().unwrap().1["type"], "connected");
    save(&w, "seven");
    assert_eq!(b.titles_until("seven").0, ["seven"]);
    assert_eq!(c.titles_until("seven").0, ["seven"]);
    // Graceful shutdown does not wait on connected viewers: both streams end, the worker exits 0.
    let started = Instant::now();
    let status = w.stop();
    assert!(status.success(), "{status:?}");
    assert!(b.ends() && c.ends(), "the streams close on shutdown");
    eprintln!("shutdown with two stream clients took {} ms", started.elapsed().as_millis());
}

#[test]
fn issue_17_tool_uses_of_an_observation_made_by_the_observer() {
    let w = TestWorker::start_in_process(&[("MEMD_EMBEDDINGS", "none")]);
    assert_eq!(
        w.post(memd::protocol::IngestRoute::Init.path(), &init_body("s-tools", "list files"))
            .status,
        200
    );
    for i in 0..2 {
        let r = w.post(memd::protocol::IngestRoute::Observations.path(), &observation_body("s-tools", i));
        assert_eq!(r.status, 200, "{}", r.text());
    }
    assert!(wait_until(support::DEADLINE, || w
        .count("SELECT count(*) FROM observation_sources")
        >= 2));
    let id = w.count("SELECT min(observation_id) FROM observation_sources");
    let uses = w.get(&format!("/api/tool-uses?observation={id}")).json().unwrap();
    let items = uses["items"].as_array().unwrap();
    assert!(!items.is_empty(), "{uses}");
    assert!(
        items
            .iter()
            .all(|t| t["tool_name"] == "Bash" && t["tool_input"].as_str().unwrap().contains("echo step"))
    );
    let session = w.count("SELECT id FROM sdk_sessions WHERE content_session_id = 's-tools'");
    let detail = w.get(&format!("/api/session/{session}")).json().unwrap();
    let kinds: Vec<&str> = detail["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds.first(), Some(&"prompt"), "the session in order: its prompt first, {kinds:?}");
    assert!(kinds.contains(&"observation"));
}

#[test]
fn issue_34_memd_open_puts_the_code_on_no_command_line() {
    use std::os::unix::fs::PermissionsExt;
    let w = TestWorker::start(&[]);
    let bin = tempfile::tempdir().unwrap();
    let record = bin.path().join("argv");
    let opener = bin.path().join(if cfg!(target_os = "macos") { "open" } else { "xdg-open" });
    std::fs::write(&opener, format!("#!/bin/sh\nprintf '%s\\n' \"$@\" > '{}'\n", record.display())).unwrap();
    std::fs::set_permissions(&opener, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.path().display(), std::env::var("PATH").unwrap_or_default());
    let out = w.command().env("PATH", path).arg("open").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!String::from_utf8_lossy(&out.stdout).contains("code="), "opened, not printed");

    let argv = std::fs::read_to_string(&record).unwrap();
    assert!(!argv.contains("code"), "the opener's argv holds no code: {argv}");
    let page = std::path::PathBuf::from(argv.trim());
    assert!(page.starts_with(w.data_dir()), "{argv}");
    assert_eq!(std::fs::metadata(&page).unwrap().permissions().mode() & 0o777, 0o600);
    let html = std::fs::read_to_string(&page).unwrap();
    let at = html.find("/viewer/login?code=").expect("the page sends the browser to the login");
    let login: String = html[at..].chars().take_while(|c| !matches!(c, '"' | ';' | ' ' | '>')).collect();
    let r = send(&w, "GET", &login, vec![], None);
    assert_eq!(r.status, 303, "the page's link logs in");
    assert_eq!(send(&w, "GET", &login, vec![], None).status, 401, "once");
}
