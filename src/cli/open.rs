//! `memd open`: asks the worker (started when needed) for a one-time code and opens the viewer
//! with it (`xdg-open` / `open`), or prints the URL (`--print`, or when no opener works). The URL
//! carries only the one-time code, spent by the first load: never the bearer token.
//!
//! The code is on no command line (any local user can read `/proc/<pid>/cmdline`): the opener gets
//! the path of a page written 0600 under `<data>/viewer-links/` that sends the browser on, as
//! Jupyter does. Pages older than a code's lifetime are removed at the next `memd open`.

use crate::protocol::paths;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use anyhow::Context;

use super::client_context::CliContext;

/// A one-time viewer URL from the worker.
pub fn viewer_url(ctx: &CliContext) -> anyhow::Result<String> {
    let ans = ctx
        .link()
        .call("POST", paths::VIEWER_CODE, None)
        .context("asking the worker for a viewer code")?;
    if ans.status != 200 {
        anyhow::bail!("the worker answered {}: {}", ans.status, ans.detail());
    }
    let v = ans.json().unwrap_or_default();
    v["url"].as_str().map(str::to_string).context("the worker's answer has no url")
}

const LINKS_DIR: &str = "viewer-links";

/// Writes the 0600 page that sends a browser to `url`; answers its path.
fn redirect_page(data: &Path, url: &str) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
    let dir = data.join(LINKS_DIR);
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&dir)?;
    let meta = std::fs::symlink_metadata(&dir)?;
    if !meta.is_dir() {
        return Err(std::io::Error::other(format!("{} is not a directory", dir.display())));
    }
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
    remove_old_pages(&dir);
    let path = dir.join(format!("open-{}.html", crate::store::random_id()));
    let quoted = serde_json::to_string(url).unwrap_or_default();
    let page = format!(
        "<!doctype html><meta charset=utf-8><meta name=referrer content=no-referrer>\
         <meta http-equiv=refresh content=\"0;url={url}\"><title>memd</title>\
         <p><a href=\"{url}\">Open the memd viewer</a></p><script>location.replace({quoted})</script>\n"
    );
    let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&path)?;
    std::io::Write::write_all(&mut f, page.as_bytes())?;
    Ok(path)
}

fn remove_old_pages(dir: &Path) {
    let ttl = std::time::Duration::from_millis(crate::worker::viewer_access::CODE_TTL_MS as u64);
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let old = e.metadata().ok().and_then(|m| m.modified().ok()).and_then(|t| t.elapsed().ok());
        if old.is_some_and(|age| age > ttl) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

fn launch(target: &str) -> bool {
    let opener = if cfg!(target_os = "macos") { "open" } else { "xdg-open" };
    Command::new(opener)
        .arg(target)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

pub fn run(env: &HashMap<String, String>, print: bool) -> anyhow::Result<ExitCode> {
    let ctx = CliContext::load(env, None);
    let url = viewer_url(&ctx)?;
    let opened = !print
        && match redirect_page(&ctx.dir.root, &url) {
            Ok(page) => launch(&page.to_string_lossy()),
            Err(e) => {
                say_err!("memd: cannot write the viewer link page ({e}); printing the link instead");
                false
            }
        };
    if !opened {
        say!("{url}");
        say_err!("memd: open this link within 5 minutes; it works once.");
    }
    Ok(ExitCode::SUCCESS)
}
