//! Google Gemini (`POST <base>/v1beta/models/<model>:generateContent`). Part A is the
//! `systemInstruction`; the key goes in the `x-goog-api-key` header, never in the URL.

use std::time::Duration;

use serde_json::{Value, json};

use super::{CallError, LlmReply, LlmRequest, MAX_OUTPUT_TOKENS, Role, http_client, post_json};
use crate::config::Secret;

#[derive(Debug, Clone)]
pub struct Gemini {
    pub url: String,
    key: Secret,
    pub model: String,
    client: reqwest::Client,
}

impl Gemini {
    pub fn new(base_url: &str, key: Secret, model: String, timeout: Duration) -> Self {
        Self {
            url: format!("{}/v1beta/models/{model}:generateContent", base_url.trim_end_matches('/')),
            key,
            model,
            client: http_client(timeout),
        }
    }

    pub fn body(&self, req: &LlmRequest) -> Value {
        let contents: Vec<Value> = req
            .turns
            .iter()
            .map(|t| {
                let role = if t.role == Role::User { "user" } else { "model" };
                json!({"role": role, "parts": [{"text": t.text}]})
            })
            .collect();
        json!({
            "systemInstruction": {"parts": [{"text": req.system}]},
            "contents": contents,
            "generationConfig": {"maxOutputTokens": MAX_OUTPUT_TOKENS},
        })
    }

    pub async fn call(&self, req: &LlmRequest) -> Result<LlmReply, CallError> {
        let v = post_json(&self.client, &self.url, &[("x-goog-api-key", self.key.expose())], &self.body(req)).await?;
        parse(&v)
    }
}

pub fn parse(v: &Value) -> Result<LlmReply, CallError> {
    let candidate = &v["candidates"][0];
    if candidate.is_null() {
        return Err(CallError::Transient("answer without candidates".into()));
    }
    let text: String = candidate["content"]["parts"]
        .as_array()
        .map(|parts| parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join(""))
        .unwrap_or_default();
    let u = &v["usageMetadata"];
    Ok(LlmReply {
        text,
        input_tokens: u["promptTokenCount"].as_i64().unwrap_or(0),
        output_tokens: u["candidatesTokenCount"].as_i64().unwrap_or(0),
        cached_input_tokens: u["cachedContentTokenCount"].as_i64().unwrap_or(0),
        session_id: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_names_the_model_and_parts_are_joined() {
        let p = Gemini::new("http://h", Secret::new("g-key").unwrap(), "gm".into(), Duration::from_secs(1));
        assert_eq!(p.url, "http://h/v1beta/models/gm:generateContent");
        assert!(!p.url.contains("g-key"));
        let r = parse(&json!({"candidates":[{"content":{"parts":[{"text":"a"},{"text":"b"}]}}],
            "usageMetadata":{"promptTokenCount":7,"candidatesTokenCount":2}}))
        .unwrap();
        assert_eq!((r.text.as_str(), r.input_tokens), ("ab", 7));
    }
}
