//! Reply classifier (`docs/spec/pipeline.md` §11): idle, xml, or prose of a kind (auth, quota,
//! overflow, plain). Prose is matched on the lowercased, whitespace-collapsed text with the
//! regexes of §11 ("within n chars" = `[^.]{0,n}`); XML-shaped text is never auth or quota.

use std::sync::LazyLock;

use regex::Regex;

pub use crate::providers::prose::{ProseKind, classify_prose};

/// Reply class (§11).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyClass {
    /// Empty or whitespace only: nothing to keep.
    Idle,
    /// Contains a root tag; hand it to [`parse_reply`].
    Xml,
    Prose(ProseKind),
}

impl ReplyClass {
    /// `idle`, `xml`, `prose/auth`, `prose/quota`, `prose/overflow`, `prose/plain`.
    pub fn as_str(self) -> &'static str {
        match self {
            ReplyClass::Idle => "idle",
            ReplyClass::Xml => "xml",
            ReplyClass::Prose(ProseKind::Auth) => "prose/auth",
            ReplyClass::Prose(ProseKind::Quota) => "prose/quota",
            ReplyClass::Prose(ProseKind::Overflow) => "prose/overflow",
            ReplyClass::Prose(ProseKind::Plain) => "prose/plain",
        }
    }
}

static XML_ROOT: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?i)<(observation|summary|skip_summary)[>/\s]").expect("xml root regex"));

/// Classifies a reply (§11): idle, xml, or a kind of prose.
pub fn classify_reply(reply: &str) -> ReplyClass {
    if reply.trim().is_empty() {
        ReplyClass::Idle
    } else if XML_ROOT.is_match(reply) {
        ReplyClass::Xml
    } else {
        ReplyClass::Prose(classify_prose(reply))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c1_idle_and_xml() {
        assert_eq!(classify_reply(""), ReplyClass::Idle);
        assert_eq!(classify_reply("  \n "), ReplyClass::Idle);
        assert_eq!(classify_reply("session exhausted <observation></observation>"), ReplyClass::Xml);
        assert_eq!(classify_reply("HTTP 401 <summary><request>x</request></summary>"), ReplyClass::Xml);
        assert_eq!(classify_reply("<skip_summary/>"), ReplyClass::Xml);
        assert_eq!(classify_reply("<Observation\n>"), ReplyClass::Xml);
        assert_eq!(classify_reply("<observations>"), ReplyClass::Prose(ProseKind::Plain));
    }

    fn prose(text: &str) -> &'static str {
        classify_reply(text).as_str()
    }

    #[test]
    fn c3_plain_prose() {
        for text in [
            "Skipping — repeated log scan with no new findings.",
            "No observations to record.",
            "The request returned 500 and produced no XML.",
        ] {
            assert_eq!(prose(text), "prose/plain", "{text}");
        }
    }

    #[test]
    fn c4_quota() {
        for text in [
            "Claude usage limit reached. Your weekly limit will reset soon.",
            "Your subscription quota has been exhausted. Please try again after it resets.",
            "You are out of credits.",
        ] {
            assert_eq!(prose(text), "prose/quota", "{text}");
        }
    }

    #[test]
    fn c5_auth() {
        for text in [
            "Failed to authenticate. API Error: 401",
            "401 Unauthorized",
            "Status: 401",
            "Request failed with 403",
            "Authentication required, run /login to continue.",
            "Forbidden\n\n(403)",
            "Invalid API key · Please run /login",
        ] {
            assert_eq!(prose(text), "prose/auth", "{text}");
        }
    }

    #[test]
    fn c6_login_mentions_are_plain() {
        for text in [
            "Please run /login in the observed project instructions.",
            "The project authentication guide says to run /login before testing.",
        ] {
            assert_eq!(prose(text), "prose/plain", "{text}");
        }
    }

    #[test]
    fn c7_overflow_not_quota() {
        for text in [
            "Prompt is too long: 250000 tokens > 200000 maximum",
            "The conversation exceeded the context window limit",
        ] {
            assert_eq!(prose(text), "prose/overflow", "{text}");
        }
    }
}
