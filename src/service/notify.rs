//! The sd_notify protocol without libsystemd: one datagram per message to the unix socket named by
//! `NOTIFY_SOCKET` (a path, or `@name` for an abstract socket). Sends never block and never fail
//! the worker: a manager that went away only costs a debug line.

use std::os::unix::net::UnixDatagram;

#[derive(Debug, thiserror::Error)]
pub enum NotifyError {
    #[error("cannot open a datagram socket for NOTIFY_SOCKET: {0}")]
    Socket(std::io::Error),
    #[error("NOTIFY_SOCKET names no usable address: {0}")]
    Address(String),
}

pub struct Notifier {
    sock: UnixDatagram,
    addr: std::os::unix::net::SocketAddr,
}

impl Notifier {
    pub fn new(target: &str) -> Result<Self, NotifyError> {
        let addr = address(target)?;
        let sock = UnixDatagram::unbound().map_err(NotifyError::Socket)?;
        sock.set_nonblocking(true).map_err(NotifyError::Socket)?;
        Ok(Self { sock, addr })
    }

    /// Sends `msg` (one or more `KEY=value` lines).
    pub fn send(&self, msg: &str) {
        if let Err(e) = self.sock.send_to_addr(msg.as_bytes(), &self.addr) {
            tracing::debug!(error = %e, "sd_notify send failed");
        }
    }
}

fn address(target: &str) -> Result<std::os::unix::net::SocketAddr, NotifyError> {
    if let Some(name) = target.strip_prefix('@') {
        #[cfg(target_os = "linux")]
        {
            use std::os::linux::net::SocketAddrExt;
            return std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).map_err(|e| NotifyError::Address(e.to_string()));
        }
        #[cfg(not(target_os = "linux"))]
        return Err(NotifyError::Address(format!("abstract socket @{name} needs Linux")));
    }
    if !target.starts_with('/') {
        return Err(NotifyError::Address("not an absolute path or @name".into()));
    }
    std::os::unix::net::SocketAddr::from_pathname(target).map_err(|e| NotifyError::Address(e.to_string()))
}

/// The `STATUS=` line memd sends: what a `systemctl status` reader wants to see.
pub fn status_line(sessions: usize, queued: i64) -> String {
    format!("STATUS=serving; {sessions} live sessions, {queued} events queued")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datagrams_reach_a_path_and_an_abstract_socket() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notify.sock");
        let rx = UnixDatagram::bind(&path).unwrap();
        Notifier::new(path.to_str().unwrap()).unwrap().send("READY=1\nSTATUS=x");
        let mut buf = [0u8; 64];
        let n = rx.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"READY=1\nSTATUS=x");

        use std::os::linux::net::SocketAddrExt;
        let name = format!("memd-test-{}", std::process::id());
        let rx = UnixDatagram::bind_addr(&std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap()).unwrap();
        Notifier::new(&format!("@{name}")).unwrap().send("WATCHDOG=1");
        let n = rx.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"WATCHDOG=1");
    }

    #[test]
    fn a_relative_target_is_refused() {
        assert!(matches!(Notifier::new("notify.sock"), Err(NotifyError::Address(_))));
    }
}
