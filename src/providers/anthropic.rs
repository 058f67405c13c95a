//! The Anthropic Messages API (`POST <base>/v1/messages`). Part A is the system block, marked
//! cacheable with `cache_control` so repeated calls hit the provider's prompt cache.

use std::time::Duration;

use serde_json::{Value, json};

use super::{CallError, LlmReply, LlmRequest, MAX_OUTPUT_TOKENS, Role, http_client, post_json};
use crate::config::Secret;

pub const API_VERSION: &str = "2023-06-01";

#[derive(Debug, Clone)]
pub struct Anthropic {
    pub url: String,
    key: Secret,
    pub model: String,
    client: reqwest::Client,
}

impl Anthropic {
    pub fn new(base_url: &str, key: Secret, model: String, timeout: Duration) -> Self {
        Self {
            url: format!("{}/v1/messages", base_url.trim_end_matches('/')),
            key,
            model,
            client: http_client(timeout),
        }
    }

    pub fn body(&self, req: &LlmRequest) -> Value {
        let messages: Vec<Value> = req
            .turns
            .iter()
            .map(|t| {
                let role = if t.role == Role::User { "user" } else { "assistant" };
                json!({"role": role, "content": t.text})
            })
            .collect();
        json!({
            "model": self.model,
            "max_tokens": MAX_OUTPUT_TOKENS,
            "system": [{"type": "text", "text": req.system, "cache_control": {"type": "ephemeral"}}],
            "messages": messages,
        })
    }

    pub async fn call(&self, req: &LlmRequest) -> Result<LlmReply, CallError> {
        let headers = [("x-api-key", self.key.expose()), ("anthropic-version", API_VERSION)];
        let v = post_json(&self.client, &self.url, &headers, &self.body(req)).await?;
        parse(&v)
    }
}

/// Text blocks joined; input tokens include cache reads and writes.
pub fn parse(v: &Value) -> Result<LlmReply, CallError> {
    let blocks = v["content"]
        .as_array()
        .ok_or_else(|| CallError::Transient("answer without content".into()))?;
    let text: String = blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("");
    let u = &v["usage"];
    let n = |k: &str| u[k].as_i64().unwrap_or(0);
    Ok(LlmReply {
        text,
        input_tokens: n("input_tokens") + n("cache_read_input_tokens") + n("cache_creation_input_tokens"),
        output_tokens: n("output_tokens"),
        cached_input_tokens: n("cache_read_input_tokens"),
        session_id: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::Turn;

    #[test]
    fn part_a_is_a_cacheable_system_block_and_the_key_is_hidden() {
        let p = Anthropic::new(
            "http://h/",
            Secret::new("sk-ant-hidden").unwrap(),
            "m".into(),
            Duration::from_secs(1),
        );
        assert_eq!(p.url, "http://h/v1/messages");
        let req = LlmRequest {
            system: "A".into(),
            turns: vec![Turn {
                role: Role::User,
                text: "B".into(),
            }],
        };
        let b = p.body(&req);
        assert_eq!(b["system"][0]["cache_control"]["type"], "ephemeral");
        assert_eq!(b["messages"][0]["content"], "B");
        assert!(!format!("{p:?}").contains("sk-ant-hidden"));
        let reply =
            parse(&json!({"content":[{"type":"text","text":"<observation/>"}],"usage":{"input_tokens":3,"output_tokens":2}})).unwrap();
        assert_eq!(
            (reply.text.as_str(), reply.input_tokens, reply.output_tokens),
            ("<observation/>", 3, 2)
        );
    }
}
