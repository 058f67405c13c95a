//! Socket activation: the manager bound the listening socket and passed it as fd 3 (up to
//! `3 + LISTEN_FDS - 1`), with `LISTEN_PID` naming this process. memd takes the fd named `memd`
//! in `LISTEN_FDNAMES` (systemd's `FileDescriptorName=`), else the first.

use std::collections::HashMap;

/// The first fd a manager passes (`SD_LISTEN_FDS_START`).
pub const FIRST_FD: i32 = 3;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Passed {
    pub fd: i32,
    pub count: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum ActivationError {
    #[error("passed fd {0} is not a listening TCP socket: {1}")]
    NotAListener(i32, std::io::Error),
}

impl Passed {
    /// None unless `LISTEN_PID` is this process and `LISTEN_FDS` ≥ 1.
    pub fn from_env(env: &HashMap<String, String>, pid: u32) -> Option<Self> {
        let ours = env.get("LISTEN_PID").and_then(|v| v.trim().parse::<u32>().ok()) == Some(pid);
        let count = env.get("LISTEN_FDS").and_then(|v| v.trim().parse::<usize>().ok()).unwrap_or(0);
        if !ours || count == 0 {
            return None;
        }
        let index = env
            .get("LISTEN_FDNAMES")
            .and_then(|names| names.split(':').position(|n| n == "memd"))
            .filter(|&i| i < count)
            .unwrap_or(0);
        Some(Self {
            fd: FIRST_FD + index as i32,
            count,
        })
    }

    /// Takes the passed fd as a std listener: close-on-exec (an observer subprocess must not
    /// inherit it), non-blocking for tokio.
    pub fn take(&self) -> Result<std::net::TcpListener, ActivationError> {
        use std::os::fd::FromRawFd;
        // SAFETY: the manager passed this fd to us alone (LISTEN_PID is ours); fcntl on it is
        // harmless whatever it is, and ownership moves into the listener exactly once.
        let listener = unsafe {
            libc::fcntl(self.fd, libc::F_SETFD, libc::FD_CLOEXEC);
            std::net::TcpListener::from_raw_fd(self.fd)
        };
        listener
            .local_addr()
            .and_then(|_| listener.set_nonblocking(true))
            .map_err(|e| ActivationError::NotAListener(self.fd, e))?;
        Ok(listener)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::env_of as env;

    #[test]
    fn fds_are_ours_only_with_our_pid_and_the_named_one_wins() {
        assert_eq!(Passed::from_env(&env(&[("LISTEN_FDS", "1"), ("LISTEN_PID", "7")]), 8), None);
        assert_eq!(Passed::from_env(&env(&[("LISTEN_FDS", "0"), ("LISTEN_PID", "7")]), 7), None);
        assert_eq!(
            Passed::from_env(&env(&[("LISTEN_FDS", "1"), ("LISTEN_PID", "7")]), 7),
            Some(Passed { fd: 3, count: 1 })
        );
        let named = env(&[("LISTEN_FDS", "2"), ("LISTEN_PID", "7"), ("LISTEN_FDNAMES", "other:memd")]);
        assert_eq!(Passed::from_env(&named, 7), Some(Passed { fd: 4, count: 2 }));
    }
}
