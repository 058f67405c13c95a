//! The one way memd writes a file into a folder it does not own (issue 50): a folder context file
//! in a project, `memd promote`'s edits, an export. The folder is reached from a root the user
//! chose (the project, the export folder, Claude Code's config folder) one component at a time,
//! each opened `O_NOFOLLOW|O_DIRECTORY` relative to the one before: a symbolic link anywhere below
//! the root is refused with its path named, so what is written lies inside the root whatever the
//! repository planted. A file is read only when it is a regular file (opened non-blocking and
//! checked with `fstat`: a FIFO cannot hang a pass), and written through a temporary file created
//! `O_CREAT|O_EXCL|O_NOFOLLOW`, mode 0600, under a random name, given its final mode, synced and
//! renamed over the target (which, when it exists, must be a regular file too).

use std::ffi::CString;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// Why a write into an untrusted place did not happen; the path is always named.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("refusing {path}: {why}")]
    Refused { path: PathBuf, why: &'static str },
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
}

/// The mode a written file gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Exactly this (an export: 0600).
    Exactly(u32),
    /// An existing file's mode and owner are kept; a new file gets this.
    KeepOr(u32),
}

/// The file that exists at a name: its mode, owner and size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Existing {
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
    pub len: u64,
}

/// A folder reached from a trusted root without following a link; files are named inside it.
#[derive(Debug)]
pub struct Place {
    dir: OwnedFd,
    path: PathBuf,
}

fn last_os_error(path: &Path) -> WriteError {
    WriteError::Io {
        path: path.to_path_buf(),
        source: std::io::Error::last_os_error(),
    }
}

fn refused(path: &Path, why: &'static str) -> WriteError {
    WriteError::Refused {
        path: path.to_path_buf(),
        why,
    }
}

fn c_name(path: &Path, name: &std::ffi::OsStr) -> Result<CString, WriteError> {
    CString::new(name.as_bytes()).map_err(|_| refused(path, "its name holds a NUL byte"))
}

/// One plain file name: not empty, no `/`, not `.` or `..`.
fn plain_name<'a>(dir: &Path, name: &'a str) -> Result<&'a str, WriteError> {
    let ok = !name.is_empty() && !name.contains('/') && name != "." && name != "..";
    if ok {
        Ok(name)
    } else {
        Err(refused(&dir.join(name), "not a plain file name"))
    }
}

fn stat_at(dir: &OwnedFd, name: &CString, path: &Path) -> Result<Option<libc::stat>, WriteError> {
    // SAFETY: a zeroed stat is a valid out-parameter; the name is NUL-terminated.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: the fd is open for the call, `name` is NUL-terminated and `st` is writable.
    let rc = unsafe { libc::fstatat(dir.as_raw_fd(), name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) };
    if rc == 0 {
        return Ok(Some(st));
    }
    match std::io::Error::last_os_error() {
        e if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        e => Err(WriteError::Io {
            path: path.to_path_buf(),
            source: e,
        }),
    }
}

fn kind_of(st: &libc::stat) -> u32 {
    st.st_mode & libc::S_IFMT
}

fn why_not_regular(st: &libc::stat) -> Option<&'static str> {
    match kind_of(st) {
        libc::S_IFREG => None,
        libc::S_IFLNK => Some("it is a symbolic link"),
        libc::S_IFDIR => Some("it is a folder"),
        libc::S_IFIFO => Some("it is a FIFO"),
        _ => Some("it is not a regular file"),
    }
}

fn open_at(dir: &OwnedFd, name: &CString, flags: i32, mode: u32, path: &Path) -> Result<OwnedFd, WriteError> {
    // SAFETY: the name is NUL-terminated; the returned descriptor is owned below.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags | libc::O_CLOEXEC, mode) };
    if fd < 0 {
        let e = std::io::Error::last_os_error();
        return Err(match e.raw_os_error() {
            Some(libc::ELOOP) => refused(path, "it is a symbolic link"),
            Some(libc::ENOTDIR) => refused(path, "it is not a folder"),
            _ => WriteError::Io {
                path: path.to_path_buf(),
                source: e,
            },
        });
    }
    // SAFETY: fd was just returned by openat and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// 64 random bits as hex, for a temporary name nobody can guess ahead.
fn random_suffix() -> String {
    let mut b = [0u8; 8];
    if std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut b)).is_err() {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        b = (t.as_nanos() as u64 ^ u64::from(std::process::id()) << 32).to_le_bytes();
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Makes folder `name` in `dir` (one made meanwhile by someone else is fine: it is opened next,
/// without following a link).
fn make_dir(dir: &OwnedFd, name: &CString, mode: u32, path: &Path) -> Result<(), WriteError> {
    // SAFETY: NUL-terminated name relative to an open directory.
    let rc = unsafe { libc::mkdirat(dir.as_raw_fd(), name.as_ptr(), mode as libc::mode_t) };
    if rc != 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::AlreadyExists {
        return Err(last_os_error(path));
    }
    Ok(())
}

impl Place {
    /// The folder `rel` (relative, plain components only) under `root`. A component that is a
    /// symbolic link, or not a folder, is refused; a missing one is created with `create`'s mode,
    /// or refused when `create` is None.
    pub fn open(root: &Path, rel: &Path, create: Option<u32>) -> Result<Place, WriteError> {
        let c_root = CString::new(root.as_os_str().as_bytes()).map_err(|_| refused(root, "its name holds a NUL byte"))?;
        // SAFETY: NUL-terminated path; the descriptor is owned below.
        let fd = unsafe { libc::open(c_root.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC) };
        if fd < 0 {
            return Err(last_os_error(root));
        }
        // SAFETY: fd was just returned by open.
        let mut dir = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut path = root.to_path_buf();
        for c in rel.components() {
            let name = match c {
                Component::Normal(n) => n,
                Component::CurDir => continue,
                _ => return Err(refused(&root.join(rel), "the path leaves its root")),
            };
            path.push(name);
            let cname = c_name(&path, name)?;
            match (stat_at(&dir, &cname, &path)?, create) {
                (Some(st), _) if kind_of(&st) == libc::S_IFLNK => return Err(refused(&path, "it is a symbolic link")),
                (Some(st), _) if kind_of(&st) != libc::S_IFDIR => return Err(refused(&path, "it is not a folder")),
                (None, Some(mode)) => make_dir(&dir, &cname, mode, &path)?,
                _ => {}
            }
            dir = open_at(&dir, &cname, libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW, 0, &path)?;
        }
        Ok(Place { dir, path })
    }

    /// Sets the folder's own mode (an export's folders: 0700).
    pub fn restrict(&self, mode: u32) -> Result<(), WriteError> {
        // SAFETY: fchmod on an open directory descriptor.
        if unsafe { libc::fchmod(self.dir.as_raw_fd(), mode as libc::mode_t) } != 0 {
            return Err(last_os_error(&self.path));
        }
        Ok(())
    }

    /// The folder's path as shown.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What is at `name`: None when nothing; refused when it is not a regular file.
    pub fn existing(&self, name: &str) -> Result<Option<Existing>, WriteError> {
        let path = self.path.join(plain_name(&self.path, name)?);
        let Some(st) = stat_at(&self.dir, &c_name(&path, name.as_ref())?, &path)? else {
            return Ok(None);
        };
        if let Some(why) = why_not_regular(&st) {
            return Err(refused(&path, why));
        }
        Ok(Some(Existing {
            mode: st.st_mode & 0o7777,
            uid: st.st_uid,
            gid: st.st_gid,
            len: st.st_size as u64,
        }))
    }

    /// The bytes of regular file `name` (None: no file); a file over `max` bytes is refused.
    pub fn read(&self, name: &str, max: u64) -> Result<Option<Vec<u8>>, WriteError> {
        let path = self.path.join(plain_name(&self.path, name)?);
        if self.existing(name)?.is_none() {
            return Ok(None);
        }
        let cname = c_name(&path, name.as_ref())?;
        let fd = open_at(&self.dir, &cname, libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK, 0, &path)?;
        let mut file = std::fs::File::from(fd);
        let meta = file.metadata().map_err(|source| WriteError::Io {
            path: path.clone(),
            source,
        })?;
        if !meta.file_type().is_file() {
            return Err(refused(&path, "it is not a regular file"));
        }
        if meta.len() > max {
            return Err(refused(&path, "it is larger than memd edits"));
        }
        let mut out = Vec::with_capacity(meta.len() as usize);
        Read::by_ref(&mut file)
            .take(max + 1)
            .read_to_end(&mut out)
            .map_err(|source| WriteError::Io {
                path: path.clone(),
                source,
            })?;
        if out.len() as u64 > max {
            return Err(refused(&path, "it is larger than memd edits"));
        }
        Ok(Some(out))
    }

    /// Writes `bytes` as `name`, atomically (see the module header).
    pub fn write(&self, name: &str, bytes: &[u8], mode: Mode) -> Result<(), WriteError> {
        let path = self.path.join(plain_name(&self.path, name)?);
        let existing = self.existing(name)?;
        let final_mode = match (mode, existing) {
            (Mode::Exactly(m), _) => m,
            (Mode::KeepOr(_), Some(e)) => e.mode,
            (Mode::KeepOr(m), None) => m,
        };
        let tmp_name = format!(".{name}.memd-{}", random_suffix());
        let tmp_path = self.path.join(&tmp_name);
        let c_tmp = c_name(&tmp_path, tmp_name.as_ref())?;
        let fd = open_at(
            &self.dir,
            &c_tmp,
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW,
            0o600,
            &tmp_path,
        )?;
        let result = (|| {
            let mut file = std::fs::File::from(fd);
            let io = |source| WriteError::Io {
                path: tmp_path.clone(),
                source,
            };
            file.write_all(bytes).map_err(io)?;
            if let (Mode::KeepOr(_), Some(e)) = (mode, existing) {
                // Only root can give a file away; for anyone else this is a no-op on their own file.
                let _ = std::os::unix::fs::fchown(&file, Some(e.uid), Some(e.gid));
            }
            use std::os::unix::fs::PermissionsExt;
            file.set_permissions(std::fs::Permissions::from_mode(final_mode)).map_err(io)?;
            file.sync_all().map_err(io)?;
            let c_final = c_name(&path, name.as_ref())?;
            // SAFETY: both names are NUL-terminated and relative to the same open directory.
            let rc = unsafe { libc::renameat(self.dir.as_raw_fd(), c_tmp.as_ptr(), self.dir.as_raw_fd(), c_final.as_ptr()) };
            if rc != 0 {
                return Err(last_os_error(&path));
            }
            // SAFETY: fsync on an open directory descriptor.
            unsafe { libc::fsync(self.dir.as_raw_fd()) };
            Ok(())
        })();
        if result.is_err() {
            // SAFETY: NUL-terminated name relative to an open directory.
            unsafe { libc::unlinkat(self.dir.as_raw_fd(), c_tmp.as_ptr(), 0) };
        }
        result
    }

    /// Removes regular file `name`; false when there was none.
    pub fn remove(&self, name: &str) -> Result<bool, WriteError> {
        let path = self.path.join(plain_name(&self.path, name)?);
        if self.existing(name)?.is_none() {
            return Ok(false);
        }
        let cname = c_name(&path, name.as_ref())?;
        // SAFETY: NUL-terminated name relative to an open directory.
        if unsafe { libc::unlinkat(self.dir.as_raw_fd(), cname.as_ptr(), 0) } != 0 {
            return Err(last_os_error(&path));
        }
        Ok(true)
    }
}

/// `path`'s folder relative to `root` and its file name, when `path` lies under `root` by plain
/// components (no `..`); None otherwise.
pub fn split_under<'a>(root: &Path, path: &'a Path) -> Option<(PathBuf, &'a str)> {
    let rel = path.strip_prefix(root).ok()?;
    if !rel.components().all(|c| matches!(c, Component::Normal(_))) {
        return None;
    }
    let name = rel.file_name()?.to_str()?;
    Some((rel.parent().map(Path::to_path_buf).unwrap_or_default(), name))
}

#[cfg(test)]
#[path = "write_tests.rs"]
mod tests;
