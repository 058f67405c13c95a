//! The socket under a team connection, watched so that a password never crosses the network in
//! clear (issue 51). With `sslmode=prefer` a server — or anyone in the middle — can refuse TLS and
//! then ask for the password as clear text (or as an MD5 digest, which is as good as the password
//! to someone who records it). [`Guarded`] reads what the server sends on a connection that did
//! not become TLS and fails the connection on such a request before the client can answer it;
//! SCRAM, which never reveals the password, and trust are fine. Once the server has said the
//! client is authenticated, or TLS was agreed, bytes pass untouched.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The frontend's SSLRequest: length 8, code 80877103.
const SSL_REQUEST: [u8; 8] = [0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f];

/// Where the connection is in its start.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Phase {
    /// Nothing written yet.
    Start,
    /// SSLRequest sent: the server's next byte is `S` or `N`.
    SslReply,
    /// No TLS: the server's messages are read until it accepts or asks for a password.
    Plain(Vec<u8>),
    /// TLS agreed, or authentication done: nothing more to watch.
    Done,
}

/// What a server's plain-text authentication request means here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Not decided yet (more bytes needed).
    More,
    /// Authenticated, or a request that does not reveal the password.
    Fine,
    /// A clear-text (3) or MD5 (5) password request on a connection without TLS.
    Refuse,
}

/// Reads the server's messages in `buf` (bytes since the last whole message): the first
/// authentication request decides.
fn judge(buf: &[u8]) -> (Verdict, usize) {
    let mut at = 0;
    while buf.len() >= at + 5 {
        let kind = buf[at];
        let len = u32::from_be_bytes([buf[at + 1], buf[at + 2], buf[at + 3], buf[at + 4]]) as usize;
        if kind == b'R' {
            if buf.len() < at + 9 {
                return (Verdict::More, at);
            }
            let code = u32::from_be_bytes([buf[at + 5], buf[at + 6], buf[at + 7], buf[at + 8]]);
            return match code {
                3 | 5 => (Verdict::Refuse, at),
                0 => (Verdict::Fine, at),
                // SASL and its continuations: keep watching until AuthenticationOk.
                _ => {
                    if buf.len() < at + 1 + len {
                        return (Verdict::More, at);
                    }
                    at += 1 + len;
                    continue;
                }
            };
        }
        if buf.len() < at + 1 + len {
            return (Verdict::More, at);
        }
        at += 1 + len;
    }
    (Verdict::More, at)
}

/// A socket whose start is watched (see the module header).
pub struct Guarded<S> {
    inner: S,
    phase: Phase,
}

impl<S> Guarded<S> {
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            phase: Phase::Start,
        }
    }
}

fn refused() -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        "the team server asked for the password in clear text over a connection without TLS; memd does not send it (use a server with TLS: sslmode=require)",
    )
}

impl<S: AsyncRead + Unpin> AsyncRead for Guarded<S> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {}
            other => return other,
        }
        let new = buf.filled()[before..].to_vec();
        let mut rest: &[u8] = &new;
        if this.phase == Phase::SslReply && !rest.is_empty() {
            this.phase = if rest[0] == b'S' { Phase::Done } else { Phase::Plain(Vec::new()) };
            rest = &rest[1..];
        }
        if let Phase::Plain(pending) = &mut this.phase {
            pending.extend_from_slice(rest);
            match judge(pending) {
                (Verdict::Refuse, _) => return Poll::Ready(Err(refused())),
                (Verdict::Fine, _) => this.phase = Phase::Done,
                (Verdict::More, used) => {
                    pending.drain(..used);
                }
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Guarded<S> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        if self.phase == Phase::Start {
            self.phase = if data.starts_with(&SSL_REQUEST) {
                Phase::SslReply
            } else {
                Phase::Plain(Vec::new())
            };
        }
        Pin::new(&mut self.inner).poll_write(cx, data)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn auth(code: u32) -> Vec<u8> {
        let mut m = vec![b'R', 0, 0, 0, 8];
        m.extend_from_slice(&code.to_be_bytes());
        m
    }

    #[test]
    fn clear_text_and_md5_requests_are_refused_scram_and_ok_are_not() {
        assert_eq!(judge(&auth(3)).0, Verdict::Refuse);
        assert_eq!(judge(&auth(5)).0, Verdict::Refuse);
        assert_eq!(judge(&auth(0)).0, Verdict::Fine);
        assert_eq!(judge(&auth(3)[..6]).0, Verdict::More, "split across reads");
        let mut sasl = vec![b'R', 0, 0, 0, 23, 0, 0, 0, 10];
        sasl.extend_from_slice(b"SCRAM-SHA-256\0\0");
        assert_eq!(judge(&sasl).0, Verdict::More, "SCRAM goes on");
        sasl.extend(auth(0));
        assert_eq!(judge(&sasl).0, Verdict::Fine);
    }
}
