//! Secret redaction (`docs/spec/pipeline.md` §5.5), its settings (§5.6) and the oversize rule (§5.3).
//!
//! A [`Redactor`] is built once per settings change; bad settings only produce warnings.
//! Matched secrets are never logged or returned, only counted per detector name.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::{Regex, RegexBuilder};

use super::detector::{Detector, Edges, Matcher, splice};
use serde::{Deserialize, Serialize};

/// Strings longer than this many chars are replaced whole, unscanned.
pub const OVERSIZE_CHARS: usize = 1_000_000;
pub const OVERSIZE_MARKER: &str = "<redacted type='oversize'/>";
const CUSTOM_REGEX_SIZE_LIMIT: usize = 1 << 20;
const MEMD_TOKEN: &str = "memd_token";
/// Shorter strings hold no secret a built-in or context detector finds (`a://b:c@d` is 9
/// bytes); custom patterns see every string.
const MIN_SCANNED_BYTES: usize = 8;
/// A marker this redactor writes (`<redacted type='NAME'/>`).
static MARKER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"<redacted type='[^'<>]*'/>").expect("marker pattern compiles"));

/// Redaction passes over one string at most (each replaces more; the second is rarely needed).
const PASSES: usize = 4;

/// Built-ins in application order (`\b` is the ASCII word boundary), as in the §5.5 table.
#[rustfmt::skip]
const BUILTINS: [(&str, &str); 11] = [
    ("private_key_pem", r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----(?s:.*)"),
    ("jwt", r"(?-u:\b)eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),
    ("aws_access_key", r"(?-u:\b)(?:AKIA|ASIA)[0-9A-Z]{16}(?-u:\b)"),
    ("aws_secret_key", r#"(?i:aws[_-]?secret[_-]?(?:access[_-]?)?key|secret[_-]?access[_-]?key)["']?\s*[:=]\s*["']?(?P<secret>[A-Za-z0-9/+]{40,})"#),
    ("github_pat", r"(?-u:\b)(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})"),
    ("anthropic_key", r"(?-u:\b)sk-ant-[A-Za-z0-9_-]{20,}"),
    ("openai_key", r"(?-u:\b)sk-[A-Za-z0-9_-]{20,}"),
    ("stripe_key", r"(?-u:\b)(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{24,}"),
    ("slack_token", r"(?-u:\b)xox[abposr]-[A-Za-z0-9-]{10,}|https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+"),
    ("google_api_key", r"(?-u:\b)AIza[0-9A-Za-z_-]{35}"),
    (MEMD_TOKEN, r"(?:[Bb]earer\s+|[?&]token=)(?P<secret>[0-9a-fA-F]{64})(?-u:\b)"),
];

/// The built-ins compiled; a leading or trailing `(?-u:\b)` becomes an identifier-edge check
/// ([`Edges`]), which also holds next to `_`, where `\b` does not.
static BUILTIN_REGEXES: LazyLock<Vec<(&'static str, Regex, Edges)>> = LazyLock::new(|| {
    const B: &str = r"(?-u:\b)";
    BUILTINS
        .iter()
        .map(|&(name, pattern)| {
            let leading = pattern.strip_prefix(B);
            let rest = leading.unwrap_or(pattern);
            let trailing = rest.strip_suffix(B);
            let edges = Edges {
                leading: leading.is_some(),
                trailing: trailing.is_some(),
            };
            let regex = Regex::new(trailing.unwrap_or(rest)).expect("built-in redaction pattern compiles");
            (name, regex, edges)
        })
        .collect()
});

/// Lowercase words one of which any match of the built-in `name` contains: a string without
/// them skips the detector (most tool output has none).
fn builtin_keywords(name: &str) -> &'static [&'static str] {
    match name {
        "private_key_pem" => &["-----begin"],
        "jwt" => &["eyj"],
        "aws_access_key" => &["akia", "asia"],
        "aws_secret_key" => &["secret"],
        "github_pat" => &["gh", "github_pat_"],
        "anthropic_key" => &["sk-ant-"],
        "openai_key" => &["sk-"],
        "stripe_key" => &["_live_", "_test_"],
        "slack_token" => &["xox", "hooks.slack.com"],
        "google_api_key" => &["aiza"],
        MEMD_TOKEN => &["bearer", "token="],
        _ => &[],
    }
}

static CONTEXT_REGEXES: LazyLock<Vec<(crate::pipeline::secrets::ContextRule, Regex)>> = LazyLock::new(crate::pipeline::secrets::compiled);

/// Redactions per detector name (`oversize` included).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct RedactionCounts(BTreeMap<String, u64>);

impl RedactionCounts {
    pub fn add(&mut self, name: &str, n: u64) {
        if n > 0 {
            *self.0.entry(name.to_owned()).or_default() += n;
        }
    }

    pub fn merge(&mut self, other: &RedactionCounts) {
        for (name, n) in &other.0 {
            self.add(name, *n);
        }
    }

    pub fn get(&self, name: &str) -> u64 {
        self.0.get(name).copied().unwrap_or(0)
    }

    pub fn total(&self) -> u64 {
        self.0.values().sum()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, u64)> {
        self.0.iter().map(|(name, n)| (name.as_str(), *n))
    }
}

/// Redaction settings (§5.6), borrowed from the flat settings map.
#[derive(Clone, Copy)]
pub struct RedactConfig<'a> {
    /// `MEMD_REDACT`.
    pub redact: bool,
    /// `MEMD_REDACT_DISABLED_BUILTINS`, comma separated.
    pub disabled_builtins: &'a str,
    /// `MEMD_REDACT_CUSTOM_PATTERNS`, a JSON array of `{name, regex}`.
    pub custom_patterns_json: &'a str,
    /// Current contents of `<data>/token`.
    pub memd_token: Option<&'a str>,
}

impl Default for RedactConfig<'_> {
    fn default() -> Self {
        Self {
            redact: true,
            disabled_builtins: "",
            custom_patterns_json: "[]",
            memd_token: None,
        }
    }
}

#[derive(Deserialize)]
struct CustomPattern {
    name: String,
    regex: String,
}

/// The compiled detector set; cheap to clone.
#[derive(Clone)]
pub struct Redactor {
    enabled: bool,
    detectors: Vec<Detector>,
    /// Every detector keyword, ASCII case-insensitive: one pass per string says which detectors
    /// can match at all (bit i = keyword i).
    keywords: aho_corasick::AhoCorasick,
}

// Debug shows detector names only: the `memd_token` detector holds the API token itself, and
// custom patterns may spell out a user's secret.
impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.detectors.iter().map(|d| d.name.as_str()).collect();
        f.debug_struct("Redactor")
            .field("enabled", &self.enabled)
            .field("detectors", &names)
            .finish()
    }
}

impl std::fmt::Debug for RedactConfig<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedactConfig")
            .field("redact", &self.redact)
            .field("disabled_builtins", &self.disabled_builtins)
            .field("custom_patterns", &"<hidden>")
            .field("memd_token", &self.memd_token.map(|_| "<hidden>"))
            .finish()
    }
}

impl Default for Redactor {
    fn default() -> Self {
        Self::new(&RedactConfig::default()).0
    }
}

impl Redactor {
    /// Builds the detector set; invalid settings are skipped and described in the warnings.
    pub fn new(config: &RedactConfig<'_>) -> (Self, Vec<String>) {
        let mut warnings = Vec::new();
        let disabled: Vec<&str> = config
            .disabled_builtins
            .split(',')
            .map(str::trim)
            .filter(|name| !name.is_empty())
            .collect();
        let context_names: Vec<&str> = CONTEXT_REGEXES.iter().map(|(r, _)| r.name).collect();
        for name in &disabled {
            if !BUILTINS.iter().any(|(builtin, _)| builtin == name) && !context_names.contains(name) {
                warnings.push(format!("MEMD_REDACT_DISABLED_BUILTINS: unknown built-in `{name}`"));
            }
        }
        let mut detectors = custom_detectors(config.custom_patterns_json, &mut warnings);
        for (name, regex, edges) in BUILTIN_REGEXES.iter() {
            if disabled.contains(name) {
                continue;
            }
            let literal_token = config.memd_token.map(str::trim).filter(|token| !token.is_empty());
            if let (MEMD_TOKEN, Some(token)) = (*name, literal_token) {
                detectors.push(Detector::new(MEMD_TOKEN.to_owned(), Matcher::Literal(token.to_owned())));
            }
            let matcher = if *name == "openai_key" {
                Matcher::RegexWithDigit(regex.clone())
            } else {
                Matcher::Regex(regex.clone())
            };
            let mut d = Detector::new((*name).to_owned(), matcher);
            d.keywords = builtin_keywords(name);
            d.edges = *edges;
            detectors.push(d);
        }
        for (rule, regex) in CONTEXT_REGEXES.iter() {
            if disabled.contains(&rule.name) {
                continue;
            }
            let matcher = match rule.how {
                crate::pipeline::secrets::How::Scan(scan) => Matcher::Scan(regex.clone(), scan),
                crate::pipeline::secrets::How::Pick(pick) => Matcher::Context(regex.clone(), pick),
            };
            let mut d = Detector::new(rule.name.to_owned(), matcher);
            d.keywords = rule.keywords;
            detectors.push(d);
        }
        let mut words: Vec<&'static str> = Vec::new();
        for d in &mut detectors {
            for k in d.keywords {
                let i = words.iter().position(|w| w == k).unwrap_or_else(|| {
                    words.push(k);
                    words.len() - 1
                });
                d.keyword_mask |= 1u64 << i.min(63);
            }
        }
        let keywords = aho_corasick::AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(&words)
            .expect("keyword automaton builds");
        (
            Self {
                enabled: config.redact,
                detectors,
                keywords,
            },
            warnings,
        )
    }

    pub fn is_enabled(&self) -> bool {
        self.enabled
    }

    /// §5.3: redaction is on and `s` is longer than [`OVERSIZE_CHARS`].
    pub fn is_oversize(&self, s: &str) -> bool {
        self.enabled && s.len() > OVERSIZE_CHARS && s.chars().nth(OVERSIZE_CHARS).is_some()
    }

    /// Which keywords occur in `s` (none in a string too short to hold a secret).
    fn present_keywords(&self, s: &str) -> u64 {
        if s.len() < MIN_SCANNED_BYTES {
            return 0;
        }
        let mut present = 0u64;
        for m in self.keywords.find_overlapping_iter(s) {
            present |= 1u64 << m.pattern().as_usize().min(63);
        }
        present
    }

    /// Each secret the detectors would replace, with the detector's name, in application order
    /// (`memd redact --audit`; never logged).
    pub fn findings(&self, s: &str) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let mut text = s.to_owned();
        let present = self.present_keywords(s);
        for detector in &self.detectors {
            if detector.keyword_mask != 0 && detector.keyword_mask & present == 0 {
                continue;
            }
            let mut found = Vec::new();
            let (replaced, n) = detector.apply(&text, Some(&mut found));
            if n > 0 {
                text = replaced;
                out.extend(found.into_iter().map(|f| (detector.name.clone(), f)));
            }
        }
        out
    }

    /// Oversize rule, then every detector in order; a disabled redactor returns `s` unchanged.
    pub fn redact(&self, s: &str) -> (String, RedactionCounts) {
        let mut counts = RedactionCounts::default();
        if !self.enabled {
            return (s.to_owned(), counts);
        }
        if self.is_oversize(s) {
            counts.add("oversize", 1);
            return (OVERSIZE_MARKER.to_owned(), counts);
        }
        // A redaction can expose a new context (a keyword now next to a value): passes repeat
        // until nothing changes, so redacting again finds nothing (at most `PASSES`).
        let mut text = std::borrow::Cow::Borrowed(s);
        for _ in 0..PASSES {
            match self.pass(&text, &mut counts) {
                Some(next) => text = std::borrow::Cow::Owned(next),
                None => break,
            }
        }
        (text.into_owned(), counts)
    }

    /// One pass: every detector reads `s`; overlapping finds merge into one redaction, named by
    /// the earliest (the longest at a tie), so markers never splice into each other. A marker of an
    /// earlier pass is kept whole: a find inside it is ignored, one across it absorbs it. None: no
    /// new find.
    fn pass(&self, s: &str, counts: &mut RedactionCounts) -> Option<String> {
        let markers: Vec<(usize, usize)> = MARKER.find_iter(s).map(|m| (m.start(), m.end())).collect();
        let present = self.present_keywords(s);
        let mut hits: Vec<(usize, usize, Option<usize>)> = markers.iter().map(|&(a, b)| (a, b, None)).collect();
        for (i, detector) in self.detectors.iter().enumerate() {
            if detector.keyword_mask != 0 && detector.keyword_mask & present == 0 {
                continue;
            }
            let fresh = detector
                .ranges(s)
                .into_iter()
                .filter(|&(a, b)| !markers.iter().any(|m| m.0 <= a && b <= m.1));
            hits.extend(fresh.map(|(a, b)| (a, b, Some(i))));
        }
        hits.sort_by_key(|&(a, b, i)| (a, std::cmp::Reverse(b), i.is_none()));
        let mut groups: Vec<(usize, usize, Option<usize>)> = Vec::new();
        for (a, b, i) in hits {
            match groups.last_mut() {
                Some(last) if a < last.1 => {
                    last.1 = last.1.max(b);
                    last.2 = last.2.or(i);
                }
                _ => groups.push((a, b, i)),
            }
        }
        let merged: Vec<(usize, usize, &str)> = groups
            .into_iter()
            .filter_map(|(a, b, i)| i.map(|i| (a, b, i)))
            .map(|(a, b, i)| {
                counts.add(&self.detectors[i].name, 1);
                (a, b, self.detectors[i].marker.as_str())
            })
            .collect();
        (!merged.is_empty()).then(|| splice(s, &merged))
    }
}

fn custom_detectors(json: &str, warnings: &mut Vec<String>) -> Vec<Detector> {
    const SETTING: &str = "MEMD_REDACT_CUSTOM_PATTERNS";
    if json.trim().is_empty() {
        return Vec::new();
    }
    let entries: Vec<serde_json::Value> = match serde_json::from_str(json) {
        Ok(entries) => entries,
        Err(err) => {
            warnings.push(format!("{SETTING}: not a JSON array ({err}); ignored"));
            return Vec::new();
        }
    };
    let compiled = entries
        .into_iter()
        .enumerate()
        .map(|(index, entry)| compile_custom(entry).map_err(|reason| format!("{SETTING}[{index}]: {reason}; skipped")));
    compiled
        .filter_map(|detector| detector.map_err(|warning| warnings.push(warning)).ok())
        .collect()
}

/// Why a custom pattern was skipped. Never echoes the regex: it may hold a secret.
#[derive(Debug, thiserror::Error)]
enum CustomPatternError {
    #[error("{0}")]
    Shape(#[from] serde_json::Error),
    #[error("name must match ^[a-z0-9_]{{1,32}}$ and not be `oversize`")]
    Name,
    #[error("`{name}`: regex exceeds the {limit}-byte size limit")]
    TooBig { name: String, limit: usize },
    #[error("`{0}`: regex does not compile")]
    Invalid(String),
    #[error("`{0}`: regex matches the empty string")]
    MatchesEmpty(String),
}

/// One custom pattern.
fn compile_custom(entry: serde_json::Value) -> Result<Detector, CustomPatternError> {
    let CustomPattern { name, regex } = serde_json::from_value(entry)?;
    let valid_name = (1..=32).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && name != "oversize";
    if !valid_name {
        return Err(CustomPatternError::Name);
    }
    let regex = RegexBuilder::new(&regex)
        .size_limit(CUSTOM_REGEX_SIZE_LIMIT)
        .build()
        .map_err(|err| match err {
            regex::Error::CompiledTooBig(limit) => CustomPatternError::TooBig { name: name.clone(), limit },
            _ => CustomPatternError::Invalid(name.clone()),
        })?;
    if regex.is_match("") {
        return Err(CustomPatternError::MatchesEmpty(name));
    }
    Ok(Detector::new(name, Matcher::Regex(regex)))
}

#[cfg(test)]
#[path = "redact_tests.rs"]
mod tests;
