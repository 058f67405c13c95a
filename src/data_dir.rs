//! The data directory: layout, permissions, the worker lock, the PID file and the API token.
//!
//! `<data>` is 0700, the token 0600. The worker takes an exclusive `flock` on `<data>/memd.lock`
//! before touching anything else; a PID file found while the lock is free is stale and replaced.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum DataDirError {
    #[error("cannot prepare {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("memd is already running on {data} (pid {pid}); stop it first or use another MEMD_DATA_DIR")]
    AlreadyRunning { data: PathBuf, pid: String },
    #[error("token file {0} is malformed (expected 64 hex characters)")]
    BadToken(PathBuf),
    /// A path memd creates is a symbolic link, or belongs to another user: someone may be
    /// redirecting memd's writes. memd never follows it.
    #[error("{path} {why}; memd does not follow or use it (remove it and memd creates its own)")]
    Redirected { path: PathBuf, why: &'static str },
    #[error("token file {0} is readable by other users; delete it (memd writes a new one, mode 0600) and restart the worker")]
    ExposedToken(PathBuf),
}

/// `O_NOFOLLOW`: opening a path whose last component is a symbolic link fails (ELOOP).
pub const NO_FOLLOW: i32 = libc::O_NOFOLLOW;

/// Refuses `path` when it is a symbolic link or owned by another user (None: it does not exist).
pub fn refuse_redirect(path: &Path) -> Result<Option<fs::Metadata>, DataDirError> {
    use std::os::unix::fs::MetadataExt;
    let meta = match fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(path)(e)),
    };
    let why = if meta.file_type().is_symlink() {
        "is a symbolic link"
    // SAFETY: geteuid has no preconditions.
    } else if meta.uid() != unsafe { libc::geteuid() } {
        "belongs to another user"
    } else {
        return Ok(Some(meta));
    };
    Err(DataDirError::Redirected {
        path: path.to_path_buf(),
        why,
    })
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> DataDirError + '_ {
    move |source| DataDirError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Paths inside `<data>`.
#[derive(Debug, Clone)]
pub struct DataDir {
    pub root: PathBuf,
}

impl DataDir {
    pub fn new(root: PathBuf) -> Self {
        Self { root }
    }
    pub fn db(&self) -> PathBuf {
        self.root.join("memd.db")
    }
    pub fn token(&self) -> PathBuf {
        self.root.join("token")
    }
    pub fn pid_file(&self) -> PathBuf {
        self.root.join("memd.pid")
    }
    pub fn lock_file(&self) -> PathBuf {
        self.root.join("memd.lock")
    }
    pub fn logs(&self) -> PathBuf {
        self.root.join("logs")
    }
    pub fn spool(&self) -> PathBuf {
        self.root.join("spool")
    }
    pub fn backups(&self) -> PathBuf {
        self.root.join("backups")
    }

    /// Creates `<data>` (0700) if needed.
    pub fn ensure_root(&self) -> Result<(), DataDirError> {
        fs::create_dir_all(&self.root).map_err(io(&self.root))?;
        fs::set_permissions(&self.root, fs::Permissions::from_mode(0o700)).map_err(io(&self.root))
    }

    /// Creates a subdirectory with mode 0700 (and the data dir itself, 0700, when it is missing:
    /// the first process to touch it may be a hook writing its log or spool).
    pub fn ensure_subdir(&self, dir: &Path) -> Result<(), DataDirError> {
        if !self.root.is_dir() {
            self.ensure_root()?;
        }
        refuse_redirect(dir)?;
        fs::create_dir_all(dir).map_err(io(dir))?;
        refuse_redirect(dir)?;
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700)).map_err(io(dir))
    }

    /// `dir` as a private directory of ours: one `lstat` when it is already one (the hook's path),
    /// else [`DataDir::ensure_subdir`]. A symbolic link or another user's directory is refused.
    pub fn private_dir(&self, dir: &Path) -> Result<(), DataDirError> {
        match refuse_redirect(dir)? {
            Some(meta) if meta.is_dir() => Ok(()),
            _ => self.ensure_subdir(dir),
        }
    }

    /// Takes the exclusive worker lock; fails naming the running pid when another worker holds it.
    pub fn lock(&self) -> Result<WorkerLock, DataDirError> {
        let path = self.lock_file();
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .custom_flags(NO_FOLLOW)
            .open(&path)
            .map_err(io(&path))?;
        // SAFETY: flock on a valid, owned file descriptor.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc != 0 {
            let pid = read_pid_file(&self.pid_file())
                .map(|p| p.pid.to_string())
                .unwrap_or_else(|| "unknown".into());
            return Err(DataDirError::AlreadyRunning {
                data: self.root.clone(),
                pid,
            });
        }
        Ok(WorkerLock { _file: file })
    }

    /// Writes the PID file (0600): `{"pid":…,"port":…,"started_at_epoch":…}`. Returns whether a
    /// stale file was replaced.
    pub fn write_pid(&self, port: u16, started_at_epoch: i64) -> Result<bool, DataDirError> {
        let path = self.pid_file();
        let stale = path.exists();
        let body = serde_json::json!({"pid": std::process::id(), "port": port, "started_at_epoch": started_at_epoch});
        write_private(&path, body.to_string().as_bytes())?;
        Ok(stale)
    }

    pub fn remove_pid(&self) {
        let _ = fs::remove_file(self.pid_file());
    }

    /// Reads the token, creating it (32 random bytes as 64 hex chars, 0600) when absent.
    pub fn ensure_token(&self) -> Result<String, DataDirError> {
        let path = self.token();
        if let Some(meta) = refuse_redirect(&path)?
            && meta.permissions().mode() & 0o077 != 0
        {
            return Err(DataDirError::ExposedToken(path));
        }
        match fs::read_to_string(&path) {
            Ok(t) => {
                let t = t.trim().to_string();
                if t.len() == 64 && t.bytes().all(|b| b.is_ascii_hexdigit()) {
                    Ok(t)
                } else {
                    Err(DataDirError::BadToken(path))
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let mut bytes = [0u8; 32];
                File::open("/dev/urandom")
                    .and_then(|mut f| f.read_exact(&mut bytes))
                    .map_err(io(&path))?;
                let token = hex(&bytes);
                write_private(&path, token.as_bytes())?;
                Ok(token)
            }
            Err(e) => Err(io(&path)(e)),
        }
    }
}

/// Held for the worker's lifetime; the OS releases the lock when the process exits (also on kill -9).
pub struct WorkerLock {
    _file: File,
}

#[derive(Debug, Clone, serde::Deserialize)]
pub struct PidFile {
    pub pid: u32,
    #[serde(default)]
    pub port: u16,
}

pub fn read_pid_file(path: &Path) -> Option<PidFile> {
    serde_json::from_str(&fs::read_to_string(path).ok()?).ok()
}

/// Writes a file readable by the owner only, atomically (temp file + rename).
pub fn write_private(path: &Path, bytes: &[u8]) -> Result<(), DataDirError> {
    let tmp = path.with_extension("tmp");
    refuse_redirect(path)?;
    // A fresh temp file: never one someone else prepared, never through a link.
    let _ = fs::remove_file(&tmp);
    let mut f = OpenOptions::new()
        .create_new(true)
        .write(true)
        .mode(0o600)
        .custom_flags(NO_FOLLOW)
        .open(&tmp)
        .map_err(io(&tmp))?;
    f.write_all(bytes).and_then(|_| f.sync_all()).map_err(io(&tmp))?;
    fs::rename(&tmp, path).map_err(io(path))
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_is_created_once_with_mode_0600() {
        let dir = tempfile::tempdir().unwrap();
        let d = DataDir::new(dir.path().join("data"));
        d.ensure_root().unwrap();
        let t1 = d.ensure_token().unwrap();
        let t2 = d.ensure_token().unwrap();
        assert_eq!(t1, t2);
        assert_eq!(t1.len(), 64);
        let mode = fs::metadata(d.token()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(fs::metadata(&d.root).unwrap().permissions().mode() & 0o777, 0o700);
    }

    #[test]
    fn second_lock_fails_naming_the_pid() {
        let dir = tempfile::tempdir().unwrap();
        let d = DataDir::new(dir.path().to_path_buf());
        let _held = d.lock().unwrap();
        d.write_pid(1234, 0).unwrap();
        match d.lock() {
            Err(DataDirError::AlreadyRunning { pid, .. }) => assert_eq!(pid, std::process::id().to_string()),
            other => panic!("expected AlreadyRunning, got {:?}", other.err()),
        }
    }
}
