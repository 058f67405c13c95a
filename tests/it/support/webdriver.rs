//! A real headless Chromium driven through ChromeDriver's W3C WebDriver protocol (plain JSON over
//! HTTP on loopback). Found at `MEMD_TEST_CHROMEDRIVER` / `MEMD_TEST_CHROMIUM` or Debian's
//! `/usr/bin/chromedriver` and `/usr/bin/chromium` (`.ci/run` installs both).
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};

pub struct Browser {
    driver: Child,
    addr: SocketAddr,
    session: String,
    _profile: tempfile::TempDir,
}

fn found(key: &str, default: &str) -> Option<PathBuf> {
    let p = std::env::var(key).map(PathBuf::from).unwrap_or_else(|_| PathBuf::from(default));
    p.exists().then_some(p)
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

impl Browser {
    /// Starts ChromeDriver and a headless Chromium session, or says what is missing and returns None.
    pub fn start() -> Option<Self> {
        let how = "install Debian's chromium and chromium-driver (or set MEMD_TEST_CHROMEDRIVER and MEMD_TEST_CHROMIUM)";
        let (Some(driver_bin), Some(chromium)) = (
            found("MEMD_TEST_CHROMEDRIVER", "/usr/bin/chromedriver"),
            found("MEMD_TEST_CHROMIUM", "/usr/bin/chromium"),
        ) else {
            super::fixture_missing("chromium and chromedriver", how);
            return None;
        };
        let port = free_port();
        let driver = Command::new(driver_bin)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver");
        let addr: SocketAddr = ([127, 0, 0, 1], port).into();
        let profile = tempfile::tempdir().unwrap();
        let mut b = Self {
            driver,
            addr,
            session: String::new(),
            _profile: profile,
        };
        let up = super::wait_until(Duration::from_secs(20), || {
            b.raw("GET", "/status", None).is_some_and(|v| v["value"]["ready"] == true)
        });
        assert!(up, "chromedriver did not become ready");
        let args = [
            "--headless=new".to_string(),
            "--no-sandbox".into(),
            "--disable-dev-shm-usage".into(),
            "--disable-gpu".into(),
            "--window-size=1280,900".into(),
            "--no-first-run".into(),
            "--disable-extensions".into(),
            format!("--user-data-dir={}", b._profile.path().display()),
        ];
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": chromium.to_string_lossy(), "args": args},
            "unhandledPromptBehavior": "ignore",
        }}});
        let v = b.call("POST", "/session", Some(caps));
        b.session = v["sessionId"].as_str().expect("session id").to_string();
        Some(b)
    }

    /// One request; ChromeDriver keeps connections open, so the body is read by its Content-Length.
    fn raw(&self, method: &str, path: &str, body: Option<&Value>) -> Option<Value> {
        let text = body.map(|b| b.to_string()).unwrap_or_default();
        let mut s = TcpStream::connect(self.addr).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(60))).ok()?;
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            self.addr.port(),
            text.len()
        );
        s.write_all(head.as_bytes()).ok()?;
        s.write_all(text.as_bytes()).ok()?;
        let mut r = BufReader::new(s);
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            if r.read_line(&mut line).ok()? == 0 {
                return None;
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((k, v)) = line.split_once(':')
                && k.eq_ignore_ascii_case("content-length")
            {
                length = v.trim().parse().ok()?;
            }
        }
        let mut body = vec![0u8; length];
        r.read_exact(&mut body).ok()?;
        serde_json::from_slice(&body).ok()
    }

    /// A WebDriver command; panics with the driver's error.
    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let v = self
            .raw(method, path, body.as_ref())
            .unwrap_or_else(|| panic!("webdriver {method} {path}: no answer"));
        if v["value"].get("error").is_some() {
            panic!("webdriver {method} {path}: {}", v["value"]);
        }
        v["value"].clone()
    }

    fn cmd(&self, method: &str, what: &str, body: Option<Value>) -> Value {
        self.call(method, &format!("/session/{}/{what}", self.session), body)
    }

    pub fn goto(&self, url: &str) {
        self.cmd("POST", "url", Some(json!({"url": url})));
    }

    pub fn url(&self) -> String {
        self.cmd("GET", "url", None).as_str().unwrap_or_default().to_string()
    }

    /// Runs `body` (a function body: use `return`) in the page.
    pub fn eval(&self, body: &str) -> Value {
        self.cmd("POST", "execute/sync", Some(json!({"script": body, "args": []})))
    }

    /// Polls `body` until it returns something truthy (that value), or panics with `what` after `within`.
    pub fn wait(&self, what: &str, within: Duration, body: &str) -> Value {
        let deadline = Instant::now() + within;
        loop {
            let v = self.eval(body);
            let truthy = !(v.is_null() || v == false || v == 0 || v == "");
            if truthy {
                return v;
            }
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn element(&self, css: &str) -> String {
        let v = self.cmd("POST", "element", Some(json!({"using": "css selector", "value": css})));
        v.as_object()
            .and_then(|o| o.values().next())
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("no element {css}"))
            .to_string()
    }

    pub fn click(&self, css: &str) {
        let id = self.element(css);
        self.cmd("POST", &format!("element/{id}/click"), Some(json!({})));
    }

    pub fn type_into(&self, css: &str, text: &str) {
        let id = self.element(css);
        self.cmd("POST", &format!("element/{id}/value"), Some(json!({"text": text})));
    }

    pub fn accept_alert(&self) {
        self.cmd("POST", "alert/accept", Some(json!({})));
    }

    pub fn screenshot(&self, to: &Path) {
        let b64 = self.cmd("GET", "screenshot", None);
        let png = base64::engine::general_purpose::STANDARD
            .decode(b64.as_str().unwrap_or_default())
            .expect("png");
        if let Some(d) = to.parent() {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(to, png).unwrap();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let _ = self.raw("DELETE", &format!("/session/{}", self.session), None);
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}
