//! Every flag key means the same in the three processes that read settings: the hook
//! (`HookEnv`, a light read with no database and no runtime), the CLI (`CliContext`) and the worker
//! (`Settings::load`, what `memd serve` starts from) — from the environment and from settings.json.

use std::collections::HashMap;
use std::time::Instant;

use super::{KEYS, Kind, Settings, parse_flag};
use crate::cli::client_context::CliContext;
use crate::hook::env::HookEnv;

const VALUES: [&str; 9] = ["", " ", "0", "false", "no", "off", "1", "true", "ON"];

fn readings(data: &std::path::Path, env: &HashMap<String, String>, key: &super::Key) -> (bool, bool, bool) {
    let hook = HookEnv::new(env, Instant::now()).flag(key);
    let cli = CliContext::load(env, None)
        .settings
        .flag(key)
        .unwrap_or_else(|| panic!("CLI settings lack {}", key.name));
    let worker = Settings::load(data.to_path_buf(), env)
        .flag(key)
        .unwrap_or_else(|| panic!("worker settings lack {}", key.name));
    (hook, cli, worker)
}

#[test]
fn hook_cli_and_worker_agree_on_every_flag() {
    let flags: Vec<_> = KEYS.iter().filter(|k| k.kind == Kind::Flag).collect();
    assert!(flags.len() >= 7, "{flags:?}");
    for key in flags {
        let default = parse_flag(key.default).unwrap();
        for v in VALUES {
            let want = parse_flag(v).unwrap_or(default);
            let dir = tempfile::tempdir().unwrap();
            let data = dir.path().to_string_lossy().into_owned();
            let env = HashMap::from([("MEMD_DATA_DIR".to_string(), data.clone()), (key.name.to_string(), v.to_string())]);
            assert_eq!(
                readings(dir.path(), &env, key),
                (want, want, want),
                "{}={v:?} in the environment",
                key.name
            );
            let file = serde_json::json!({ key.name: v }).to_string();
            std::fs::write(dir.path().join("settings.json"), file).unwrap();
            let env = HashMap::from([("MEMD_DATA_DIR".to_string(), data)]);
            assert_eq!(
                readings(dir.path(), &env, key),
                (want, want, want),
                "{}={v:?} in settings.json",
                key.name
            );
        }
    }
}
