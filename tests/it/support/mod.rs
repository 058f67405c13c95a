//! Test harness: a real `memd serve` process in a temp data dir on 127.0.0.1 port 0.
#![allow(dead_code)]

pub mod claude_host;
pub mod claude_mem;
pub mod fake_anthropic;
pub mod fake_gemini;
pub mod fake_llm;
pub mod fake_responses;
pub mod fake_server;
pub mod hook;
pub mod http_read;
pub mod postgres;
pub mod seed;
pub mod transcripts;
pub mod webdriver;

use std::net::SocketAddr;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use memd::client::http::{self, Request, Response};
use serde_json::Value;

pub const DEADLINE: Duration = Duration::from_secs(30);

/// Polls `f` until it returns true or the deadline passes; returns whether it succeeded.
pub fn wait_until(deadline: Duration, mut f: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + deadline;
    while Instant::now() < end {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    f()
}

/// A worker served inside the test process by `memd::server::serve` on its own runtime thread.
pub struct InProcess {
    shutdown: tokio_util::sync::CancellationToken,
    thread: std::thread::JoinHandle<()>,
}

pub struct TestWorker {
    pub dir: tempfile::TempDir,
    pub env: Vec<(String, String)>,
    pub child: Option<Child>,
    in_process: Option<InProcess>,
    pub port: u16,
    pub token: String,
    /// `RLIMIT_NOFILE` (soft and hard) of the `memd serve` process, when set.
    pub fd_limit: Option<u64>,
}

impl TestWorker {
    /// Starts a `memd serve` process with quick batching (debounce 50 ms) plus `env`, and waits for
    /// readiness.
    pub fn start(env: &[(&str, &str)]) -> Self {
        let mut w = Self::prepared(env);
        w.spawn();
        w
    }

    /// Like [`TestWorker::start`], but the worker runs in this process (`server::serve` on a port-0
    /// listener): for HTTP-level tests where a process adds nothing. `stop` and `spawn` work;
    /// `kill9` and `command` are for process workers.
    pub fn start_in_process(env: &[(&str, &str)]) -> Self {
        let mut w = Self::prepared(env);
        w.spawn_in_process();
        w
    }

    /// A worker not started yet (set fields such as `fd_limit`, then `spawn`).
    pub fn prepared(env: &[(&str, &str)]) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut env: Vec<(String, String)> = env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        if !env.iter().any(|(k, _)| k == "MEMD_OBSERVER_BATCH_DEBOUNCE_MS") {
            env.push(("MEMD_OBSERVER_BATCH_DEBOUNCE_MS".into(), "50".into()));
        }
        // `auto` would pick a real `claude` found on PATH: tests choose their provider explicitly.
        if !env.iter().any(|(k, _)| k == "MEMD_PROVIDER") {
            env.push(("MEMD_PROVIDER".into(), "extractive".into()));
        }
        // The 800 ms search budget is a product choice for a quiet machine; the tests check
        // ranking and fallbacks, on two cores shared with every other test.
        if !env.iter().any(|(k, _)| k == "MEMD_VECTOR_QUERY_BUDGET_MS") {
            env.push(("MEMD_VECTOR_QUERY_BUDGET_MS".into(), "20000".into()));
        }
        Self {
            dir,
            env,
            child: None,
            in_process: None,
            port: 0,
            token: String::new(),
            fd_limit: None,
        }
    }

    /// (Re)starts the worker in this process and waits until `/api/readiness` answers 200.
    pub fn spawn_in_process(&mut self) {
        let mut env: std::collections::HashMap<String, String> = self.env.iter().cloned().collect();
        env.insert("HOME".into(), self.dir.path().to_string_lossy().into_owned());
        env.insert("MEMD_DATA_DIR".into(), self.dir.path().to_string_lossy().into_owned());
        env.insert("MEMD_PORT".into(), "0".into());
        let dir = memd::data_dir::DataDir::new(self.dir.path().to_path_buf());
        dir.ensure_root().expect("data dir");
        let settings = memd::config::Settings::load(dir.root.clone(), &env);
        let shutdown = tokio_util::sync::CancellationToken::new();
        let token = shutdown.clone();
        let (bound, port) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
                let _ = bound.send(listener.local_addr().expect("addr").port());
                memd::server::serve(listener, settings, dir, token, Default::default())
                    .await
                    .expect("serve");
            });
        });
        self.port = port.recv().expect("the worker bound its listener");
        self.in_process = Some(InProcess { shutdown, thread });
        assert!(
            wait_until(DEADLINE, || self.get_raw("/api/readiness").is_ok_and(|r| r.status == 200)),
            "in-process worker did not become ready"
        );
        self.token = std::fs::read_to_string(self.dir.path().join("token"))
            .expect("token")
            .trim()
            .to_string();
    }

    pub fn data_dir(&self) -> &Path {
        self.dir.path()
    }

    pub fn db_path(&self) -> PathBuf {
        self.dir.path().join("memd.db")
    }

    pub fn command(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_memd"));
        cmd.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.dir.path())
            .env("MEMD_DATA_DIR", self.dir.path())
            .env("MEMD_PORT", "0")
            .env("MEMD_LOG", "warn");
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        cmd
    }

    /// (Re)starts `memd serve` and waits until `/api/readiness` answers 200.
    pub fn spawn(&mut self) {
        self.spawn_until("/api/readiness");
    }

    /// (Re)starts `memd serve` and waits until `path` (unauthenticated) answers 200: `/api/health`
    /// for a worker expected to serve but not to be ready.
    pub fn spawn_until(&mut self, path: &str) {
        let pid_file = self.dir.path().join("memd.pid");
        let _ = std::fs::remove_file(&pid_file);
        let mut cmd = self.command();
        let stderr = std::fs::File::create(self.dir.path().join("serve.stderr"))
            .map(Stdio::from)
            .unwrap_or_else(|_| Stdio::null());
        cmd.arg("serve").stdout(Stdio::null()).stderr(stderr);
        if let Some(n) = self.fd_limit {
            use std::os::unix::process::CommandExt;
            // SAFETY: setrlimit is async-signal-safe and changes only the child's own limit.
            unsafe {
                cmd.pre_exec(move || {
                    let lim = libc::rlimit { rlim_cur: n, rlim_max: n };
                    if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
        let child = cmd.spawn().expect("spawn memd serve");
        let pid = child.id();
        self.child = Some(child);
        let ready = wait_until(DEADLINE, || {
            let Some(p) = memd::data_dir::read_pid_file(&pid_file) else {
                return false;
            };
            if p.pid != pid || p.port == 0 {
                return false;
            }
            self.port = p.port;
            self.get_raw(path).is_ok_and(|r| r.status == 200)
        });
        if !ready {
            // What the worker said, for a failure one can act on.
            let log = std::fs::read_to_string(self.dir.path().join("logs/memd.log")).unwrap_or_default();
            let tail: String = log
                .lines()
                .rev()
                .take(15)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect::<Vec<_>>()
                .join("\n");
            let stderr = std::fs::read_to_string(self.dir.path().join("serve.stderr")).unwrap_or_default();
            let exited = self.child.as_mut().and_then(|c| c.try_wait().ok().flatten());
            panic!("worker did not become ready (exit: {exited:?}); its log ends:\n{tail}\nits stderr:\n{stderr}");
        }
        self.token = std::fs::read_to_string(self.dir.path().join("token"))
            .expect("token")
            .trim()
            .to_string();
    }

    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    fn get_raw(&self, path: &str) -> Result<Response, http::HttpError> {
        http::send(
            self.addr(),
            &Request {
                method: "GET",
                path,
                ..Default::default()
            },
            Duration::from_secs(2),
        )
    }

    pub fn request(&self, method: &str, path: &str, body: Option<&[u8]>) -> Response {
        let req = Request {
            method,
            path,
            token: Some(&self.token),
            body,
            ..Default::default()
        };
        http::send(self.addr(), &req, Duration::from_secs(30)).expect("request")
    }

    pub fn post(&self, path: &str, body: &Value) -> Response {
        self.request("POST", path, Some(body.to_string().as_bytes()))
    }

    pub fn get(&self, path: &str) -> Response {
        self.request("GET", path, None)
    }

    pub fn status(&self) -> Value {
        self.get("/api/status").json().expect("status json")
    }

    /// A read-only connection to the worker's database.
    pub fn db(&self) -> rusqlite::Connection {
        rusqlite::Connection::open_with_flags(self.db_path(), rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).expect("open db")
    }

    pub fn count(&self, sql: &str) -> i64 {
        self.db().query_row(sql, [], |r| r.get(0)).expect("count")
    }

    /// SIGTERM, then wait for the process; returns its exit status. An in-process worker is shut
    /// down through its token (graceful, as SIGTERM) and reports success.
    pub fn stop(&mut self) -> std::process::ExitStatus {
        if let Some(w) = self.in_process.take() {
            w.shutdown.cancel();
            let ok = w.thread.join().is_ok();
            return std::process::ExitStatus::from_raw(if ok { 0 } else { 1 << 8 });
        }
        let mut child = self.child.take().expect("running");
        // SAFETY: sending a signal to our own child process.
        unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        child.wait().expect("wait")
    }

    /// SIGKILL: no shutdown code runs.
    pub fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for TestWorker {
    fn drop(&mut self) {
        if let Some(w) = self.in_process.take() {
            w.shutdown.cancel();
            let _ = w.thread.join();
        }
        self.kill9();
    }
}

/// Every file under `dir`, recursively.
/// Runs `cmd` to its end, or kills it after `deadline` (None).
pub fn output_within(mut cmd: Command, deadline: Duration) -> Option<std::process::Output> {
    let mut child = cmd
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    if !wait_until(deadline, || matches!(child.try_wait(), Ok(Some(_)))) {
        let _ = child.kill();
        let _ = child.wait();
        return None;
    }
    child.wait_with_output().ok()
}

pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files_under(&p));
        } else {
            out.push(p);
        }
    }
    out
}

pub fn init_body(session: &str, prompt: &str) -> Value {
    serde_json::json!({"contentSessionId": session, "prompt": prompt, "cwd": "/tmp/proj"})
}

pub fn observation_body(session: &str, i: usize) -> Value {
    serde_json::json!({
        "contentSessionId": session,
        "tool_name": "Bash",
        "tool_input": {"command": format!("echo step {i}"), "description": format!("step {i}")},
        "tool_response": {"stdout": format!("step {i} done"), "stderr": ""},
        "tool_use_id": format!("toolu_{session}_{i}"),
        "cwd": "/tmp/proj",
    })
}

/// A fixture the default run cannot assume is missing: under `MEMD_REQUIRE_FIXTURES=1` (CI) the
/// test fails; otherwise it skips with one line that says what to install.
pub fn fixture_missing(what: &str, how: &str) {
    if std::env::var("MEMD_REQUIRE_FIXTURES").is_ok_and(|v| v == "1") {
        panic!("fixture missing: {what} ({how}); MEMD_REQUIRE_FIXTURES=1 makes that a failure");
    }
    eprintln!("skipped: {what} missing ({how})");
}

/// A value of the environment that names a fixture, or None after [`fixture_missing`].
pub fn fixture_env(key: &str, how: &str) -> Option<String> {
    let v = std::env::var(key).ok().filter(|v| !v.trim().is_empty());
    if v.is_none() {
        fixture_missing(key, how);
    }
    v
}

/// The all-MiniLM-L6-v2 directory of the vector tests (`MEMD_TEST_MODEL_DIR`, set by `.ci/run`).
pub fn model_dir() -> Option<String> {
    let how = "set MEMD_TEST_MODEL_DIR to a directory with model.safetensors, tokenizer.json and config.json (`memd models install` puts them in <data>/models/all-MiniLM-L6-v2)";
    let dir = std::env::var("MEMD_TEST_MODEL_DIR")
        .ok()
        .filter(|d| std::path::Path::new(d).join("model.safetensors").is_file());
    if dir.is_none() {
        fixture_missing("the embedding model", how);
    }
    dir
}

/// `memd <args>` with exactly `env` (a host's home, `MEMD_DATA_DIR`, …); asserts it succeeded.
pub fn memd_in(env: &[(&str, String)], args: &[&str]) -> std::process::Output {
    let out = Command::new(env!("CARGO_BIN_EXE_memd"))
        .args(args)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .expect("run memd");
    assert!(out.status.success(), "memd {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out
}
