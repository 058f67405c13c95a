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

/// The entropy a token after a secret keyword must reach; chosen from the measurements in
/// `docs/privacy.md` (real tokens ≥ 3.9, English words and identifiers ≤ 3.4 at length ≥ 16).
pub const ENTROPY_MIN: f64 = 3.6;

/// Picks the secret's range from a match, or None to let it pass.
pub type Pick = fn(&Captures<'_>) -> Option<(usize, usize)>;

pub struct ContextRule {
    pub name: &'static str,
    pub keywords: &'static [&'static str],
    pub pattern: String,
    pub pick: Pick,
}

fn group<'h>(c: &Captures<'h>, names: &[&str]) -> Option<regex::Match<'h>> {
    names.iter().find_map(|n| c.name(n))
}

fn value_of<'h>(c: &Captures<'h>) -> Option<(regex::Match<'h>, bool)> {
    if let Some(m) = group(c, &["dq", "sq", "bq"]) {
        return Some((m, true));
    }
    c.name("bare").map(|m| (m, false))
}

fn pick_assignment(c: &Captures<'_>) -> Option<(usize, usize)> {
    let (m, quoted) = value_of(c)?;
    let v = m.as_str();
    let sep = c.name("sep").map_or("", |s| s.as_str());
    let key = c.name("key").map_or("", |k| k.as_str());
    if v.len() < 3 || is_placeholder(v) || is_path(v) || (!quoted && is_code(v)) {
        return None;
    }
    // `KEY=value` with an upper-case key is a `.env`/shell assignment: any literal counts. In code
    // (`token = x`, `password: value`) a bare identifier is a variable, not a secret.
    let env_style = sep == "=" && key.chars().all(|ch| ch.is_ascii_uppercase() || ch.is_ascii_digit() || ch == '_');
    if !quoted && !env_style && is_identifier(v) {
        return None;
    }
    Some((m.start(), m.end()))
}

fn pick_value(c: &Captures<'_>) -> Option<(usize, usize)> {
    let m = c.name("secret")?;
    let v = m.as_str();
    if is_placeholder(v) || is_path(v) {
        return None;
    }
    Some((m.start(), m.end()))
}

fn pick_entropy(c: &Captures<'_>) -> Option<(usize, usize)> {
    let m = c.name("secret")?;
    let v = m.as_str();
    let classes = [
        v.bytes().any(|b| b.is_ascii_digit()),
        v.bytes().any(|b| b.is_ascii_lowercase()),
        v.bytes().any(|b| b.is_ascii_uppercase()),
    ];
    if classes.iter().filter(|&&x| x).count() < 2 || entropy(v) < ENTROPY_MIN || is_placeholder(v) {
        return None;
    }
    Some((m.start(), m.end()))
}

fn pick_whole(c: &Captures<'_>) -> Option<(usize, usize)> {
    c.name("secret").map(|m| (m.start(), m.end()))
}

/// The value forms of an assignment: double-, single- or back-quoted, or bare up to a delimiter.
const VALUE: &str = r#"(?:"(?P<dq>[^"\r\n]{1,512})"|'(?P<sq>[^'\r\n]{1,512})'|`(?P<bq>[^`\r\n]{1,512})`|(?P<bare>[^\s"'`,;]{1,512}))"#;

/// Context rules in application order (the specific shapes before the generic assignment).
pub fn rules() -> Vec<ContextRule> {
    vec![
        ContextRule {
            name: "url_password",
            keywords: &["://"],
            pattern: r#"(?i)\b[a-z][a-z0-9+.-]{1,20}://[^\s/?#@:'"<>]{0,128}:(?P<secret>[^\s/?#@'"<>]{1,256})@[^\s/?#'"<>@]"#.into(),
            pick: pick_value,
        },
        ContextRule {
            name: "auth_header",
            keywords: &["authorization"],
            pattern: r#"(?i)\b(?:proxy-)?authorization["']?\s*[:=]\s*["']?(?:(?:bearer|basic|token|digest|apikey|api-key|negotiate)\s+)?(?P<secret>[A-Za-z0-9._~+/=:-]{6,})"#.into(),
            pick: pick_value,
        },
        ContextRule {
            name: "api_key_header",
            keywords: &["x-", "api-key", "apikey"],
            pattern: r#"(?i)\b(?:x-(?:[a-z0-9]+-)*(?:api-?key|auth-token|access-token|token|secret|key)|api-?key)["']?\s*:\s*["']?(?P<secret>[A-Za-z0-9._~+/=-]{8,})"#.into(),
            pick: pick_value,
        },
        ContextRule {
            name: "cookie",
            keywords: &["cookie"],
            pattern: r#"(?i)\b(?:set-)?cookie["']?\s*:\s*(?P<secret>[^\r\n"']*=[^\r\n"']{3,})"#.into(),
            pick: pick_whole,
        },
        ContextRule {
            name: "curl_user",
            keywords: &["curl", "wget"],
            pattern: r#"\b(?:curl|wget)\b[^\r\n]*?\s(?:-u|--user|--http-password=|--password=)\s*["']?(?:[^\s:"']{1,128}:)?(?P<secret>[^\s"']{3,256})"#.into(),
            pick: pick_value,
        },
        ContextRule {
            name: "cli_flag",
            keywords: &["pass", "pwd", "secret", "token", "key", "credential"],
            pattern: r#"(?i)(?:^|\s)--?(?:[a-z0-9]+-)*(?:password|passwd|pass|pwd|secret|token|api-?key|access-key|secret-key|private-key|client-secret|auth-token|credentials?)(?:=|\s+)["']?(?P<secret>[^\s"'-][^\s"']{2,255})"#.into(),
            pick: pick_value,
        },
        ContextRule {
            name: "assignment",
            keywords: &["pass", "pwd", "secret", "token", "key", "credential", "auth", "url", "dsn", "connection"],
            pattern: format!(
                r#"(?i)(?P<key>[A-Za-z0-9_.-]*?(?:{SECRET_WORDS})(?:[_.-][A-Za-z0-9_.-]*)?)["']?[ \t]{{0,3}}(?P<sep>:=|=>|=|:)[ \t]{{0,3}}{VALUE}"#
            ),
            pick: pick_assignment,
        },
        ContextRule {
            name: "keyword_entropy",
            keywords: &["key", "token", "secret", "password", "passwd", "credential", "bearer"],
            pattern: r#"(?i)\b(?:api[_ -]?key|token|secret|password|passwd|credentials?|access[_ -]?key|bearer)\b[^\r\n]{0,24}?(?P<secret>[A-Za-z0-9+/_=-]{16,256})"#.into(),
            pick: pick_entropy,
        },
        ContextRule {
            name: "private_key_body",
            keywords: &["\n"],
            // Two or more consecutive base64 lines of a PEM body (64 chars, the last may be
            // shorter), also with a diff marker in front: a key whose BEGIN line is elsewhere.
            pattern: r#"(?m)(?P<secret>(?:^[+\- ]?[A-Za-z0-9+/]{64}\r?\n){2,}(?:^[+\- ]?[A-Za-z0-9+/=]{4,64}\r?$)?)"#.into(),
            pick: pick_whole,
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
