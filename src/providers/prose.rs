//! Provider error prose (docs/spec/pipeline.md §11): whether a text says the credentials are
//! refused, a quota is spent, or the request is too long — matched on the lowercased,
//! whitespace-collapsed text ("within n chars" = `[^.]{0,n}`). The transports classify error
//! bodies with it; the observer's reply classifier uses it for prose replies.

use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

/// Kind of prose reply (§11), checked in this order, first hit wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProseKind {
    Auth,
    Quota,
    Overflow,
    Plain,
}

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
