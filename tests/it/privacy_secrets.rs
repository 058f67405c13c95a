//! Issue 5 acceptance: secrets planted in random tool payloads, prompts and assistant messages go
//! through the real HTTP ingest and the observer (fake Anthropic server); afterwards no planted
//! secret occurs in the database file (and its WAL), the logs, the requests the provider received,
//! or a hook's spool file.

use crate::support;
use std::process::Stdio;

use crate::support::fake_llm::{FakeLlm, Reply, default_xml};
use crate::support::{TestWorker, files_under, wait_until};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::json;

/// One planted secret: the text to plant and the part that must never be found.
#[derive(Debug, Clone)]
struct Planted {
    text: String,
    needle: String,
}

fn chars(set: &'static str, min: usize, max: usize) -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::sample::select(set.chars().collect::<Vec<_>>()), min..=max).prop_map(|v| v.into_iter().collect())
}

const UPPER_DIGIT: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const URLSAFE: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";

fn plain(prefix: &'static str, body: impl Strategy<Value = String>) -> impl Strategy<Value = Planted> {
    body.prop_map(move |b| Planted {
        text: format!("{prefix}{b}"),
        needle: b,
    })
}

/// Every built-in detector except `memd_token` (planted separately: it is the worker's own token).
fn secret() -> impl Strategy<Value = Planted> {
    prop_oneof![
        plain("AKIA", chars(UPPER_DIGIT, 16, 16)),
        chars("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/+", 40, 48).prop_map(|b| Planted {
            text: format!("aws_secret_access_key = {b}"),
            needle: b
        }),
        plain("ghp_", chars(ALNUM, 36, 40)),
        chars(ALNUM, 24, 30).prop_map(|b| Planted {
            text: format!("sk-proj-{b}7"),
            needle: format!("{b}7")
        }),
        plain("sk-ant-api03-", chars(URLSAFE, 24, 40)),
        plain("xoxb-", chars(ALNUM, 12, 24)),
        (chars(URLSAFE, 10, 20), chars(URLSAFE, 10, 20), chars(URLSAFE, 10, 30)).prop_map(|(a, b, c)| Planted {
            text: format!("eyJ{a}.eyJ{b}.{c}"),
            needle: format!("{a}.eyJ{b}"),
        }),
        chars(ALNUM, 40, 64).prop_map(|b| Planted {
            text: format!("-----BEGIN RSA PRIVATE KEY-----\nMII{b}\n-----END RSA PRIVATE KEY-----"),
            needle: format!("MII{b}"),
        }),
        plain("sk_live_", chars(ALNUM, 24, 30)),
        plain("AIza", chars(URLSAFE, 35, 35)),
    ]
}

/// Filler text that never glues onto a secret (spaces around every plant).
fn filler() -> impl Strategy<Value = String> {
    chars("abcdefghij klmnop", 0, 30)
}

fn case() -> impl Strategy<Value = (Vec<Planted>, Vec<String>)> {
    (
        proptest::collection::vec(secret(), 5..=5),
        proptest::collection::vec(filler(), 5..=5),
    )
}

fn scan(hay: &[u8], needles: &[String]) -> Vec<String> {
    let text = String::from_utf8_lossy(hay);
    needles.iter().filter(|n| text.contains(n.as_str())).cloned().collect()
}

#[test]
fn planted_secrets_never_reach_disk_logs_or_the_provider() {
    let fake = FakeLlm::start();
    let base = fake.base_url();
    let w = TestWorker::start(&[
        ("MEMD_PROVIDER", "anthropic"),
        ("MEMD_ANTHROPIC_API_KEY", "sk-ant-test-key-not-real"),
        ("MEMD_ANTHROPIC_BASE_URL", base.as_str()),
        ("MEMD_LOG", "debug"),
    ]);
    let needles = std::cell::RefCell::new(vec![w.token.clone()]);
    let mut runner = TestRunner::new(Config {
        cases: 24,
        failure_persistence: None,
        ..Config::default()
    });
    let counter = std::cell::Cell::new(0usize);
    runner
        .run(&case(), |(secrets, fill)| {
            let n = counter.get() + 1;
            counter.set(n);
            let session = format!("prop{n}");
            let s = |i: usize| format!(" {} {} ", fill[i], secrets[i].text);
            needles.borrow_mut().extend(secrets.iter().map(|p| p.needle.clone()));
            // The model itself echoes a secret: the second redaction pass must catch it.
            let echoed = default_xml(n).replace("</narrative>", &format!(" {} </narrative>", secrets[4].text));
            fake.push(Reply::text(&echoed));
            let init = w.post(
                "/api/sessions/init",
                &json!({"contentSessionId": session, "prompt": format!("deploy with{}", s(0)), "cwd": "/tmp/proj"}),
            );
            prop_assert_eq!(init.status, 200);
            let obs = json!({
                "contentSessionId": session, "tool_name": "Bash", "cwd": "/tmp/proj", "tool_use_id": format!("tu{n}"),
                "tool_input": {"command": format!("export KEY={}", secrets[1].text), "env": ["A", s(2)], "token": w.token},
                "tool_response": {"stdout": format!("ok{}", s(3)), "stderr": format!("Authorization: Bearer {}", w.token)},
            });
            prop_assert_eq!(w.post("/api/sessions/observations", &obs).status, 200);
            let stop = json!({"contentSessionId": session, "last_assistant_message": format!("Done.{}", s(4))});
            prop_assert_eq!(w.post("/api/sessions/summarize", &stop).status, 200);
            Ok(())
        })
        .unwrap();
    assert!(
        wait_until(support::DEADLINE, || w.count("SELECT count(*) FROM pending_messages") == 0),
        "queue did not drain"
    );
    assert!(w.count("SELECT count(*) FROM observations") >= 1);
    assert!(fake.count() >= 1, "the observer called the provider");

    let needles = needles.into_inner();
    let mut leaks = Vec::new();
    for path in files_under(w.data_dir()) {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if name == "token" {
            continue;
        }
        let found = scan(&std::fs::read(&path).unwrap_or_default(), &needles);
        leaks.extend(found.into_iter().map(|s| format!("{name}: {s}")));
    }
    for r in fake.requests() {
        leaks.extend(
            scan(r.body.to_string().as_bytes(), &needles)
                .into_iter()
                .map(|s| format!("provider request: {s}")),
        );
    }
    assert!(leaks.is_empty(), "planted secrets found: {leaks:?}");
    // Redaction counts by type are visible in status.
    let redactions = w.status()["privacy"]["redactions"].clone();
    for name in ["aws_access_key", "memd_token"] {
        assert!(redactions[name].as_u64().unwrap_or(0) > 0, "{redactions}");
    }
}

#[test]
fn a_spooled_event_holds_no_secret() {
    let dir = tempfile::tempdir().unwrap();
    let key = "AKIAIOSFODNN7EXAMPLE";
    let pat = format!("ghp_{}", "a1".repeat(20));
    let stdin = json!({
        "session_id": "s1", "cwd": "/tmp/proj", "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_use_id": "t1",
        "tool_input": {"command": format!("echo {key}")}, "tool_response": {"stdout": format!("token {pat} <private>hidden words</private>")},
    });
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_memd"))
        .args(["hook", "claude-code", "observation"])
        .env_clear()
        .env("HOME", dir.path())
        .env("MEMD_DATA_DIR", dir.path())
        .env("MEMD_PORT", "1")
        .env("MEMD_AUTOSTART", "false")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(stdin.to_string().as_bytes()).unwrap();
    assert!(child.wait().unwrap().success());
    let spooled: Vec<_> = files_under(&dir.path().join("spool"));
    assert_eq!(spooled.len(), 1, "the event was spooled");
    let text = std::fs::read_to_string(&spooled[0]).unwrap();
    assert!(
        !text.contains(key) && !text.contains(&pat) && !text.contains("hidden words"),
        "{text}"
    );
    assert!(text.contains("<redacted type='aws_access_key'/>"));
}

#[test]
fn issue_34_a_key_in_an_mcp_tool_name_and_a_password_in_a_url_assignment_are_redacted_whole() {
    let w = crate::support::TestWorker::start_in_process(&[]);
    let mut body = crate::support::observation_body("s34", 1);
    body["tool_name"] = serde_json::json!("mcp__db__AKIAQ7Z3K9LMNP2RSTUV__query");
    body["tool_input"] = serde_json::json!({"command": "DATABASE_URL=postgres://admin:Sup3rS3cretPass@db/app ./migrate"});
    assert_eq!(w.post("/api/sessions/observations", &body).status, 200);
    let c = rusqlite::Connection::open(w.db_path()).unwrap();
    let (name, input): (String, String) = c
        .query_row("SELECT tool_name, tool_input FROM tool_uses", [], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap();
    assert!(
        !name.contains("AKIAQ7Z3") && name.contains("<redacted type='aws_access_key'/>"),
        "{name}"
    );
    assert!(!input.contains("Sup3rS3cret"), "{input}");
    assert_eq!(input.matches("<redacted").count(), 1, "one whole marker: {input}");
    assert!(!input.contains("'/> type="), "{input}");
}
