//! Issue 18: memd under the real Gemini CLI. `memd install --host gemini` into a fresh home, then
//! two headless `gemini -p` sessions against a fake Gemini API whose model calls
//! `run_shell_command` once. Checks the tool call and the user's prompt (without memd's injected
//! context) stored under platform `gemini`, and the first session's observation in the context of
//! the second session's first model request.
//!
//! Needs the CLI (`MEMD_GEMINI_BIN`; `.ci/run` installs `@google/gemini-cli` from npm). No network.

use std::process::{Command, Stdio};

use crate::support::fake_gemini::{FakeGemini, PROBE_DESCRIPTION};
use crate::support::{self, TestWorker, fixture_env, memd_in, wait_until};

#[test]
fn issue_18_gemini_sessions_with_memd_installed() {
    let Some(gemini) = fixture_env(
        "MEMD_GEMINI_BIN",
        "`npm install @google/gemini-cli` and point it at node_modules/.bin/gemini",
    ) else {
        return;
    };
    let w = TestWorker::start(&[("MEMD_EMBEDDINGS", "none")]);
    let fake = FakeGemini::start();
    let home = tempfile::tempdir().unwrap();
    let settings = home.path().join(".gemini");
    let work = home.path().join("work");
    std::fs::create_dir_all(&settings).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    // An API-key login, no folder-trust prompt, nothing phoning home.
    std::fs::write(
        settings.join("settings.json"),
        r#"{
  "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}},
  "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false}
}
"#,
    )
    .unwrap();
    let env: Vec<(&str, String)> = vec![
        ("HOME", home.path().display().to_string()),
        ("MEMD_DATA_DIR", w.data_dir().display().to_string()),
        ("PATH", std::env::var("PATH").unwrap_or_default()),
        ("GEMINI_API_KEY", "offline".into()),
        ("GOOGLE_GEMINI_BASE_URL", fake.url()),
        ("MEMD_LOG", "warn".into()),
    ];
    memd_in(&env, &["install", "--host", "gemini", "--no-mcp"]);

    let run = |prompt: &str| {
        let out = Command::new(&gemini)
            .args(["-p", prompt, "--yolo", "-m", "gemini-2.5-flash"])
            .env_clear()
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .current_dir(&work)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "gemini: {text}");
    };
    run("list the files please");
    let q = "SELECT count(*) FROM tool_uses WHERE platform_source = 'gemini' AND tool_name = 'run_shell_command' \
             AND tool_input LIKE '%memd-gemini-probe%' AND tool_response LIKE '%memd-gemini-probe%'";
    assert!(
        wait_until(support::DEADLINE, || w.count(q) == 1),
        "the shell call is stored once under gemini"
    );
    assert_eq!(
        w.count("SELECT count(*) FROM user_prompts WHERE platform_source = 'gemini' AND prompt_text = 'list the files please'"),
        1,
        "the prompt is stored as the user typed it"
    );
    assert!(
        wait_until(support::DEADLINE, || w
            .count("SELECT count(*) FROM observations WHERE platform_source = 'gemini'")
            > 0),
        "an observation was made"
    );

    let before = fake.requests().len();
    run("what did we do last time");
    let first = fake.requests()[before]["contents"].to_string();
    assert!(
        first.contains(&format!("Ran {PROBE_DESCRIPTION}")),
        "the second session's first request carries memd's context with the first session's observation, \
         titled as a shell call (Gemini's run_shell_command read as Claude Code's Bash): {first}"
    );
}
