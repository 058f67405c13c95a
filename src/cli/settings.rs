//! `memd settings [--markdown]`: every setting with the value this process resolves (environment,
//! else `<data>/settings.json`, else the default; credentials shown as set or not), or docs/settings.md's
//! settings table generated from `src/config/keys.rs`.

use std::collections::HashMap;
use std::process::ExitCode;

use crate::config::{KEYS, Kind, RawSettings, data_dir_from_env, keys};

pub fn run(env: &HashMap<String, String>, markdown: bool) -> anyhow::Result<ExitCode> {
    if markdown {
        say_part!("{}", keys::markdown_table());
        return Ok(ExitCode::SUCCESS);
    }
    let dir = data_dir_from_env(env);
    let (raw, warnings) = RawSettings::load(&dir, env);
    for k in KEYS {
        let shown = match (k.kind, raw.given(k)) {
            (Kind::Secret, Some(_)) => "(set)".to_string(),
            (Kind::Secret, None) => "(not set)".to_string(),
            (_, Some(v)) => v.to_string(),
            (_, None) => format!("{} (default)", k.default),
        };
        say!("{} = {shown}", k.name);
    }
    for w in warnings {
        say_err!("warning: {w}");
    }
    Ok(ExitCode::SUCCESS)
}
