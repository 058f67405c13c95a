//! Where `platformSource` comes from (docs/spec/api.md §2.5): query, body, then headers.

use std::collections::HashMap;

use axum::http::HeaderMap;

use crate::pipeline::platform::normalize_platform_source;

pub fn platform_source(query: &HashMap<String, String>, body: Option<&str>, headers: &HeaderMap) -> String {
    let raw = [
        query.get("platformSource").map(String::as_str),
        query.get("platform_source").map(String::as_str),
        body,
    ]
    .into_iter()
    .flatten()
    .find(|s| !s.trim().is_empty())
    .or_else(|| header_platform(headers));
    normalize_platform_source(raw)
}

/// The platform named by a request header (`x-platform-source`, else claude-mem's), not normalised.
pub fn header_platform(headers: &HeaderMap) -> Option<&str> {
    ["x-platform-source", "x-claude-mem-platform-source"]
        .iter()
        .find_map(|n| headers.get(*n).and_then(|v| v.to_str().ok()).filter(|v| !v.trim().is_empty()))
}
