//! Privacy processing in the order of `docs/spec/pipeline.md` §5.1: images (JSON only) → oversize →
//! tags → redaction. Top-level strings are trimmed after tag stripping; JSON leaves are not.

use serde_json::Value;

use super::images::strip_images;
use super::redact::{OVERSIZE_MARKER, RedactionCounts, Redactor};
use super::structure::{PemRun, is_secret_key, is_secret_value};
use super::tags::strip_tags;

/// A cleaned top-level string (prompt, last assistant message, save_memory text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cleaned {
    pub text: String,
    /// Nothing was left after tag stripping and trimming: a private prompt (§4 rule 4).
    pub private: bool,
    pub tag_regions: usize,
    pub redactions: RedactionCounts,
}

/// Counters kept on the `tool_uses` row.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CleanStats {
    pub images_stripped: usize,
    pub tag_regions: usize,
    pub redactions: RedactionCounts,
}

/// The privacy stage; holds the current redaction settings (a SIGHUP may replace them: clones
/// share the replacement).
#[derive(Debug, Clone, Default)]
pub struct Privacy {
    redactor: std::sync::Arc<crate::config::live::Live<Redactor>>,
}

impl Privacy {
    pub fn new(redactor: Redactor) -> Self {
        Self {
            redactor: std::sync::Arc::new(crate::config::live::Live::new(redactor)),
        }
    }

    pub fn redactor(&self) -> std::sync::Arc<Redactor> {
        self.redactor.get()
    }

    /// New redaction rules for everything cleaned from now on.
    pub fn set_redactor(&self, redactor: Redactor) {
        self.redactor.set(redactor);
    }

    /// Oversize → tags → trim → redaction → trim, for a single top-level string.
    pub fn clean_text(&self, s: &str) -> Cleaned {
        let mut redactions = RedactionCounts::default();
        if self.redactor.get().is_oversize(s) {
            redactions.add("oversize", 1);
            return Cleaned {
                text: OVERSIZE_MARKER.to_owned(),
                private: false,
                tag_regions: 0,
                redactions,
            };
        }
        let stripped = strip_tags(s);
        let visible = stripped.text.trim();
        if visible.is_empty() {
            return Cleaned {
                text: String::new(),
                private: true,
                tag_regions: stripped.regions,
                redactions,
            };
        }
        let (redacted, counts) = self.redactor.get().redact(visible);
        Cleaned {
            text: redacted.trim().to_owned(),
            private: false,
            tag_regions: stripped.regions,
            redactions: counts,
        }
    }

    /// Images, then every string leaf independently: oversize → tags (untrimmed) → redaction.
    pub fn clean_json(&self, mut value: Value) -> (Value, CleanStats) {
        let mut stats = CleanStats {
            images_stripped: strip_images(&mut value),
            ..CleanStats::default()
        };
        self.clean_leaves(&mut value, &mut stats);
        (value, stats)
    }

    /// One string leaf: oversize → tags → redaction, no trimming.
    pub fn clean_leaf(&self, s: &str, stats: &mut CleanStats) -> String {
        if self.redactor.get().is_oversize(s) {
            stats.redactions.add("oversize", 1);
            return OVERSIZE_MARKER.to_owned();
        }
        let stripped = strip_tags(s);
        stats.tag_regions += stripped.regions;
        let (redacted, counts) = self.redactor.get().redact(&stripped.text);
        stats.redactions.merge(&counts);
        redacted
    }

    fn clean_leaves(&self, value: &mut Value, stats: &mut CleanStats) {
        match value {
            Value::String(text) => *text = self.clean_leaf(text, stats),
            Value::Array(items) => {
                let mut pem = PemRun::default();
                for item in items.iter_mut() {
                    if let Value::String(text) = item
                        && self.redactor.get().is_enabled()
                        && pem.step(text)
                    {
                        *text = PEM_MARKER.to_owned();
                        stats.redactions.add("private_key_pem", 1);
                        continue;
                    }
                    self.clean_leaves(item, stats);
                }
            }
            Value::Object(object) => {
                let redactor = self.redactor.get();
                if redactor.is_enabled() {
                    self.clean_keys(object, stats);
                }
                for (key, item) in object.iter_mut() {
                    if let Value::String(text) = item
                        && redactor.is_enabled()
                        && is_secret_key(key)
                        && is_secret_value(text)
                    {
                        *text = ASSIGNMENT_MARKER.to_owned();
                        stats.redactions.add("assignment", 1);
                        continue;
                    }
                    self.clean_leaves(item, stats);
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }

    /// Object keys through the redactor; a key that changes is renamed in place (order kept).
    fn clean_keys(&self, object: &mut serde_json::Map<String, Value>, stats: &mut CleanStats) {
        let redactor = self.redactor.get();
        let changed: Vec<(String, String, RedactionCounts)> = object
            .keys()
            .filter_map(|k| {
                let (clean, counts) = redactor.redact(k);
                (clean != *k).then(|| (k.clone(), clean, counts))
            })
            .collect();
        if changed.is_empty() {
            return;
        }
        let entries = std::mem::take(object);
        for (k, v) in entries {
            match changed.iter().find(|(old, _, _)| *old == k) {
                Some((_, clean, counts)) => {
                    stats.redactions.merge(counts);
                    object.insert(clean.clone(), v);
                }
                None => {
                    object.insert(k, v);
                }
            }
        }
    }
}

const PEM_MARKER: &str = "<redacted type='private_key_pem'/>";
const ASSIGNMENT_MARKER: &str = "<redacted type='assignment'/>";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::redact::RedactConfig;
    use serde_json::json;

    #[test]
    fn t10_leaf_is_not_trimmed() {
        let (value, stats) = Privacy::default().clean_json(json!({"content":"<private>secret</private> public"}));
        assert_eq!(value, json!({"content":" public"}));
        assert_eq!(stats.tag_regions, 1);
    }

    #[test]
    fn nested_array_leaves_and_keys_are_redacted() {
        let input = json!({"AKIAIOSFODNN7EXAMPLE": {"items": [1, ["x", "key=AKIAIOSFODNN7EXAMPLE"]]}});
        let (value, stats) = Privacy::default().clean_json(input);
        let expected = json!({"<redacted type='aws_access_key'/>": {"items": [1, ["x", "key=<redacted type='aws_access_key'/>"]]}});
        assert_eq!(value, expected);
        assert_eq!(stats.redactions.get("aws_access_key"), 2);
    }

    #[test]
    fn issue_13_secret_keys_and_split_pem_keys() {
        let input = json!({
            "password": "hunter2",
            "token_count": "12",
            "lines": ["+-----BEGIN PRIVATE KEY-----", "+MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", "+-----END PRIVATE KEY-----", "+ok"],
        });
        let (value, stats) = Privacy::default().clean_json(input);
        assert_eq!(value["password"], "<redacted type='assignment'/>");
        assert_eq!(value["token_count"], "12");
        assert_eq!(value["lines"][1], PEM_MARKER);
        assert_eq!(value["lines"][2], PEM_MARKER);
        assert_eq!(value["lines"][3], "+ok");
        assert!(
            value["lines"][0].as_str().unwrap().starts_with("+<redacted"),
            "{}",
            value["lines"][0]
        );
        assert_eq!(stats.redactions.get("private_key_pem"), 3);
    }

    #[test]
    fn regions_never_span_leaves() {
        let (value, _) = Privacy::default().clean_json(json!(["a <private>open", "still visible"]));
        assert_eq!(value, json!(["a ", "still visible"]));
    }

    #[test]
    fn images_are_stripped_before_leaves() {
        let data = "QUJD".repeat(20);
        let (value, stats) = Privacy::default().clean_json(json!([{"type":"image","data": data}, "ok"]));
        assert_eq!(value, json!(["<image_omitted media_type=\"image/*\" approx_bytes=\"60\"/>", "ok"]));
        assert_eq!(stats.images_stripped, 1);
    }

    #[test]
    fn oversize_leaf_and_text() {
        let huge = format!("<private>{}", "a".repeat(1_000_001));
        let (value, stats) = Privacy::default().clean_json(json!({ "big": huge }));
        assert_eq!(value, json!({ "big": OVERSIZE_MARKER }));
        assert_eq!(stats.redactions.get("oversize"), 1);
        let cleaned = Privacy::default().clean_text(&huge);
        assert_eq!((cleaned.text.as_str(), cleaned.private), (OVERSIZE_MARKER, false));
        let (off, _) = Redactor::new(&RedactConfig {
            redact: false,
            ..RedactConfig::default()
        });
        assert!(Privacy::new(off).clean_text(&huge).private);
    }

    #[test]
    fn text_order_tags_trim_redact() {
        let privacy = Privacy::default();
        let cleaned = privacy.clean_text("  before <private>x</private> AKIAIOSFODNN7EXAMPLE \n");
        assert_eq!(cleaned.text, "before  <redacted type='aws_access_key'/>");
        assert_eq!((cleaned.private, cleaned.tag_regions, cleaned.redactions.total()), (false, 1, 1));
        let t14 = privacy.clean_text("<private>all of it</private>");
        assert_eq!((t14.text.as_str(), t14.private), ("", true));
        assert_eq!(privacy.clean_text("before <private>never closed").text, "before");
        assert_eq!(privacy.clean_text("if a < b then <private>c</private>").text, "if a < b then");
    }
}
