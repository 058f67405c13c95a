//! Where `platformSource` comes from (docs/spec/api.md §2.5): query, body, then headers.

use std::collections::HashMap;

use axum::http::HeaderMap;

use crate::pipeline::platform::normalize_platform_source;

pub fn platform_source(query: &HashMap<String, String>, body: Option<&str>, headers: &HeaderMap) -> String {
    let header = |n: &str| headers.get(n).and_then(|v| v.to_str().ok()).map(str::to_string);
    let raw = [
        query.get("platformSource").cloned(),
        query.get("platform_source").cloned(),
        body.map(str::to_string),
        header("x-platform-source"),
        header("x-claude-mem-platform-source"),
    ]
    .into_iter()
    .flatten()
    .find(|s| !s.trim().is_empty());
    normalize_platform_source(raw.as_deref())
}
