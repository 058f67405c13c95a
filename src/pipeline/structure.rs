//! Structure-aware scanning of JSON tool payloads: what a per-string scan cannot see.
//!
//! - A value whose *key* names a secret (`{"password": "hunter2"}`) is a secret whatever its
//!   shape: the string leaf alone says nothing.
//! - Object keys are text too (`{"sk-ant-…": 1}`).
//! - A PEM key split over consecutive array elements — Claude Code's `structuredPatch[].lines`
//!   has one line per string — is redacted from the BEGIN line to the END line, not just the
//!   BEGIN line.

use std::sync::LazyLock;

use regex::Regex;

use super::secrets::{SECRET_WORDS, is_placeholder};

static SECRET_KEY: LazyLock<Regex> = LazyLock::new(|| {
    // The key *ends* with the secret word (`DB_PASSWORD`, `clientSecret`, `auth`, `api_key`):
    // `token_count`, `secret_name` and `password_min_length` describe a secret, they are not one.
    Regex::new(&format!(r"(?i)^[A-Za-z0-9_.-]*?(?:{SECRET_WORDS})$")).expect("secret key regex compiles")
});

/// Whether a JSON object key names a secret.
pub fn is_secret_key(key: &str) -> bool {
    key.len() <= 128 && SECRET_KEY.is_match(key)
}

/// Whether the string under a secret-naming key is a credential (not a placeholder, a path, an
/// environment variable's name, or too short to be one).
pub fn is_secret_value(v: &str) -> bool {
    let t = v.trim();
    // `OPENAI_API_KEY` names a variable; `Q158ZX7WVB2KJ9LM` (digits, no underscore) is a key.
    let env_name = t.len() > 1
        && t.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        && (t.contains('_') || !t.chars().any(|c| c.is_ascii_digit()));
    t.chars().count() >= 3
        && !is_placeholder(t)
        && !t.starts_with('/')
        && !t.starts_with("~/")
        && !t.starts_with("./")
        && !env_name
        && !t.contains('\n')
}

/// The PEM state across the strings of one array: `step` says whether this element is inside a
/// key that an earlier element began (redact it whole), and updates the state.
#[derive(Default)]
pub struct PemRun {
    inside: bool,
}

impl PemRun {
    pub fn step(&mut self, text: &str) -> bool {
        let begins = text.contains("-----BEGIN") && text.contains("PRIVATE KEY");
        let ends = text.contains("-----END");
        if self.inside {
            self.inside = !ends;
            return true;
        }
        // A BEGIN line without its END opens a run; the BEGIN element itself is redacted from
        // BEGIN to its end by the per-string `private_key_pem` detector.
        self.inside = begins && !ends;
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_that_are_secrets_and_keys_that_describe_them() {
        for k in [
            "password",
            "DB_PASSWORD",
            "clientSecret",
            "api_key",
            "apiKey",
            "auth",
            "access_token",
            "private_key",
            "DATABASE_URL",
        ] {
            assert!(is_secret_key(k), "{k}");
        }
        for k in [
            "token_count",
            "secret_name",
            "author",
            "tokens",
            "password_min_length",
            "input_tokens",
            "file_path",
        ] {
            assert!(!is_secret_key(k), "{k}");
        }
        assert!(is_secret_value("hunter2"));
        assert!(is_secret_value("Q158ZX7WVB2KJ9LM"));
        for v in ["", "xx", "$TOKEN", "<your key>", "/etc/secret", "OPENAI_API_KEY", "true"] {
            assert!(!is_secret_value(v), "{v}");
        }
    }

    #[test]
    fn a_pem_run_spans_elements_up_to_the_end_line() {
        let mut run = PemRun::default();
        let lines = [
            "+-----BEGIN RSA PRIVATE KEY-----",
            "+MIIEowIBAAKCAQEA",
            "+abcd",
            "+-----END RSA PRIVATE KEY-----",
            "+after",
        ];
        let inside: Vec<bool> = lines.iter().map(|l| run.step(l)).collect();
        assert_eq!(inside, [false, true, true, true, false]);
    }
}
