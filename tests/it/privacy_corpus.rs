//! Issue 13: a planted corpus — every secret kind × every Claude Code payload shape — ingested
//! over HTTP and through the hook's spool, with an LLM observer (fake Anthropic server). No planted
//! value may be found in any file of the data dir (database, WAL, FTS shadow tables, logs, spool
//! files), in a read API answer, or in a request the provider received.

use crate::support::fake_llm::FakeLlm;
use crate::support::hook::{bare_command, run_hook, spool_files};
use crate::support::{DEADLINE, TestWorker, files_under, wait_until};
use serde_json::{Value, json};

/// A secret kind: the text as a developer meets it, with `{S}` where the secret goes.
const KINDS: &[(&str, &str)] = &[
    ("url_userinfo", "postgres://admin:{S}@db.internal:5432/app"),
    ("env_file", "DB_PASSWORD={S}"),
    ("shell_export", "export API_TOKEN={S}"),
    ("yaml", "database:\n  password: {S}\n  host: db"),
    ("toml", "[service]\nsecret_key = \"{S}\""),
    ("ini", "[client]\npasswd={S}"),
    ("json_text", "{\"client_secret\": \"{S}\", \"id\": 3}"),
    ("cli_flag_eq", "mysql --password={S} -h db"),
    ("cli_flag_space", "deploy --token {S} --env prod"),
    ("docker_env", "docker run -e POSTGRES_PASSWORD={S} postgres:16"),
    ("kubectl_literal", "kubectl create secret generic db --from-literal=password={S}"),
    ("bearer_header", "Authorization: Bearer {S}"),
    ("token_header", "authorization: Token {S}"),
    ("api_key_header", "X-Api-Key: {S}"),
    ("cookie", "Cookie: theme=dark; session={S}"),
    ("set_cookie", "Set-Cookie: sid={S}; Path=/; HttpOnly"),
    ("curl_header", "curl -s -H \"Authorization: Bearer {S}\" https://api.example.com/v1"),
    ("curl_user", "curl -u deploy:{S} https://ci.example.com"),
    ("keyword_entropy", "the staging api key is {S} until friday"),
    ("database_url", "DATABASE_URL=mysql://app:{S}@10.0.0.5/prod"),
    ("anthropic", "ANTHROPIC_API_KEY=sk-ant-api03-{S}"),
    ("aws", "key AKIA{S}"),
    (
        "pem",
        "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ{S}\nCkvJ4hP8nq2YQm3sT0uW5eR7tX9aZ1bD3fG5hJ7kL9mN1pQ3rS5tU7vW9xY1zA3B\nq2YQm3sT0uW5eR7==\n-----END PRIVATE KEY-----",
    ),
];

/// A secret unique to its case: mixed case and digits, 24 characters (16 upper-case ones for
/// the AWS shape).
fn secret(kind: &str, n: usize) -> String {
    if kind == "aws" {
        return format!("Q{n:03}ZX7WVB2KJ9LMN").chars().take(16).collect::<String>().to_uppercase();
    }
    if kind == "pem" {
        return format!("Zq{n:03}x8Lp2Wv7R");
    }
    format!("Zq{n:03}x8Lp2Wv7Rt4Ks9Yd6Mh")
}

/// Claude Code payload shapes: (tool name, input, response) or a prompt.
fn shape(name: &str, text: &str) -> Option<(String, Value, Value)> {
    let lines: Vec<String> = text.lines().map(|l| format!("+{l}")).collect();
    Some(match name {
        "bash_stdout" => (
            "Bash".into(),
            json!({"command": "cat .env"}),
            json!({"stdout": text, "stderr": "", "interrupted": false}),
        ),
        "bash_stderr" => (
            "Bash".into(),
            json!({"command": "make deploy"}),
            json!({"stdout": "", "stderr": text}),
        ),
        "read" => (
            "Read".into(),
            json!({"file_path": "/tmp/proj/.env"}),
            json!({"type": "text", "file": {"filePath": "/tmp/proj/.env", "content": text, "numLines": 3}}),
        ),
        "write" => (
            "Write".into(),
            json!({"file_path": "/tmp/proj/config.yml", "content": text}),
            json!({"type": "create", "filePath": "/tmp/proj/config.yml"}),
        ),
        "edit_patch" => (
            "Edit".into(),
            json!({"file_path": "/tmp/proj/a.cfg", "old_string": "x", "new_string": "y"}),
            json!({"filePath": "/tmp/proj/a.cfg", "structuredPatch": [{"oldStart": 1, "lines": lines}]}),
        ),
        "edit_strings" => (
            "Edit".into(),
            json!({"file_path": "/tmp/proj/a.cfg", "old_string": text, "new_string": format!("{text}\n# rotated")}),
            json!({"filePath": "/tmp/proj/a.cfg", "oldString": text, "newString": text}),
        ),
        "multi_edit" => (
            "MultiEdit".into(),
            json!({"file_path": "/tmp/proj/b.cfg", "edits": [{"old_string": "a", "new_string": text}]}),
            json!({"filePath": "/tmp/proj/b.cfg"}),
        ),
        "grep" => (
            "Grep".into(),
            json!({"pattern": "password", "output_mode": "content"}),
            json!({"mode": "content", "content": format!("src/settings.py:12:{}", text.replace('\n', " ")), "numLines": 1}),
        ),
        "web_fetch" => (
            "WebFetch".into(),
            json!({"url": "https://docs.example.com/setup", "prompt": "how to configure"}),
            json!({"result": format!("Configure it like this:\n{text}"), "code": 200}),
        ),
        "mcp" => (
            "mcp__vault__read".into(),
            json!({"path": "kv/app"}),
            json!([{"type": "text", "text": text}]),
        ),
        _ => return None,
    })
}

const SHAPES: &[&str] = &[
    "bash_stdout",
    "bash_stderr",
    "read",
    "write",
    "edit_patch",
    "edit_strings",
    "multi_edit",
    "grep",
    "web_fetch",
    "mcp",
];

fn leaks_in(text: &str, needles: &[(String, String)], place: &str) -> Vec<String> {
    needles
        .iter()
        .filter(|(_, n)| text.contains(n.as_str()))
        .map(|(case, _)| format!("{place}: {case}"))
        .collect()
}

/// A hook process with no worker to reach: it spools.
fn hook(w: &TestWorker, handler: &str, stdin: &Value) {
    let cmd = bare_command(w.data_dir(), &[("MEMD_PORT", "1"), ("MEMD_AUTOSTART", "false")]);
    let out = run_hook(cmd, handler, &stdin.to_string());
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn issue_13_no_planted_credential_survives_ingest_whatever_its_shape() {
    let fake = FakeLlm::start();
    let base = fake.base_url();
    let mut w = TestWorker::prepared(&[
        ("MEMD_PROVIDER", "anthropic"),
        ("MEMD_ANTHROPIC_API_KEY", "sk-ant-test-key-not-real"),
        ("MEMD_ANTHROPIC_BASE_URL", base.as_str()),
        ("MEMD_LOG", "debug"),
        ("MEMD_EMBEDDINGS", "none"),
    ]);
    let mut needles: Vec<(String, String)> = Vec::new();
    let mut http: Vec<(String, Value)> = Vec::new();
    let mut n = 0;
    for (k, (kind, template)) in KINDS.iter().enumerate() {
        let mut shapes: Vec<&str> = SHAPES.to_vec();
        shapes.push("prompt");
        shapes.push("json_key");
        for (s, shape_name) in shapes.iter().enumerate() {
            n += 1;
            let secret = secret(kind, n);
            let text = template.replace("{S}", &secret);
            let case = format!("{kind}×{shape_name}");
            needles.push((case.clone(), secret.clone()));
            let session = format!("corpus-{k}");
            // Every other case goes through a hook while the worker is down: the spool path.
            let via_spool = (k + s) % 2 == 0;
            let (route, body) = match *shape_name {
                "prompt" => (
                    "/api/sessions/init",
                    json!({"contentSessionId": session, "prompt": format!("please use {text} for this"), "cwd": "/tmp/proj"}),
                ),
                "json_key" => (
                    "/api/sessions/observations",
                    json!({"contentSessionId": session, "tool_name": "Bash", "cwd": "/tmp/proj", "tool_use_id": format!("tu{n}"),
                           "tool_input": {"command": "env"}, "tool_response": {"parsed": {"DB_PASSWORD": secret, text.clone(): true}}}),
                ),
                other => {
                    let (tool, input, response) = shape(other, &text).unwrap();
                    (
                        "/api/sessions/observations",
                        json!({"contentSessionId": session, "tool_name": tool, "cwd": "/tmp/proj", "tool_use_id": format!("tu{n}"),
                               "tool_input": input, "tool_response": response}),
                    )
                }
            };
            if via_spool {
                let stdin = if route == "/api/sessions/init" {
                    json!({"session_id": session, "cwd": "/tmp/proj", "hook_event_name": "UserPromptSubmit", "prompt": body["prompt"]})
                } else {
                    json!({"session_id": session, "cwd": "/tmp/proj", "hook_event_name": "PostToolUse", "tool_name": body["tool_name"],
                           "tool_use_id": body["tool_use_id"], "tool_input": body["tool_input"], "tool_response": body["tool_response"]})
                };
                hook(
                    &w,
                    if route == "/api/sessions/init" {
                        "session-init"
                    } else {
                        "observation"
                    },
                    &stdin,
                );
            } else {
                http.push((route.to_string(), body));
            }
        }
    }
    assert!(needles.len() >= 60, "{} cases", needles.len());
    let mut leaks = Vec::new();
    let spooled = files_under(&w.data_dir().join("spool"));
    assert!(
        spooled.len() >= needles.len() / 2 - 1,
        "the hook spooled its half: {}",
        spooled.len()
    );
    for p in &spooled {
        leaks.extend(leaks_in(
            &String::from_utf8_lossy(&std::fs::read(p).unwrap()),
            &needles,
            "spool file",
        ));
    }

    w.spawn();
    for (route, body) in &http {
        assert_eq!(w.post(route, body).status, 200, "{route} {body}");
    }
    for k in 0..KINDS.len() {
        let stop = json!({"contentSessionId": format!("corpus-{k}"), "last_assistant_message": "Done."});
        assert_eq!(w.post("/api/sessions/summarize", &stop).status, 200);
    }
    assert!(
        wait_until(DEADLINE * 4, || w.count("SELECT count(*) FROM pending_messages") == 0
            && spool_files(w.data_dir()).is_empty()),
        "queue and spool drained"
    );
    let stored = w.count("SELECT count(*) FROM tool_uses");
    assert!(
        stored >= (KINDS.len() * (SHAPES.len() + 1)) as i64,
        "every tool case stored: {stored}"
    );
    assert!(fake.count() >= 1, "the observer called the provider");

    for path in files_under(w.data_dir()) {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        leaks.extend(leaks_in(
            &String::from_utf8_lossy(&std::fs::read(&path).unwrap_or_default()),
            &needles,
            &name,
        ));
    }
    for r in fake.requests() {
        leaks.extend(leaks_in(&r.body.to_string(), &needles, "provider request"));
    }
    let ids: Vec<i64> = {
        let db = w.db();
        let mut st = db.prepare("SELECT id FROM observations").unwrap();
        st.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
    };
    let mut answers = vec![
        w.get("/api/context/inject?project=proj").text(),
        w.get("/api/search?query=password&limit=100").text(),
        w.get("/api/search?query=configure&limit=100").text(),
        w.post("/api/observations/batch", &json!({"ids": ids})).text(),
    ];
    if let Some(first) = ids.first() {
        answers.push(
            w.get(&format!("/api/timeline?anchor={first}&depth_before=50&depth_after=50"))
                .text(),
        );
    }
    for a in &answers {
        leaks.extend(leaks_in(a, &needles, "read API answer"));
    }
    leaks.sort();
    leaks.dedup();
    assert!(leaks.is_empty(), "{} planted credentials found: {leaks:#?}", leaks.len());
    let redactions = w.status()["privacy"]["redactions"].clone();
    for name in ["assignment", "url_password", "auth_header", "cookie", "private_key_pem"] {
        assert!(redactions[name].as_u64().unwrap_or(0) > 0, "{name}: {redactions}");
    }
}

/// Issue 13 false positives: the detectors over every string and key of the recorded sessions
/// (the committed excerpts always, the whole set through `MEMD_TRANSCRIPTS_DIR`). No finding may
/// be shaped like a UUID, a commit hash, a file path or a code identifier, and the total stays
/// at the reviewed level of docs/privacy.md.
#[test]
fn issue_13_the_real_transcripts_lose_no_path_identifier_hash_or_uuid() {
    let mut dirs = vec![std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/transcripts")];
    if let Some(all) = crate::support::transcripts::transcripts_dir() {
        dirs.push(all);
    }
    let report = memd::cli::redact::audit(&memd::pipeline::redact::Redactor::default(), &dirs, 3).unwrap();
    assert!(report.strings > 1_000, "{} strings scanned", report.strings);
    assert!(report.benign.is_empty(), "benign-shaped findings: {:?}", report.benign);
    let total: u64 = report.per_detector.values().sum();
    assert!(total <= 40, "more findings than the reviewed list: {:?}", report.per_detector);
}

/// Issue 13: rows stored before a rule existed. A worker with the context rules disabled stores
/// a `.env` line in clear; `memd redact --rescan --dry-run` counts it and changes nothing; the
/// rescan rewrites it (FTS included); a worker started on rows of an older rules version rescans
/// them by itself.
#[test]
fn issue_13_rescan_applies_new_rules_to_stored_rows() {
    let secret = "Zq9x8Lp2Wv7Rt4Ks9Yd6Mh";
    let mut w = TestWorker::start(&[
        ("MEMD_REDACT_DISABLED_BUILTINS", "assignment,keyword_entropy,cli_flag"),
        ("MEMD_EMBEDDINGS", "none"),
    ]);
    let obs = json!({"contentSessionId": "old", "tool_name": "Bash", "cwd": "/tmp/proj", "tool_use_id": "tu-old",
        "tool_input": {"command": "cat .env"}, "tool_response": {"stdout": format!("DB_PASSWORD={secret}\n")}});
    assert_eq!(
        w.post(
            "/api/sessions/init",
            &json!({"contentSessionId": "old", "prompt": format!("use DB_PASSWORD={secret}"), "cwd": "/tmp/proj"})
        )
        .status,
        200
    );
    assert_eq!(w.post("/api/sessions/observations", &obs).status, 200);
    assert!(wait_until(DEADLINE, || w.count("SELECT count(*) FROM pending_messages") == 0));
    assert!(w.stop().success());
    let in_clear = |w: &TestWorker| {
        w.count(&format!("SELECT count(*) FROM tool_uses WHERE tool_response LIKE '%{secret}%'"))
            + w.count(&format!("SELECT count(*) FROM user_prompts WHERE prompt_text LIKE '%{secret}%'"))
    };
    assert_eq!(in_clear(&w), 2, "the old rules kept it");
    let memd = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_memd"))
            .args(args)
            .env_clear()
            .env("HOME", w.data_dir())
            .env("MEMD_DATA_DIR", w.data_dir())
            .env("MEMD_PORT", "1")
            .env("MEMD_AUTOSTART", "false")
            .output()
            .unwrap()
    };
    let dry = memd(&["redact", "--rescan", "--dry-run", "--json"]);
    let doc: Value = serde_json::from_slice(&dry.stdout).unwrap_or_default();
    assert!(dry.status.success() && doc["changed"].as_u64() >= Some(2), "{dry:?}");
    assert_eq!(in_clear(&w), 2, "a dry run changes nothing");
    let run = memd(&["redact", "--rescan", "--json"]);
    let doc: Value = serde_json::from_slice(&run.stdout).unwrap_or_default();
    assert!(
        run.status.success() && doc["perDetector"]["assignment"].as_u64() >= Some(2),
        "{run:?}"
    );
    assert_eq!(in_clear(&w), 0);
    let fts = w.count(&format!(
        "SELECT count(*) FROM user_prompts_fts WHERE user_prompts_fts MATCH '\"{secret}\"'"
    ));
    assert_eq!(fts, 0, "the FTS rows were rebuilt");

    // An older rules version in the database: the worker rescans at start.
    let db = rusqlite::Connection::open(w.db_path()).unwrap();
    db.execute(
        "UPDATE tool_uses SET tool_response = ?1",
        [format!("{{\"stdout\":\"DB_PASSWORD={secret}\"}}")],
    )
    .unwrap();
    db.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES ('redaction_rules_version', '1')",
        [],
    )
    .unwrap();
    drop(db);
    w.env.retain(|(k, _)| k != "MEMD_REDACT_DISABLED_BUILTINS");
    w.spawn();
    assert!(wait_until(DEADLINE, || in_clear(&w) == 0), "the worker rescanned after the upgrade");
}
