//! Observation content hash for dedup (`docs/spec/pipeline.md` §15).

use sha2::{Digest, Sha256};

/// First 16 lowercase hex chars of SHA-256 over `msid 0x00 title 0x00 narrative` (nulls as "").
pub fn content_hash(memory_session_id: &str, title: Option<&str>, narrative: Option<&str>) -> String {
    let mut hasher = Sha256::new();
    hasher.update(memory_session_id.as_bytes());
    hasher.update([0u8]);
    hasher.update(title.unwrap_or_default().as_bytes());
    hasher.update([0u8]);
    hasher.update(narrative.unwrap_or_default().as_bytes());
    hasher.finalize().iter().take(8).map(|byte| format!("{byte:02x}")).collect()
}

/// Lowercase hex SHA-256 of `bytes` (secrets kept only as their digest).
pub fn sha256_hex(bytes: &[u8]) -> String {
    crate::data_dir::hex(&Sha256::digest(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn h1_separator_prevents_collisions() {
        assert_eq!(content_hash("session-abc", Some("debug log"), Some("")), "f85102f2aa8b5fdf");
        assert_eq!(content_hash("session-ab", Some("cdebug log"), Some("")), "9305f50a6a4f82e3");
        assert_eq!(content_hash("session-", Some("abcdebug log"), Some("")), "a6b01b20f0ba402c");
        assert_eq!(content_hash("", Some("session-abcdebug log"), Some("")), "b973ffea0439784d");
    }

    #[test]
    fn h2_h3_values() {
        assert_eq!(
            content_hash("memd-claude-s1", Some("Fix login"), Some("Rate limiter added")),
            "db22dad7cfef1a28"
        );
        assert_eq!(content_hash("memd-claude-s1", Some("Fix login"), None), "3507f9a479e63d60");
        assert_eq!(content_hash("memd-claude-s1", Some("Fix login"), Some("")), "3507f9a479e63d60");
        assert_eq!(content_hash("memd-claude-s1", Some(""), Some("Fix login")), "1bb2ba90148c81e0");
        assert_eq!(
            content_hash("manual-acme", Some("Use vitest"), Some("这个项目的测试一律用 vitest")),
            "c8ebb9dc2cb370af"
        );
    }
}
