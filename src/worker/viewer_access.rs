//! Browser access to the viewer (docs/spec/viewer.md §2): one-time codes, exchanged once for a
//! session cookie, and the CSRF token of each session. The bearer token never reaches a browser:
//! `memd open` asks the worker (with the token) for a code, opens `/viewer/login?code=…`, and the
//! worker answers with an `HttpOnly; SameSite=Strict` cookie and a redirect to `/`.
//!
//! Everything lives in memory: a restarted worker forgets its sessions (run `memd open` again).
//! Bounded: at most [`MAX_CODES`] unspent codes and [`MAX_SESSIONS`] sessions, oldest evicted.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::pipeline::hash::sha256_hex;

/// How long a one-time code can be exchanged.
pub const CODE_TTL_MS: i64 = 5 * 60 * 1000;
/// How long a viewer session lasts (absolute, from the exchange).
pub const SESSION_TTL_MS: i64 = 12 * 3600 * 1000;
pub const MAX_CODES: usize = 16;
pub const MAX_SESSIONS: usize = 32;
/// The cookie's name.
pub const COOKIE: &str = "memd_viewer";

/// A browser session: what its cookie opens, and the token its mutating requests must echo.
#[derive(Clone, PartialEq, Eq)]
pub struct ViewerSession {
    pub csrf: String,
    /// The Host header the code was exchanged under: the cookie is only honoured there.
    pub host: String,
    pub expires_ms: i64,
}

impl std::fmt::Debug for ViewerSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ViewerSession")
            .field("host", &self.host)
            .field("expires_ms", &self.expires_ms)
            .finish_non_exhaustive()
    }
}

/// A code just exchanged: the cookie value to set and its session.
pub struct Exchanged {
    pub cookie: String,
    pub session: ViewerSession,
}

#[derive(Default)]
struct Tables {
    /// sha256(code) → expiry.
    codes: HashMap<String, i64>,
    /// sha256(cookie) → session.
    sessions: HashMap<String, ViewerSession>,
}

/// Codes and sessions (kept as hashes, so a memory dump or a `Debug` shows no usable secret).
#[derive(Default)]
pub struct ViewerAccess {
    tables: Mutex<Tables>,
}

fn secret() -> String {
    crate::store::random_id().replace('-', "")
}

fn evict_oldest<V>(map: &mut HashMap<String, V>, max: usize, expiry: impl Fn(&V) -> i64) {
    while map.len() >= max {
        let Some(oldest) = map.iter().min_by_key(|(_, v)| expiry(v)).map(|(k, _)| k.clone()) else {
            return;
        };
        map.remove(&oldest);
    }
}

impl ViewerAccess {
    fn tables(&self) -> std::sync::MutexGuard<'_, Tables> {
        self.tables.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A new one-time code, valid for [`CODE_TTL_MS`].
    pub fn issue_code(&self, now_ms: i64) -> String {
        let code = secret();
        let mut t = self.tables();
        t.codes.retain(|_, exp| *exp > now_ms);
        evict_oldest(&mut t.codes, MAX_CODES, |e| *e);
        t.codes.insert(sha256_hex(code.as_bytes()), now_ms + CODE_TTL_MS);
        code
    }

    /// Spends `code` (whatever the outcome, it cannot be used again) and opens a session bound to `host`.
    pub fn exchange(&self, code: &str, host: &str, now_ms: i64) -> Option<Exchanged> {
        let mut t = self.tables();
        let expires = t.codes.remove(&sha256_hex(code.as_bytes()))?;
        if expires <= now_ms {
            return None;
        }
        t.sessions.retain(|_, s| s.expires_ms > now_ms);
        evict_oldest(&mut t.sessions, MAX_SESSIONS, |s| s.expires_ms);
        let cookie = secret();
        let session = ViewerSession {
            csrf: secret(),
            host: host.to_string(),
            expires_ms: now_ms + SESSION_TTL_MS,
        };
        t.sessions.insert(sha256_hex(cookie.as_bytes()), session.clone());
        Some(Exchanged { cookie, session })
    }

    /// The live session of a cookie presented under `host`.
    pub fn session(&self, cookie: &str, host: &str, now_ms: i64) -> Option<ViewerSession> {
        let t = self.tables();
        let s = t.sessions.get(&sha256_hex(cookie.as_bytes()))?;
        (s.expires_ms > now_ms && s.host.eq_ignore_ascii_case(host)).then(|| s.clone())
    }

    /// Ends the session of a cookie (logout).
    pub fn end(&self, cookie: &str) {
        self.tables().sessions.remove(&sha256_hex(cookie.as_bytes()));
    }
}

/// The value of cookie `name` in a `Cookie` header.
pub fn cookie_value<'a>(header: &'a str, name: &str) -> Option<&'a str> {
    header.split(';').find_map(|kv| {
        let (k, v) = kv.trim().split_once('=')?;
        (k == name).then_some(v.trim())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOST: &str = "127.0.0.1:4000";

    #[test]
    fn a_code_opens_one_session_once() {
        let a = ViewerAccess::default();
        let code = a.issue_code(0);
        let got = a.exchange(&code, HOST, 10).expect("first exchange");
        assert!(a.exchange(&code, HOST, 11).is_none(), "a code is spent by its first use");
        let s = a.session(&got.cookie, HOST, 20).expect("session");
        assert_eq!(s.csrf, got.session.csrf);
        assert_ne!(got.cookie, got.session.csrf);
    }

    #[test]
    fn expired_codes_and_sessions_and_other_hosts_open_nothing() {
        let a = ViewerAccess::default();
        let code = a.issue_code(0);
        assert!(a.exchange(&code, HOST, CODE_TTL_MS).is_none());
        let code = a.issue_code(0);
        let got = a.exchange(&code, HOST, 1).unwrap();
        assert!(
            a.session(&got.cookie, "localhost:4000", 2).is_none(),
            "bound to the host it was issued on"
        );
        assert!(a.session(&got.cookie, HOST, 1 + SESSION_TTL_MS).is_none());
        assert!(a.session("forged", HOST, 2).is_none());
        a.end(&got.cookie);
        assert!(a.session(&got.cookie, HOST, 2).is_none());
    }

    #[test]
    fn tables_stay_bounded() {
        let a = ViewerAccess::default();
        let codes: Vec<String> = (0..MAX_CODES as i64 + 5).map(|i| a.issue_code(i)).collect();
        assert!(a.exchange(&codes[0], HOST, 100).is_none(), "the oldest code was evicted");
        let last = codes.last().unwrap();
        assert!(a.exchange(last, HOST, 100).is_some());
        for i in 0..MAX_SESSIONS + 5 {
            let c = a.issue_code(200 + i as i64);
            a.exchange(&c, HOST, 200 + i as i64).unwrap();
        }
        assert!(a.tables().sessions.len() <= MAX_SESSIONS);
        assert!(a.tables().codes.len() <= MAX_CODES);
    }

    #[test]
    fn cookies_are_read_by_name() {
        assert_eq!(cookie_value("a=1; memd_viewer=xyz; b=2", COOKIE), Some("xyz"));
        assert_eq!(cookie_value("memd_viewerx=1", COOKIE), None);
        assert_eq!(cookie_value("", COOKIE), None);
    }
}
