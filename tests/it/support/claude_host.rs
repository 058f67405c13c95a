//! A home with Claude Code and memd in it, for the tests and the session benchmark that drive the
//! real `claude` binary against [`super::fake_anthropic`].
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

use super::fake_anthropic::{FakeAnthropic, Plan, Turn, tool};

pub const SETTINGS: &str =
    "{\n  \"model\": \"opus\",\n  \"permissions\": {\n    \"allow\": [\n      \"Bash(git status:*)\"\n    ]\n  }\n}\n";

pub struct Host {
    _tmp: tempfile::TempDir,
    pub home: PathBuf,
    pub data: PathBuf,
    pub proj: PathBuf,
    pub bin: String,
    pub fake: FakeAnthropic,
}

impl Host {
    pub fn env(&self, cmd: &mut Command) {
        cmd.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("ANTHROPIC_BASE_URL", self.fake.url())
            .env("ANTHROPIC_API_KEY", "sk-ant-api03-fake-key-for-the-test-0000000000000000")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("MEMD_DATA_DIR", &self.data)
            .env("MEMD_PROVIDER", "extractive")
            .env("MEMD_OBSERVER_BATCH_DEBOUNCE_MS", "50")
            .env("MEMD_LOG", "warn")
            .env("MEMD_SPOOL_SCAN_MS", "500")
            .current_dir(&self.proj);
    }

    pub fn memd(&self, args: &[&str]) -> Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_memd"));
        self.env(&mut cmd);
        cmd.args(args).output().expect("run memd")
    }

    /// `claude -p <prompt> --output-format json <extra>`; returns the session id it reports.
    pub fn claude(&self, prompt: &str, extra: &[&str]) -> String {
        let mut cmd = Command::new(&self.bin);
        self.env(&mut cmd);
        let out = cmd
            .args(["-p", prompt, "--output-format", "json"])
            .args(extra)
            .output()
            .expect("run claude");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "claude -p {prompt}: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("claude's JSON ({e}): {stdout}"));
        v["session_id"].as_str().expect("session_id").to_string()
    }

    pub fn db(&self) -> rusqlite::Connection {
        rusqlite::Connection::open_with_flags(self.data.join("memd.db"), rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).expect("memd.db")
    }

    pub fn count(&self, sql: &str, arg: &str) -> i64 {
        self.db().query_row(sql, [arg], |r| r.get(0)).unwrap_or(0)
    }

    pub fn worker_pid(&self) -> Option<i32> {
        memd::data_dir::read_pid_file(&self.data.join("memd.pid")).map(|p| p.pid as i32)
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        if let Some(pid) = self.worker_pid() {
            // SAFETY: signalling the worker this test's hooks started.
            unsafe { libc::kill(pid, libc::SIGTERM) };
        }
    }
}

impl Host {
    /// A fresh home (settings with one permission of the user's, a private `.claude.json`), a
    /// project dir, a data dir, and the fake API answering `plans`.
    pub fn new(bin: String, plans: impl FnOnce(&Path) -> Vec<Plan>) -> Self {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let (home, data, proj) = (tmp.path().join("home"), tmp.path().join("data"), tmp.path().join("proj"));
        std::fs::create_dir_all(home.join(".claude")).unwrap();
        std::fs::create_dir_all(proj.join("src")).unwrap();
        std::fs::write(home.join(".claude/settings.json"), SETTINGS).unwrap();
        let claude_json = home.join(".claude.json");
        std::fs::write(&claude_json, "{\n  \"numStartups\": 3\n}\n").unwrap();
        std::fs::set_permissions(&claude_json, std::fs::Permissions::from_mode(0o600)).unwrap();
        let fake = FakeAnthropic::start(plans(&proj));
        Host {
            _tmp: tmp,
            home,
            data,
            proj,
            bin,
            fake,
        }
    }
}

/// The native `claude` binary the Claude Code tests drive (`MEMD_CLAUDE_BIN`), or None after the
/// fixture rule ([`super::fixture_env`]).
pub fn claude_bin() -> Option<String> {
    super::fixture_env(
        "MEMD_CLAUDE_BIN",
        "`npm install @anthropic-ai/claude-code` and point it at the native `claude`",
    )
}

pub fn plans(proj: &Path) -> Vec<Plan> {
    let notes = proj.join("src/notes.md");
    let body = "Zebra-facts: stripes are unique to each zebra.\n".repeat(40);
    let plan = |key: &str, turns: Vec<Turn>| Plan { key: key.into(), turns };
    vec![
        plan(
            "alpha-capture",
            vec![
                tool("Write", json!({"file_path": notes, "content": body})),
                tool(
                    "Bash",
                    json!({"command": "grep -c Zebra src/notes.md", "description": "Count the zebra lines"}),
                ),
                Turn::Text("Wrote the zebra notes.".into()),
            ],
        ),
        plan(
            "beta-recall",
            vec![tool("Read", json!({"file_path": notes})), Turn::Text("Read them.".into())],
        ),
        plan(
            "gamma-mcp",
            vec![
                tool("ToolSearch", json!({"query": "select:mcp__memd__search", "max_results": 1})),
                tool("mcp__memd__search", json!({"query": "zebra"})),
                Turn::Text("Memory answered.".into()),
            ],
        ),
        plan("delta-fork", vec![Turn::Text("Forked.".into())]),
        plan(
            "zeta-stopped",
            vec![
                tool("Bash", json!({"command": "echo zeta-while-stopped", "description": "Say zeta"})),
                Turn::Text("ok".into()),
            ],
        ),
        plan(
            "epsilon-killed",
            vec![
                tool("Bash", json!({"command": "echo epsilon-after-kill", "description": "Say epsilon"})),
                Turn::Text("ok".into()),
            ],
        ),
    ]
}
