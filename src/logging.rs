//! Logging: tracing to stderr and to `<data>/logs/<name>.log`, renamed to `<name>.log.1` past 10 MiB.
//! Colour only on a terminal: stderr of a worker started by a hook goes to `serve.out`, and the
//! host shows `memd mcp`'s stderr as text. The file never gets escape codes (its fields are
//! formatted by their own formatter, not copied from the coloured stderr layer).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::fmt::format::{DefaultFields, FormatFields, Writer};
use tracing_subscriber::prelude::*;

pub const ROTATE_BYTES: u64 = 10 * 1024 * 1024;

/// Why a new log filter was not applied.
#[derive(Debug, thiserror::Error)]
pub enum FilterError {
    #[error("logging was not initialised")]
    NotInitialised,
    #[error("not a log filter: {0}")]
    Parse(#[from] tracing_subscriber::filter::ParseError),
    #[error("the filter could not be swapped in: {0}")]
    Reload(#[from] tracing_subscriber::reload::Error),
}

type SetFilter = Box<dyn Fn(&str) -> Result<(), FilterError> + Send + Sync>;

/// Replaces the level filter of the subscriber [`init`] installed (a SIGHUP applying `MEMD_LOG`).
static SET_FILTER: std::sync::OnceLock<SetFilter> = std::sync::OnceLock::new();

/// Applies a new `MEMD_LOG` filter to the running process; an error names what is wrong with it.
pub fn set_filter(filter: &str) -> Result<(), FilterError> {
    match SET_FILTER.get() {
        Some(set) => set(filter),
        None => Err(FilterError::NotInitialised),
    }
}

/// An append-only log file that rotates itself once it passes [`ROTATE_BYTES`].
pub struct RotatingFile {
    path: PathBuf,
    file: Option<File>,
    written: u64,
    limit: u64,
}

impl RotatingFile {
    pub fn open(path: PathBuf, limit: u64) -> Self {
        let mut this = Self {
            path,
            file: None,
            written: 0,
            limit,
        };
        this.reopen();
        this
    }

    fn reopen(&mut self) {
        // Never through a link planted where the log goes (O_NOFOLLOW).
        self.file = OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .custom_flags(crate::data_dir::NO_FOLLOW)
            .open(&self.path)
            .ok();
        self.written = self.file.as_ref().and_then(|f| f.metadata().ok()).map(|m| m.len()).unwrap_or(0);
    }

    fn rotate(&mut self) {
        let mut old = self.path.clone().into_os_string();
        old.push(".1");
        self.file = None;
        let _ = std::fs::rename(&self.path, old);
        self.reopen();
    }
}

impl Write for RotatingFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.written + buf.len() as u64 > self.limit && self.written > 0 {
            self.rotate();
        }
        match self.file.as_mut() {
            Some(f) => {
                let n = f.write(buf)?;
                self.written += n as u64;
                Ok(n)
            }
            None => Ok(buf.len()),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.file.as_mut().map_or(Ok(()), |f| f.flush())
    }
}

#[derive(Clone)]
pub struct SharedLog(Arc<Mutex<RotatingFile>>);

pub struct SharedLogGuard<'a>(std::sync::MutexGuard<'a, RotatingFile>);

impl Write for SharedLogGuard<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

impl<'a> MakeWriter<'a> for SharedLog {
    type Writer = SharedLogGuard<'a>;
    fn make_writer(&'a self) -> Self::Writer {
        SharedLogGuard(self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

/// Field formatting of the log file: the default, under its own type so that it never reuses
/// fields the stderr layer formatted with colour.
struct PlainFields(DefaultFields);

impl<'w> FormatFields<'w> for PlainFields {
    fn format_fields<R: tracing_subscriber::field::RecordFields>(&self, writer: Writer<'w>, fields: R) -> std::fmt::Result {
        self.0.format_fields(writer, fields)
    }
}

/// Installs the global subscriber: stderr (only `stderr_max` and more severe, when given) plus
/// `<logs>/<name>.log`. Safe to call once per process.
#[allow(clippy::print_stderr, reason = "when the log file fails, stderr is what is left")]
pub fn init(logs_dir: Option<PathBuf>, name: &str, filter: &str, stderr_max: Option<LevelFilter>) {
    use std::io::IsTerminal;
    let filter = tracing_subscriber::EnvFilter::try_new(filter).unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let (filter, handle) = tracing_subscriber::reload::Layer::new(filter);
    let _ = SET_FILTER.set(Box::new(move |text: &str| {
        let f = tracing_subscriber::EnvFilter::try_new(text)?;
        Ok(handle.reload(f)?)
    }));
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .with_filter(stderr_max.unwrap_or(LevelFilter::TRACE));
    let file = logs_dir.map(|dir| {
        let path = dir.join(format!("{name}.log"));
        if let Err(e) = crate::data_dir::refuse_redirect(&path) {
            eprintln!("memd: not logging to a file: {e}");
        }
        let log = SharedLog(Arc::new(Mutex::new(RotatingFile::open(path, ROTATE_BYTES))));
        tracing_subscriber::fmt::layer()
            .fmt_fields(PlainFields(DefaultFields::new()))
            .with_writer(log)
            .with_ansi(false)
            .with_target(false)
    });
    let _ = tracing_subscriber::registry().with(filter).with(stderr).with(file).try_init();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotates_past_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.log");
        let mut f = RotatingFile::open(path.clone(), 100);
        f.write_all(&[b'a'; 80]).unwrap();
        f.write_all(&[b'b'; 80]).unwrap();
        assert_eq!(std::fs::read(dir.path().join("x.log.1")).unwrap().len(), 80);
        assert_eq!(std::fs::read(&path).unwrap(), vec![b'b'; 80]);
    }
}
