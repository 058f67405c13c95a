//! A blocking HTTP/1.1 client for loopback: one request per connection (`Connection: close`),
//! bounded by a deadline on connect, write and read. Used by the hook, `memd status` and tests.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error("connect to {addr}: {source}")]
    Connect { addr: SocketAddr, source: std::io::Error },
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
    #[error("timed out")]
    Timeout,
    #[error("malformed response: {0}")]
    Malformed(&'static str),
}

#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
    pub fn json(&self) -> Option<serde_json::Value> {
        serde_json::from_slice(&self.body).ok()
    }
}

/// A request to send; `headers` are added verbatim after Host / Content-Length.
#[derive(Debug, Clone, Default)]
pub struct Request<'a> {
    pub method: &'a str,
    pub path: &'a str,
    pub host: Option<&'a str>,
    pub token: Option<&'a str>,
    pub headers: Vec<(&'a str, String)>,
    pub body: Option<&'a [u8]>,
}

pub fn send(addr: SocketAddr, req: &Request<'_>, timeout: Duration) -> Result<Response, HttpError> {
    let deadline = Instant::now() + timeout;
    let stream = TcpStream::connect_timeout(&addr, timeout).map_err(|source| HttpError::Connect { addr, source })?;
    let _ = stream.set_nodelay(true);
    let left = || {
        deadline
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
            .ok_or(HttpError::Timeout)
    };
    stream.set_write_timeout(Some(left()?))?;
    let mut head = format!(
        "{} {} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n",
        req.method,
        req.path,
        req.host.map_or_else(|| format!("127.0.0.1:{}", addr.port()), str::to_string)
    );
    if let Some(t) = req.token {
        head.push_str(&format!("Authorization: Bearer {t}\r\n"));
    }
    for (k, v) in &req.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    if let Some(b) = req.body {
        let has_type = req.headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("content-type"));
        if !has_type {
            head.push_str("Content-Type: application/json\r\n");
        }
        head.push_str(&format!("Content-Length: {}\r\n", b.len()));
    }
    head.push_str("\r\n");
    let mut s = stream;
    // A server may answer early (413) and close while the body is still being written: keep the
    // write error and read the answer anyway.
    let written = s
        .write_all(head.as_bytes())
        .and_then(|_| req.body.map_or(Ok(()), |b| s.write_all(b)));
    let mut raw = Vec::with_capacity(1024);
    let mut buf = [0u8; 16 * 1024];
    loop {
        s.set_read_timeout(Some(left()?))?;
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => return Err(HttpError::Timeout),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset && !raw.is_empty() => break,
            Err(e) => return Err(written.err().unwrap_or(e).into()),
        }
    }
    match (parse(&raw), written) {
        (Ok(r), _) => Ok(r),
        (Err(_), Err(e)) => Err(e.into()),
        (Err(e), Ok(())) => Err(e),
    }
}

fn parse(raw: &[u8]) -> Result<Response, HttpError> {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or(HttpError::Malformed("no header end"))?;
    let head = std::str::from_utf8(&raw[..end]).map_err(|_| HttpError::Malformed("header not utf-8"))?;
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .ok_or(HttpError::Malformed("status line"))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let rest = &raw[end + 4..];
    let chunked = headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.eq_ignore_ascii_case("chunked"));
    let body = if chunked { dechunk(rest)? } else { rest.to_vec() };
    Ok(Response { status, headers, body })
}

fn dechunk(mut rest: &[u8]) -> Result<Vec<u8>, HttpError> {
    let mut out = Vec::new();
    loop {
        let eol = rest
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or(HttpError::Malformed("chunk size"))?;
        let size_text = std::str::from_utf8(&rest[..eol]).map_err(|_| HttpError::Malformed("chunk size"))?;
        let size =
            usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16).map_err(|_| HttpError::Malformed("chunk size"))?;
        rest = &rest[eol + 2..];
        if size == 0 {
            return Ok(out);
        }
        let chunk = rest.get(..size).ok_or(HttpError::Malformed("short chunk"))?;
        out.extend_from_slice(chunk);
        rest = rest.get(size + 2..).unwrap_or(&[]);
    }
}

/// Percent-encodes a query-string value (RFC 3986 unreserved characters kept).
pub fn query_value(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_query_values() {
        assert_eq!(query_value("a b,c/é"), "a%20b%2Cc%2F%C3%A9");
    }

    #[test]
    fn parses_plain_and_chunked() {
        let r = parse(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok").unwrap();
        assert_eq!((r.status, r.text()), (200, "ok".into()));
        let r = parse(b"HTTP/1.1 404 Not Found\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n").unwrap();
        assert_eq!((r.status, r.text()), (404, "abcde".into()));
        assert!(parse(b"garbage").is_err());
    }
}
