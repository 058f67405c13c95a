//! `memd reindex`: asks the worker to drop every embedded vector and re-embed all rows, then shows
//! the backfill's progress (`vectors.backfill` of `GET /api/status`) as a bar until it completes.

use crate::protocol::paths;
use std::collections::HashMap;
use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};

use crate::client::worker::Worker;
use crate::config::{Settings, data_dir_from_env};
use crate::data_dir::DataDir;
use crate::status::StatusDoc;

const BAR_WIDTH: usize = 30;

/// `[#####-----] 120/400 rows embedded`.
pub fn progress_bar(done: i64, total: i64) -> String {
    let filled = if total > 0 {
        ((done.clamp(0, total) as f64 / total as f64) * BAR_WIDTH as f64).round() as usize
    } else {
        BAR_WIDTH
    };
    format!(
        "[{}{}] {done}/{total} rows embedded",
        "#".repeat(filled),
        "-".repeat(BAR_WIDTH - filled)
    )
}

pub fn run(env: &HashMap<String, String>, no_wait: bool) -> anyhow::Result<ExitCode> {
    let dir = DataDir::new(data_dir_from_env(env));
    let settings = Settings::load(dir.root.clone(), env);
    let worker = Worker::locate(&dir, settings.port);
    match worker.post(paths::VECTORS_REINDEX, b"{}", Duration::from_secs(70)) {
        Ok(r) if r.status == 200 => {}
        Ok(r) => bail!("worker answered {}: {}", r.status, r.text().trim()),
        Err(_) => bail!("worker is not running (nothing answers on {})", worker.addr),
    }
    if no_wait {
        say!("reindex started; progress in `memd status`");
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = std::io::stderr();
    // Redrawn in place on a terminal only: piped, a bar would pile up line after line (issue 37).
    let tty = std::io::IsTerminal::is_terminal(&out);
    loop {
        let doc: StatusDoc = match worker.get(paths::STATUS, Duration::from_secs(5)) {
            Ok(r) if r.status == 200 => serde_json::from_slice(&r.body).context("reading the status document")?,
            _ => bail!("worker stopped answering during the reindex"),
        };
        let (done, total) = (doc.vectors.backfill.done, doc.vectors.backfill.total);
        if doc.vectors.state == "no_model" {
            bail!("no embedding model: run `memd models install`");
        }
        if tty {
            let _ = write!(out, "\r{}", progress_bar(done, total));
            let _ = out.flush();
        }
        match doc.vectors.state.as_str() {
            "ok" if done >= total => break,
            _ => std::thread::sleep(Duration::from_millis(500)),
        }
    }
    if tty {
        say_err!();
    }
    say!("reindex complete");
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::progress_bar;

    #[test]
    fn bar_fills_in_proportion() {
        assert!(progress_bar(0, 10).starts_with(&format!("[{}]", "-".repeat(30))));
        assert!(progress_bar(5, 10).starts_with(&format!("[{}{}]", "#".repeat(15), "-".repeat(15))));
        assert!(progress_bar(0, 0).contains("0/0"));
    }
}
