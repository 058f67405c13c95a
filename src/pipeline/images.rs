//! Image stripping over tool JSON (`docs/spec/pipeline.md` §5.2): image content blocks, `data:image`
//! URIs inside string leaves, and bare base64 image strings become an `<image_omitted …/>` marker.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Map, Value};

/// Shortest base64 run that makes a `type: image` object an image payload.
const BLOCK_PAYLOAD_MIN_CHARS: usize = 64;
/// Shortest bare base64 string leaf checked for an image signature.
const BARE_PAYLOAD_MIN_CHARS: usize = 1024;
/// PNG, JPEG, GIF, WEBP as base64.
const BARE_SIGNATURES: [&str; 4] = ["iVBORw0KGgo", "/9j/", "R0lGOD", "UklGR"];
const UNKNOWN_MEDIA_TYPE: &str = "image/*";
const MEDIA_TYPE_MAX_CHARS: usize = 100;

static DATA_URI: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i:data:image/)([A-Za-z0-9.+-]+)(?i:;base64,)([A-Za-z0-9+/=_-]+)").expect("data URI pattern compiles"));

fn is_base64_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=' | '_' | '-')
}

/// Payload chars that count towards the decoded size: no whitespace, no `=`.
fn payload_chars(payload: &str) -> usize {
    payload.chars().filter(|&c| is_base64_char(c) && c != '=').count()
}

/// Number of base64 chars, when `s` holds nothing but base64 and whitespace.
fn base64_len(s: &str) -> Option<usize> {
    let mut n = 0;
    for c in s.chars() {
        if is_base64_char(c) {
            n += 1;
        } else if !c.is_whitespace() {
            return None;
        }
    }
    Some(n)
}

/// `<image_omitted media_type="M" approx_bytes="B"/>`; `M` is reduced to a safe charset.
pub fn marker(media_type: &str, payload: &str) -> String {
    let media_type: String = media_type
        .chars()
        .filter(|&c| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '+' | '-' | '*'))
        .take(MEDIA_TYPE_MAX_CHARS)
        .collect();
    let media_type = if media_type.is_empty() {
        UNKNOWN_MEDIA_TYPE
    } else {
        media_type.as_str()
    };
    let approx_bytes = payload_chars(payload) as u64 * 3 / 4;
    format!("<image_omitted media_type=\"{media_type}\" approx_bytes=\"{approx_bytes}\"/>")
}

/// Replaces every image in `value` in place and returns how many were stripped.
pub fn strip_images(value: &mut Value) -> usize {
    match value {
        Value::Object(object) => {
            if let Some(replacement) = image_block_marker(object) {
                *value = Value::String(replacement);
                return 1;
            }
            object.values_mut().map(strip_images).sum()
        }
        Value::Array(items) => items.iter_mut().map(strip_images).sum(),
        Value::String(text) => {
            let (stripped, n) = strip_string_images(text);
            if let Cow::Owned(stripped) = stripped {
                *text = stripped;
            }
            n
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => 0,
    }
}

/// Data URIs anywhere in the string, or the whole string as a bare base64 image; with the count.
pub fn strip_string_images(s: &str) -> (Cow<'_, str>, usize) {
    if s.chars().nth(BARE_PAYLOAD_MIN_CHARS - 1).is_some()
        && base64_len(s).is_some()
        && BARE_SIGNATURES.iter().any(|signature| s.trim_start().starts_with(signature))
    {
        return (Cow::Owned(marker(UNKNOWN_MEDIA_TYPE, s)), 1);
    }
    let mut out = String::new();
    let mut kept_from = 0;
    let mut n = 0;
    for captures in DATA_URI.captures_iter(s) {
        let (Some(whole), Some(subtype), Some(payload)) = (captures.get(0), captures.get(1), captures.get(2)) else {
            continue;
        };
        out.push_str(&s[kept_from..whole.start()]);
        out.push_str(&marker(&format!("image/{}", subtype.as_str()), payload.as_str()));
        kept_from = whole.end();
        n += 1;
    }
    if n == 0 {
        return (Cow::Borrowed(s), 0);
    }
    out.push_str(&s[kept_from..]);
    (Cow::Owned(out), n)
}

/// The marker for an object with `type: image` holding a base64 payload at any depth.
fn image_block_marker(object: &Map<String, Value>) -> Option<String> {
    let is_image = object
        .get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| t.eq_ignore_ascii_case("image"));
    if !is_image {
        return None;
    }
    let payload = longest_base64_string(object.values())?;
    let declared = [
        object.get("source").and_then(|source| source.get("media_type")),
        object.get("mimeType"),
        object.get("media_type"),
        object.get("file").and_then(|file| file.get("type")),
    ];
    let media_type = declared.into_iter().flatten().find_map(Value::as_str).unwrap_or(UNKNOWN_MEDIA_TYPE);
    Some(marker(media_type, payload))
}

/// The longest string of at least [`BLOCK_PAYLOAD_MIN_CHARS`] base64 chars among `values`, at any depth.
fn longest_base64_string<'a>(values: impl Iterator<Item = &'a Value>) -> Option<&'a str> {
    let mut best: Option<(usize, &str)> = None;
    for value in values {
        let candidate = match value {
            Value::String(s) => base64_len(s).filter(|&n| n >= BLOCK_PAYLOAD_MIN_CHARS).map(|n| (n, s.as_str())),
            Value::Array(items) => longest_base64_string(items.iter()).map(|s| (payload_chars(s), s)),
            Value::Object(object) => longest_base64_string(object.values()).map(|s| (payload_chars(s), s)),
            Value::Null | Value::Bool(_) | Value::Number(_) => None,
        };
        if candidate.is_some_and(|(n, _)| best.is_none_or(|(best_n, _)| n > best_n)) {
            best = candidate;
        }
    }
    best.map(|(_, s)| s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn base64(n: usize) -> String {
        "QUJD".repeat(n / 4 + 1).chars().take(n).collect()
    }

    #[test]
    fn i1_content_block_becomes_marker() {
        let mut value = json!({"type":"image","source":{"type":"base64","media_type":"image/png","data": base64(4000)}});
        assert_eq!(strip_images(&mut value), 1);
        assert_eq!(value, json!("<image_omitted media_type=\"image/png\" approx_bytes=\"3000\"/>"));
    }

    #[test]
    fn i2_data_uri_and_block_without_payload() {
        let mut value = json!(format!("see data:image/jpeg;base64,/9j/{} end", base64(396)));
        assert_eq!(strip_images(&mut value), 1);
        assert_eq!(
            value,
            json!("see <image_omitted media_type=\"image/jpeg\" approx_bytes=\"300\"/> end")
        );
        let mut alt = json!({"type":"image","alt":"diagram"});
        assert_eq!(strip_images(&mut alt), 0);
        assert_eq!(alt, json!({"type":"image","alt":"diagram"}));
    }

    #[test]
    fn nested_blocks_and_declared_types() {
        let mut value = json!({"content":[
            {"type":"text","text":"hi"},
            {"type":"IMAGE","mimeType":"image/webp","data": format!("{}==\n", base64(100))},
            {"type":"image","file":{"type":"image/gif","base64": base64(80)}},
            {"type":"image","data": base64(64)}
        ]});
        assert_eq!(strip_images(&mut value), 3);
        assert_eq!(value["content"][0], json!({"type":"text","text":"hi"}));
        assert_eq!(
            value["content"][1],
            json!("<image_omitted media_type=\"image/webp\" approx_bytes=\"75\"/>")
        );
        assert_eq!(
            value["content"][2],
            json!("<image_omitted media_type=\"image/gif\" approx_bytes=\"60\"/>")
        );
        assert_eq!(
            value["content"][3],
            json!("<image_omitted media_type=\"image/*\" approx_bytes=\"48\"/>")
        );
    }

    #[test]
    fn bare_base64_images_need_signature_and_length() {
        let png = format!("iVBORw0KGgo{}", base64(1013));
        let mut value = json!([png, format!("AAAA{}", base64(2000)), format!("iVBORw0KGgo{}", base64(100))]);
        assert_eq!(strip_images(&mut value), 1);
        assert_eq!(value[0], json!("<image_omitted media_type=\"image/*\" approx_bytes=\"768\"/>"));
        assert!(value[1].as_str().is_some_and(|s| s.starts_with("AAAA")));
    }

    #[test]
    fn hostile_media_type_is_sanitised() {
        let mut value = json!({"type":"image","media_type":"\"/><script>","data": base64(64)});
        strip_images(&mut value);
        assert_eq!(value, json!("<image_omitted media_type=\"/script\" approx_bytes=\"48\"/>"));
    }
}
