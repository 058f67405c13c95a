//! Context detectors: credentials with no fixed prefix, found by what surrounds them — an
//! assignment whose key names a secret, URL userinfo, HTTP auth headers and cookies, `curl -u`,
//! CLI flags, a high-entropy token after a secret keyword, and the body lines of a PEM key.
//! Only the value is replaced, so a memory still says what was configured:
//! `DB_PASSWORD=<redacted type='assignment'/>`.
//!
//! Each detector names keywords (lowercase ASCII); it runs only on text that contains one, which
//! keeps ordinary tool output fast. Each match goes through a filter that rejects what is not a
//! secret: placeholders (`$VAR`, `${VAR}`, `<your-key>`, `***`), code (`get_token()`,
//! `config.token`), types (`password: str`), file paths, and plain identifiers in code context.

use regex::{Captures, Regex};

/// The secret-naming words of an assignment key, as a regex alternation (case-insensitive).
pub const SECRET_WORDS: &str = r"password|passwd|passphrase|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|client[_-]?secret|credentials?|auth|database[_-]?url|db[_-]?url|dsn|connection[_-]?string";

/// A whole key (JSON object key, YAML/TOML key) that names a secret: the word, optionally with
/// a prefix and a `_`/`-`/`.`-separated suffix (`DB_PASSWORD`, `clientSecret`, `auth_token`,
/// `password.old`), never a longer word (`author`, `tokenizer`, `tokens`).
pub fn secret_key_regex() -> String {
    format!(r"(?i)^[A-Za-z0-9_.-]*?(?:{SECRET_WORDS})(?:[_.-][A-Za-z0-9_.-]*)?$")
}

/// Values that say "no secret here".
const NOT_SECRETS: &[&str] = &[
    "true",
    "false",
    "null",
    "none",
    "nil",
    "undefined",
    "string",
    "str",
    "int",
    "bool",
    "boolean",
    "number",
    "any",
    "bytes",
    "optional",
    "required",
    "text",
    "varchar",
    "secret",
    "password",
    "token",
    "redacted",
    "hidden",
    "xxx",
    "****",
    "...",
    "env",
    "default",
    "bearer",
    "basic",
    "digest",
    "negotiate",
    "apikey",
];

/// A match's value is a placeholder, a reference or a type, not a credential.
pub fn is_placeholder(v: &str) -> bool {
    let t = v.trim().trim_matches(|c| c == '"' || c == '\'' || c == '`');
    let lower = t.to_ascii_lowercase();
    t.is_empty()
        || t.starts_with('$')
        || t.starts_with('%')
        || t.starts_with("{{")
        || (t.starts_with('<') && t.ends_with('>'))
        || t.starts_with("<redacted")
        || t.chars()
            .all(|c| c == '*' || c == 'x' || c == 'X' || c == '.' || c == '-' || c == '#')
        || lower.starts_with("your")
        || lower.starts_with("my-") && lower.ends_with("-here")
        || NOT_SECRETS.contains(&lower.as_str())
}

/// A path, not a secret (`--token-file=/run/x`, `credentials: ~/.aws/credentials`).
fn is_path(v: &str) -> bool {
    v.starts_with('/') || v.starts_with("./") || v.starts_with("../") || v.starts_with("~/")
}

/// Code, not a literal: a call, an index, member access on an identifier, an operator.
fn is_code(v: &str) -> bool {
    v.contains('(')
        || v.contains('[')
        || v.contains('{')
        || v.starts_with("os.")
        || v.starts_with("process.")
        || v.contains("->")
        || v.contains("::")
        || (v.contains('.')
            && v.split('.').all(|p| {
                !p.is_empty()
                    && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    && p.chars().next().is_some_and(|c| !c.is_ascii_digit())
            }))
}

/// A plain identifier (`password_input`, `newToken`): in code context that is a variable.
fn is_identifier(v: &str) -> bool {
    let mut chars = v.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !v.chars().any(|c| c.is_ascii_digit())
}

/// Shannon entropy in bits per character.
pub fn entropy(s: &str) -> f64 {
    let mut counts = [0u32; 256];
    for b in s.bytes() {
        counts[b as usize] += 1;
    }
    let n = s.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / n;
            -p * p.log2()
        })
        .sum()
}

/// The entropy a token after a secret keyword must reach. Measured (docs/privacy.md): random
/// tokens of 24 chars have ~4.5 bits/char; of the 6,037 distinct ≥ 16-char two-class tokens in
/// the recorded transcripts 5,099 reach 3.6 — entropy alone separates nothing there, the keyword
/// within 24 chars does. The threshold only drops repetitive values (`aaaa…`, `abcabc…`).
pub const ENTROPY_MIN: f64 = 3.6;

/// Picks the secret's range from a match, or None to let it pass.
pub type Pick = fn(&Captures<'_>) -> Option<(usize, usize)>;

pub struct ContextRule {
    pub name: &'static str,
    pub keywords: &'static [&'static str],
    pub pattern: String,
    pub how: How,
}

/// How a rule finds the secret in a match.
#[derive(Clone, Copy)]
pub enum How {
    /// From the match's capture groups.
    Pick(Pick),
    /// By hand, from a capture-free match and the haystack (cheaper on many near-misses).
    Scan(Scan),
}

/// Picks the secret's range from a match of the key part and the whole haystack.
pub type Scan = fn(&str, regex::Match<'_>) -> Scanned;

/// What a [`Scan`] found after a match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scanned {
    /// The secret's range.
    Secret(usize, usize),
    /// Not a secret; search on after the match.
    Pass,
    /// Not a secret, and no match before this offset can be one either (a run too long to be a
    /// value): search on from here, which keeps a megabyte of near-misses linear.
    PassTo(usize),
}

impl From<Option<(usize, usize)>> for Scanned {
    fn from(o: Option<(usize, usize)>) -> Self {
        o.map_or(Scanned::Pass, |(a, b)| Scanned::Secret(a, b))
    }
}

/// The value after an assignment's separator: up to 3 blanks, then a quoted string (its
/// inside) or a bare word up to whitespace or `"'`,;`. Returns (start, end, quoted).
fn assignment_value(hay: &str, from: usize) -> Option<(usize, usize, bool)> {
    let bytes = hay.as_bytes();
    let mut i = from;
    while i < bytes.len() && i - from < 3 && (bytes[i] == b' ' || bytes[i] == b'\t') {
        i += 1;
    }
    let q = *bytes.get(i)?;
    if matches!(q, b'"' | b'\'' | b'`') {
        let start = i + 1;
        let len = bytes[start..].iter().take(513).position(|&b| b == q || b == b'\n' || b == b'\r')?;
        return (bytes[start + len] == q && len > 0).then_some((start, start + len, true));
    }
    let len = bytes[i..]
        .iter()
        .take(513)
        .position(|&b| b.is_ascii_whitespace() || matches!(b, b'"' | b'\'' | b'`' | b',' | b';'))
        .unwrap_or((bytes.len() - i).min(513));
    (len > 0).then_some((i, i + len, false))
}

/// A bare run longer than a value can be: where it ends.
fn run_end(hay: &str, from: usize) -> usize {
    let bytes = hay.as_bytes();
    from + bytes[from..]
        .iter()
        .position(|&b| b.is_ascii_whitespace() || matches!(b, b'"' | b'\'' | b'`' | b',' | b';'))
        .unwrap_or(bytes.len() - from)
}

fn pick_assignment(hay: &str, m: regex::Match<'_>) -> Scanned {
    match assignment_value(hay, m.end()) {
        Some((start, end, false)) if end - start > 512 => {
            // Every key inside this run has the same far end: only the last ~600 bytes can hold
            // a key whose value is short enough.
            let stop = run_end(hay, start);
            Scanned::PassTo(stop.saturating_sub(600).max(m.end()))
        }
        Some((start, end, quoted)) => assignment_verdict(hay, m, start, end, quoted).into(),
        None => Scanned::Pass,
    }
}

fn assignment_verdict(hay: &str, m: regex::Match<'_>, start: usize, end: usize, quoted: bool) -> Option<(usize, usize)> {
    let v = &hay[start..end];
    let head = m.as_str().trim_end_matches([':', '=', '>', ' ', '\t']);
    let sep_is_eq = m.as_str()[head.len()..].trim() == "=";
    let key = head.trim_end_matches(['"', '\'']);
    if !(3..=512).contains(&v.len()) || is_placeholder(v) || is_path(v) || (!quoted && is_code(v)) || !v.chars().any(char::is_alphanumeric)
    {
        return None;
    }
    // Four or more words in quotes are prose (`auth: "Token usage – per day"`), not a password.
    if quoted && v.matches(' ').count() >= 3 {
        return None;
    }
    // `KEY=value` with an upper-case key is a `.env`/shell assignment: any literal counts. In code
    // (`token = x`, `password: value`) a bare identifier is a variable, not a secret.
    let env_style =
        sep_is_eq && !m.as_str().contains(' ') && key.chars().all(|ch| ch.is_ascii_uppercase() || ch.is_ascii_digit() || ch == '_');
    if !quoted && !env_style && is_identifier(v) {
        return None;
    }
    Some((start, end))
}

fn pick_value(c: &Captures<'_>) -> Option<(usize, usize)> {
    let m = c.name("secret")?;
    let v = m.as_str();
    if v.len() > 1024 || is_placeholder(v) || is_path(v) {
        return None;
    }
    Some((m.start(), m.end()))
}

fn token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'_' | b'=' | b'-')
}

/// The first run of ≥ 16 token characters (at most 256 are looked at) starting within 24
/// characters of the keyword on its line, if it has two character classes and enough entropy.
fn pick_entropy(hay: &str, m: regex::Match<'_>) -> Scanned {
    entropy_token(hay, m).into()
}

fn entropy_token(hay: &str, m: regex::Match<'_>) -> Option<(usize, usize)> {
    let bytes = hay.as_bytes();
    let mut start = m.end();
    let limit = (m.end() + 25).min(bytes.len());
    while start < limit {
        if matches!(bytes[start], b'\n' | b'\r') {
            return None;
        }
        if bytes[start].is_ascii_alphanumeric()
            && (!token_byte(bytes[start - 1]) || start == m.end() || matches!(bytes[start - 1], b'=' | b'-'))
        {
            let len = bytes[start..].iter().take(257).take_while(|&&b| token_byte(b)).count();
            if len >= 16 {
                let v = &hay[start..start + len];
                let classes = [
                    v.bytes().any(|b| b.is_ascii_digit()),
                    v.bytes().any(|b| b.is_ascii_lowercase()),
                    v.bytes().any(|b| b.is_ascii_uppercase()),
                ];
                if len > 256 || classes.iter().filter(|&&x| x).count() < 2 || entropy(v) < ENTROPY_MIN || is_placeholder(v) {
                    return None;
                }
                return Some((start, start + len));
            }
            start += len.max(1);
            continue;
        }
        start += 1;
    }
    None
}

fn pick_whole(c: &Captures<'_>) -> Option<(usize, usize)> {
    c.name("secret").map(|m| (m.start(), m.end()))
}

/// Context rules in application order (the specific shapes before the generic assignment).
pub fn rules() -> Vec<ContextRule> {
    vec![
        ContextRule {
            name: "url_password",
            keywords: &["://"],
            pattern: r#"(?i)(?-u:\b)[a-z][a-z0-9+.-]{1,20}://[^\s/?#@:'"<>]*:(?P<secret>[^\s/?#@'"<>]+)@[^\s/?#'"<>@]"#.into(),
            how: How::Pick(pick_value),
        },
        ContextRule {
            name: "auth_header",
            keywords: &["authorization"],
            pattern: r#"(?i)(?-u:\b)(?:proxy-)?authorization["']?\s*[:=]\s*["']?(?:(?:bearer|basic|token|digest|apikey|api-key|negotiate)\s+)?(?P<secret>[A-Za-z0-9._~+/=-]{6,})"#.into(),
            how: How::Pick(pick_value),
        },
        ContextRule {
            name: "api_key_header",
            keywords: &["x-", "api-key", "apikey"],
            pattern: r#"(?i)(?-u:\b)(?:x-(?:[a-z0-9]+-)*(?:api-?key|auth-token|access-token|token|secret|key)|api-?key)["']?\s*:\s*["']?(?P<secret>[A-Za-z0-9._~+/=-]{8,})"#.into(),
            how: How::Pick(pick_value),
        },
        ContextRule {
            name: "cookie",
            keywords: &["cookie"],
            pattern: r#"(?i)(?-u:\b)(?:set-)?cookie["']?\s*:\s*(?P<secret>[^\r\n"']*=[^\r\n"']{3,})"#.into(),
            how: How::Pick(pick_whole),
        },
        ContextRule {
            name: "curl_user",
            keywords: &["curl", "wget"],
            pattern: r#"(?-u:\b)(?:curl|wget)(?-u:\b)[^\r\n]*?\s(?:-u|--user|--http-password=|--password=)\s*["']?(?:[^\s:"']+:)?(?P<secret>[^\s"']{3,})"#.into(),
            how: How::Pick(pick_value),
        },
        ContextRule {
            name: "cli_flag",
            keywords: &["pass", "pwd", "secret", "token", "key", "credential"],
            pattern: r#"(?i)(?:^|\s)--?(?:[a-z0-9]+-)*(?:password|passwd|pass|pwd|secret|token|api-?key|access-key|secret-key|private-key|client-secret|auth-token|credentials?)(?:=|\s+)["']?(?P<secret>[^\s"'-][^\s"']{2,})"#.into(),
            how: How::Pick(pick_value),
        },
        ContextRule {
            name: "assignment",
            keywords: &["pass", "pwd", "secret", "token", "key", "credential", "auth", "url", "dsn", "connection"],
            // Key and separator only: the value is read by hand from the match's end
            // ([`assignment_value`]), which keeps a megabyte of `KEY=` near-misses linear and cheap.
            pattern: format!(r#"(?i)[A-Za-z0-9_.-]*?(?:{SECRET_WORDS})(?:[_.-][A-Za-z0-9_.-]*)?["']?[ \t]{{0,3}}(?::=|=>|=|:)"#),
            how: How::Scan(pick_assignment),
        },
        ContextRule {
            name: "keyword_entropy",
            keywords: &["key", "token", "secret", "password", "passwd", "credential", "bearer"],
            // The keyword only; the token after it is read by hand ([`pick_entropy`]).
            pattern: r#"(?i)(?-u:\b)(?:api[_ -]?key|token|secret|password|passwd|credentials?|access[_ -]?key|bearer)(?-u:\b)"#.into(),
            how: How::Scan(pick_entropy),
        },
        ContextRule {
            name: "private_key_body",
            keywords: &["\n"],
            // Two or more consecutive base64 lines of a PEM body (64 chars, the last may be
            // shorter), also with a diff marker in front: a key whose BEGIN line is elsewhere.
            pattern: r#"(?m)(?P<secret>(?:^[+\- ]?[A-Za-z0-9+/]{64}\r?\n){2,}(?:^[+\- ]?[A-Za-z0-9+/=]{4,64}\r?$)?)"#.into(),
            how: How::Pick(pick_whole),
        },
    ]
}

/// Compiles the rules (once per redactor).
pub fn compiled() -> Vec<(ContextRule, Regex)> {
    rules()
        .into_iter()
        .map(|r| {
            let re = Regex::new(&r.pattern).expect("context rule compiles");
            (r, re)
        })
        .collect()
}

/// What a redacted value looks like when it is *not* a credential — the false positives the
/// transcript audit must never show: a UUID, a commit hash, a file path, a code identifier.
pub fn benign_shape(v: &str) -> Option<&'static str> {
    static UUID: std::sync::LazyLock<Regex> = std::sync::LazyLock::new(|| {
        Regex::new(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$").expect("uuid")
    });
    let t = v.trim();
    if UUID.is_match(t) {
        Some("uuid")
    } else if (7..=40).contains(&t.len())
        && t.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        && t.bytes().any(|b| b.is_ascii_digit())
    {
        Some("commit hash")
    } else if is_path(t)
        || (t.contains('/')
            && !t.contains(' ')
            && t.split('/').filter(|p| !p.is_empty()).count() >= 2
            && t.split('/')
                .all(|p| p.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))))
            && t.contains('.')
    {
        Some("file path")
    } else if is_identifier(t) {
        Some("code identifier")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use crate::pipeline::redact::Redactor;

    fn r(s: &str) -> String {
        Redactor::default().redact(s).0
    }

    #[test]
    fn issue_13_credentials_without_a_prefix_are_redacted_and_keys_kept() {
        let cases = [
            (
                "postgres://admin:Pa55w0rd!x@db/app",
                "postgres://admin:<redacted type='url_password'/>@db/app",
            ),
            ("DB_PASSWORD=hunter2hunter", "DB_PASSWORD=<redacted type='assignment'/>"),
            ("export FOO_TOKEN=abc123def456", "export FOO_TOKEN=<redacted type='assignment'/>"),
            ("SECRET_KEY='s3cr3t value'", "SECRET_KEY='<redacted type='assignment'/>'"),
            ("password: correcthorse9", "password: <redacted type='assignment'/>"),
            ("api_key = \"k-1234-5678\"", "api_key = \"<redacted type='assignment'/>\""),
            (
                "Authorization: Bearer opaqueTOKENvalue123",
                "Authorization: Bearer <redacted type='auth_header'/>",
            ),
            (
                "curl -u admin:s3cretpass https://x",
                "curl -u admin:<redacted type='curl_user'/> https://x",
            ),
            ("mysql --password=topsecret1 db", "mysql --password=<redacted type='cli_flag'/> db"),
            ("X-Api-Key: abcdef0123456789", "X-Api-Key: <redacted type='api_key_header'/>"),
        ];
        for (input, want) in cases {
            assert_eq!(r(input), want, "{input}");
        }
        assert!(r("Cookie: session=abc123xyz; theme=dark").contains("<redacted type='cookie'/>"));
    }

    #[test]
    fn code_paths_placeholders_and_words_are_left_alone() {
        for s in [
            "token = get_token()",
            "password = password_input",
            "password: str",
            "token_type: bearer",
            "author: Jane Doe",
            "tokenizer = AutoTokenizer.from_pretrained(name)",
            "API_KEY=$API_KEY",
            "DB_PASSWORD=${DB_PASSWORD}",
            "api_key: <your-api-key>",
            "credentials_file=/home/u/.aws/credentials",
            "let token = self.token.clone();",
            "git clone git@github.com:org/repo.git",
            "https://github.com/org/repo/commit/3f2a1b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a",
            "session 0b9e7a52-3c4d-4e5f-8a9b-0c1d2e3f4a5b started",
            "max_tokens: 4096",
        ] {
            assert_eq!(r(s), s, "{s}");
        }
    }
}
