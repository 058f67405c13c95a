//! `memd serve`: take the data-dir lock first (a second worker touches nothing), then log and run.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

use crate::config::{RawSettings, Settings, data_dir_from_env};
use crate::data_dir::DataDir;

pub fn run(env: &HashMap<String, String>) -> anyhow::Result<ExitCode> {
    let dir = DataDir::new(data_dir_from_env(env));
    dir.ensure_root()?;
    let lock = dir.lock()?;
    dir.ensure_subdir(&dir.logs())?;
    let (raw, file_warnings) = RawSettings::load(&dir.root, env);
    let mut settings = Settings::resolve(dir.root.clone(), &raw, env.get("HOME").map(PathBuf::from));
    settings.warnings.extend(file_warnings);
    settings.path_env = env.get("PATH").cloned();
    crate::logging::init(Some(dir.logs()), "memd", &settings.log_filter);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("memd")
        .build()
        .context("starting the runtime")?;
    runtime.block_on(crate::server::run(settings, dir, &lock))?;
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    Ok(ExitCode::SUCCESS)
}
