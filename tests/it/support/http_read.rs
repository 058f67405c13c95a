//! The request reader the fake provider servers share: one HTTP/1.1 request off a keep-alive
//! connection (request line, headers up to the blank line, a `Content-Length` body).
#![allow(dead_code)]

use std::io::BufRead;

/// `(method, path, body)` of the next request, or None when the connection ends.
pub fn next_request(reader: &mut impl BufRead) -> Option<(String, String, Vec<u8>)> {
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let (method, path) = (parts.next().unwrap_or("").to_string(), parts.next().unwrap_or("").to_string());
    let mut length = 0usize;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 {
            return None;
        }
        if h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':')
            && k.trim().eq_ignore_ascii_case("content-length")
        {
            length = v.trim().parse().unwrap_or(0);
        }
    }
    let mut raw = vec![0u8; length];
    reader.read_exact(&mut raw).ok()?;
    Some((method, path, raw))
}
