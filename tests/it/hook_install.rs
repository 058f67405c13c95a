//! `memd install`: twice gives the same file as once; `--uninstall` gives the original file back
//! byte for byte, foreign hooks untouched; `CLAUDE_CONFIG_DIR` is respected; plugin folder.

use std::path::Path;
use std::process::Command;

const ORIGINAL: &str = r#"{
  "model": "opus",
  "hooks": {
    "PostToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "/usr/local/bin/lint-hook"
          }
        ]
      }
    ]
  },
  "permissions": {
    "allow": [
      "Bash(cargo test:*)"
    ]
  }
}
"#;

fn install(home: &Path, config_dir: Option<&Path>, args: &[&str]) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_memd"));
    cmd.env_clear()
        .env("HOME", home)
        .env("MEMD_DATA_DIR", home.join("data"))
        .arg("install")
        .args(args);
    if let Some(d) = config_dir {
        cmd.env("CLAUDE_CONFIG_DIR", d);
    }
    let out = cmd.output().expect("run memd install");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    out
}

#[test]
fn install_is_idempotent_and_uninstall_restores_the_original() {
    let home = tempfile::tempdir().unwrap();
    let settings = home.path().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, ORIGINAL).unwrap();
    install(home.path(), None, &[]);
    let once = std::fs::read_to_string(&settings).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&once).unwrap();
    let events = doc["hooks"].as_object().unwrap();
    assert_eq!(events.len(), 7);
    assert_eq!(doc["hooks"]["PostToolUse"][0]["hooks"][0]["command"], "/usr/local/bin/lint-hook");
    let obs = &doc["hooks"]["PostToolUse"][1];
    assert_eq!(obs["matcher"], "*");
    assert_eq!(obs["hooks"][0]["async"], true);
    assert_eq!(obs["hooks"][0]["timeout"], 30);
    // Exec form, the lean hook binary beside memd.
    assert!(obs["hooks"][0]["command"].as_str().unwrap().ends_with("/memd-hook"));
    assert_eq!(obs["hooks"][0]["args"], serde_json::json!(["claude-code", "observation"]));
    assert!(doc["hooks"]["Stop"][0].get("matcher").is_none());
    assert!(
        doc["hooks"]["SessionStart"][0].get("matcher").is_none(),
        "every source, fork included"
    );
    let allow = doc["permissions"]["allow"].as_array().unwrap();
    assert_eq!(allow[0], "Bash(cargo test:*)");
    assert!(allow.iter().any(|a| a == "mcp__memd__search"));
    assert!(!allow.iter().any(|a| a == "mcp__memd__forget"), "forgetting still asks");
    assert_eq!(doc["hooks"]["PreToolUse"][0]["matcher"], "Read");
    let mcp: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(home.path().join(".claude.json")).unwrap()).unwrap();
    assert_eq!(mcp["mcpServers"]["memd"]["args"][0], "mcp");

    // A fresh install, before any session: doctor passes (the worker and token are notes).
    let doctor = Command::new(env!("CARGO_BIN_EXE_memd"))
        .env_clear()
        .env("HOME", home.path())
        .env("MEMD_DATA_DIR", home.path().join("data"))
        .env("PATH", "/usr/bin:/bin")
        .arg("doctor")
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&doctor.stdout);
    assert_eq!(doctor.status.code(), Some(0), "{report}");
    assert!(report.contains("note worker: not started yet (starts on first use)"), "{report}");

    let second = install(home.path(), None, &[]);
    let said = String::from_utf8_lossy(&second.stdout);
    assert!(
        said.starts_with("memd is already installed: nothing changed.\n"),
        "a second install changes nothing: {said}"
    );
    assert!(
        said.contains("Observer: the deterministic extractor: no model calls, no cost"),
        "{said}"
    );
    assert!(
        said.contains("Next: restart Claude Code") && said.contains("memd doctor") && said.contains("memd open"),
        "{said}"
    );
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), once);

    let backups = |dir: &Path| {
        std::fs::read_dir(dir)
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().contains(".memd-backup"))
            .count()
    };
    let before = backups(&home.path().join(".claude"));
    let removed = install(home.path(), None, &["--uninstall"]);
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), ORIGINAL);
    assert!(!home.path().join(".claude.json").exists(), "the file memd created is gone again");
    assert_eq!(
        backups(&home.path().join(".claude")),
        before,
        "an uninstall writes no backup of its own"
    );
    let said = String::from_utf8_lossy(&removed.stdout);
    assert!(said.contains("Kept: your memories in") && said.contains("rm -rf"), "{said}");
    let again = install(home.path(), None, &["--uninstall"]);
    assert!(String::from_utf8_lossy(&again.stdout).starts_with("nothing to remove\n"));
}

/// `.claude.json` holds OAuth state: its mode survives the edit; the data dir is created 0700;
/// `--no-permissions` and `--shell-form` do what they say; an older install is upgraded in place.
#[test]
fn modes_are_kept_and_older_installs_upgrade() {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().unwrap();
    let claude_json = home.path().join(".claude.json");
    std::fs::write(&claude_json, "{\"oauthAccount\": {\"emailAddress\": \"dev@example.com\"}}\n").unwrap();
    std::fs::set_permissions(&claude_json, std::fs::Permissions::from_mode(0o600)).unwrap();
    let settings = home.path().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let old = r#"{"hooks":{"SessionStart":[{"matcher":"startup|resume|clear|compact","hooks":[{"type":"command","command":"\"/old/memd\" hook claude-code context","timeout":10}]}]}}"#;
    std::fs::write(&settings, old).unwrap();
    install(home.path(), None, &["--no-permissions"]);
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&claude_json), 0o600);
    assert_eq!(mode(&home.path().join("data")), 0o700);
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    let starts = doc["hooks"]["SessionStart"].as_array().unwrap();
    assert_eq!(starts.len(), 1, "the old handler was updated, not duplicated: {starts:?}");
    assert!(starts[0].get("matcher").is_none());
    assert_eq!(starts[0]["hooks"][0]["args"], serde_json::json!(["claude-code", "context"]));
    assert!(doc.get("permissions").is_none());
    let backups: Vec<_> = std::fs::read_dir(home.path())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with(".claude.json.memd-backup"))
        .collect();
    assert!(
        backups.iter().all(|b| mode(&b.path()) == 0o600),
        "backups of .claude.json stay private"
    );

    let shell = tempfile::tempdir().unwrap();
    install(shell.path(), None, &["--shell-form"]);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(shell.path().join(".claude/settings.json")).unwrap()).unwrap();
    let c = doc["hooks"]["PostToolUse"][0]["hooks"][0]["command"].as_str().unwrap();
    assert!(
        c.starts_with("exec \"") && c.ends_with("/memd-hook\" claude-code observation"),
        "{c}"
    );
    assert_eq!(mode(&shell.path().join(".claude.json")), 0o600, "a new .claude.json is private");
}

#[test]
fn claude_config_dir_and_plugin_folder() {
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join("cfg");
    install(home.path(), Some(&config), &[]);
    assert!(config.join("settings.json").exists());
    assert!(config.join(".claude.json").exists());
    assert!(!home.path().join(".claude/settings.json").exists());
    install(home.path(), Some(&config), &["--uninstall"]);
    assert!(!config.join("settings.json").exists() || std::fs::read_to_string(config.join("settings.json")).unwrap().trim() == "{}");

    let plugin = home.path().join("plugin");
    install(home.path(), None, &["--plugin", plugin.to_str().unwrap()]);
    let hooks: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(plugin.join("hooks/hooks.json")).unwrap()).unwrap();
    assert_eq!(hooks["hooks"].as_object().unwrap().len(), 7);
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(plugin.join(".claude-plugin/plugin.json")).unwrap()).unwrap();
    assert_eq!(manifest["name"], "memd");
    assert!(plugin.join(".mcp.json").exists());
}
