//! Issue 18: memd under the real Codex CLI. `memd install --host codex` into a fresh `CODEX_HOME`,
//! the hooks trusted the way a user trusts them (Codex's own `hooks/list` over `codex app-server`
//! gives each hook's hash; it is written to `[hooks.state]`, as Codex's `/hooks` review does), then
//! two `codex exec` sessions against a fake Responses API whose model calls the shell once. Checks
//! the tool call and the prompt stored under platform `codex`, and the first session's
//! observation in the index the second session sends the model.
//!
//! Needs the native binary (`MEMD_CODEX_BIN`; `.ci/run` installs `@openai/codex-linux-x64` from
//! npm). No network is used.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::support::fake_responses::{FakeResponses, PROBE};
use crate::support::{self, TestWorker, fixture_env, memd_in, wait_until};

/// The hooks Codex found, as `(key, currentHash)`, from `codex app-server`'s `hooks/list`.
fn listed_hooks(codex: &str, env: &[(&str, String)], cwd: &Path) -> Vec<(String, String)> {
    let mut child = Command::new(codex)
        .arg("app-server")
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("codex app-server");
    let mut stdin = child.stdin.take().unwrap();
    for m in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {"name": "memd-test", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {"cwds": [cwd]}}),
    ] {
        writeln!(stdin, "{m}").unwrap();
    }
    let mut found = Vec::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines().map_while(Result::ok) {
        let v: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        if v["id"] == 2 {
            for h in v["result"]["data"][0]["hooks"].as_array().into_iter().flatten() {
                found.push((
                    h["key"].as_str().unwrap().to_string(),
                    h["currentHash"].as_str().unwrap().to_string(),
                ));
            }
            break;
        }
    }
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    found
}

#[test]
fn issue_18_codex_sessions_with_memd_installed() {
    let Some(codex) = fixture_env(
        "MEMD_CODEX_BIN",
        "`npm install @openai/codex-linux-x64` and point it at its `codex` binary",
    ) else {
        return;
    };
    let w = TestWorker::start(&[("MEMD_EMBEDDINGS", "none")]);
    let fake = FakeResponses::start();
    let home = tempfile::tempdir().unwrap();
    let codex_home = home.path().join(".codex");
    let work = home.path().join("work");
    std::fs::create_dir_all(&codex_home).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    let provider = format!(
        "model = \"fake-model\"\nmodel_provider = \"fake\"\n\n[model_providers.fake]\nname = \"fake\"\nbase_url = \"{}\"\nwire_api = \"responses\"\nenv_key = \"FAKE_KEY\"\n",
        fake.base_url()
    );
    std::fs::write(codex_home.join("config.toml"), &provider).unwrap();
    let env: Vec<(&str, String)> = vec![
        ("HOME", home.path().display().to_string()),
        ("CODEX_HOME", codex_home.display().to_string()),
        ("MEMD_DATA_DIR", w.data_dir().display().to_string()),
        ("PATH", std::env::var("PATH").unwrap_or_default()),
        ("FAKE_KEY", "offline".into()),
        ("MEMD_LOG", "warn".into()),
    ];
    memd_in(&env, &["install", "--host", "codex", "--no-mcp"]);

    // Trust memd's hooks as the user would, with the hashes Codex itself computes.
    let hooks = listed_hooks(&codex, &env, &work);
    assert_eq!(hooks.len(), 4, "Codex sees memd's four hooks: {hooks:?}");
    let mut config = std::fs::read_to_string(codex_home.join("config.toml")).unwrap();
    for (key, hash) in &hooks {
        config.push_str(&format!("\n[hooks.state.{}]\ntrusted_hash = {}\n", json!(key), json!(hash)));
    }
    std::fs::write(codex_home.join("config.toml"), config).unwrap();

    let exec = |prompt: &str| {
        let out = Command::new(&codex)
            .args([
                "exec",
                "--skip-git-repo-check",
                "--dangerously-bypass-approvals-and-sandbox",
                prompt,
            ])
            .env_clear()
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .current_dir(&work)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "codex exec: {text}");
        text
    };
    let said = exec("list the files please");
    assert!(said.contains("memd-codex-probe"), "the fake model's shell call ran: {said}");
    let q = "SELECT count(*) FROM tool_uses WHERE platform_source = 'codex' AND tool_input LIKE '%memd-codex-probe%'";
    assert!(
        wait_until(support::DEADLINE, || w.count(q) == 1),
        "the shell call is stored once under codex"
    );
    assert_eq!(
        w.count("SELECT count(*) FROM user_prompts WHERE platform_source = 'codex' AND prompt_text = 'list the files please'"),
        1
    );
    assert!(
        wait_until(support::DEADLINE, || w
            .count("SELECT count(*) FROM observations WHERE platform_source = 'codex'")
            > 0),
        "an observation was made"
    );

    let before = fake.requests().len();
    exec("what did we do last time");
    let first = &fake.requests()[before];
    let sent = first["input"].to_string();
    assert!(
        sent.contains(&format!("Ran {PROBE}")),
        "the second session's first request carries memd's index with the first session's observation"
    );
}
