//! Reply classifier (`docs/spec/pipeline.md` §11): idle, xml, or prose of a kind (auth, quota,
//! overflow, plain). Prose is matched on the lowercased, whitespace-collapsed text with the
//! regexes of §11 ("within n chars" = `[^.]{0,n}`); XML-shaped text is never auth or quota.

use regex::Regex;
use serde::Serialize;
use std::sync::LazyLock;

/// Kind of prose reply (§11), checked in this order, first hit wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProseKind {
    Auth,
    Quota,
    Overflow,
    Plain,
}

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

static AUTH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"failed to authenticate",
        r"|authentication (failed|failure|error|required|expired)",
        r"|(invalid|expired|revoked|missing) (api[ -]?key|x-api-key|auth token|authentication token|oauth token|credentials)",
        r"|(401|403)[^.]{0,20}(unauthori[sz]ed|forbidden)",
        r"|(unauthori[sz]ed|forbidden)[^.]{0,20}(401|403)",
        r"|(status|http|api error|error|code)[ :=]+(401|403)\b",
        r"|request failed with (status )?(401|403)\b",
        r"|/login (to authenticate|to re-?authenticate|again|to continue|and retry|and try again)",
    ))
    .expect("auth regex")
});

static QUOTA: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(usage|rate|weekly|daily|monthly|subscription|plan|credit)s? [^.]{0,40}(limit|quota|cap)s?[^.]{0,60}(reached|exceeded|exhausted|hit|used up)",
        r"|(limit|quota)s?[^.]{0,40}(will reset|resets|reset at|reset in)",
        r"|out of (credits|quota|usage)|insufficient (credits|quota|balance)|quota (exceeded|exhausted)",
    ))
    .expect("quota regex")
});

static OVERFLOW: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"prompt is too long|context (window|length) (exceeded|limit)|maximum context length|too many tokens|input is too long")
        .expect("overflow regex")
});

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

/// Sub-classifies prose (also usable on provider error bodies) on the lowercased,
/// whitespace-collapsed text.
pub fn classify_prose(text: &str) -> ProseKind {
    let norm = text.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
    if AUTH.is_match(&norm) {
        ProseKind::Auth
    } else if QUOTA.is_match(&norm) {
        ProseKind::Quota
    } else if OVERFLOW.is_match(&norm) {
        ProseKind::Overflow
    } else {
        ProseKind::Plain
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
