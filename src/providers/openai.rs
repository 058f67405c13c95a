//! Any OpenAI-compatible chat server (`POST <base>/chat/completions`): OpenAI, OpenRouter,
//! Ollama, vLLM, LM Studio. Part A is the system message; the key is optional (local servers).

use std::time::Duration;

use serde_json::{Value, json};

use super::{CallError, LlmReply, LlmRequest, MAX_OUTPUT_TOKENS, Role, http_client, post_json};
use crate::config::Secret;

#[derive(Debug, Clone)]
pub struct OpenAi {
    pub url: String,
    key: Option<Secret>,
    pub model: String,
    client: reqwest::Client,
}

impl OpenAi {
    pub fn new(base_url: &str, key: Option<Secret>, model: String, timeout: Duration) -> Self {
        Self {
            url: format!("{}/chat/completions", base_url.trim_end_matches('/')),
            key,
            model,
            client: http_client(timeout),
        }
    }

    pub fn body(&self, req: &LlmRequest) -> Value {
        let mut messages = vec![json!({"role": "system", "content": req.system})];
        messages.extend(req.turns.iter().map(|t| {
            let role = if t.role == Role::User { "user" } else { "assistant" };
            json!({"role": role, "content": t.text})
        }));
        json!({"model": self.model, "max_tokens": MAX_OUTPUT_TOKENS, "messages": messages})
    }

    pub async fn call(&self, req: &LlmRequest) -> Result<LlmReply, CallError> {
        let bearer = self.key.as_ref().map(|k| format!("Bearer {}", k.expose()));
        let headers: Vec<(&str, &str)> = bearer.iter().map(|b| ("authorization", b.as_str())).collect();
        let v = post_json(&self.client, &self.url, &headers, &self.body(req)).await?;
        parse(&v)
    }
}

pub fn parse(v: &Value) -> Result<LlmReply, CallError> {
    let choice = &v["choices"][0];
    if choice.is_null() {
        return Err(CallError::Transient("answer without choices".into()));
    }
    let text = choice["message"]["content"].as_str().unwrap_or("").to_string();
    let u = &v["usage"];
    Ok(LlmReply {
        text,
        input_tokens: u["prompt_tokens"].as_i64().unwrap_or(0),
        output_tokens: u["completion_tokens"].as_i64().unwrap_or(0),
        // OpenAI caches long prompt prefixes by itself and says how much it read.
        cached_input_tokens: u["prompt_tokens_details"]["cached_tokens"].as_i64().unwrap_or(0),
        session_id: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_first_and_usage_read() {
        let p = OpenAi::new("http://h/v1/", None, "m".into(), Duration::from_secs(1));
        assert_eq!(p.url, "http://h/v1/chat/completions");
        let b = p.body(&LlmRequest {
            system: "A".into(),
            turns: vec![],
        });
        assert_eq!(b["messages"][0]["role"], "system");
        let r = parse(&json!({"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":5,"completion_tokens":1}})).unwrap();
        assert_eq!((r.input_tokens, r.output_tokens), (5, 1));
    }
}
