//! The requests of a knowledge agent's conversation, per kind of provider. The `claude` CLI keeps
//! the conversation itself: the prime sends the corpus as the first turn and each query resumes
//! the session with the question alone. The HTTP providers keep nothing: the corpus goes into the
//! system text — the same bytes on every call, which the Anthropic provider marks cacheable, so a
//! second query reads it from the prompt cache — and memd sends the turns so far with each
//! question (the prime's pair and the last [`KEPT_EXCHANGES`] questions and answers).

use super::corpus::CorpusFile;
use super::files::KeptConversation;
use super::render::{corpus_text, prime_prompt, system_prompt};
use crate::providers::{LlmRequest, Role, Turn};

/// Earlier questions and answers sent along with a new question (HTTP providers).
pub const KEPT_EXCHANGES: usize = 8;

fn turn(role: Role, text: &str) -> Turn {
    Turn {
        role,
        text: text.to_string(),
    }
}

/// The system text: the instructions, and for the HTTP providers the corpus after them.
fn system(c: &CorpusFile, keeps_sessions: bool) -> String {
    match keeps_sessions {
        true => system_prompt(c),
        false => format!("{}\n\n{}", system_prompt(c), corpus_text(c)),
    }
}

pub fn prime_request(c: &CorpusFile, keeps_sessions: bool) -> LlmRequest {
    LlmRequest {
        system: system(c, keeps_sessions),
        turns: vec![turn(Role::User, &prime_prompt(c, keeps_sessions))],
    }
}

pub fn query_request(c: &CorpusFile, kept: Option<&KeptConversation>, question: &str, keeps_sessions: bool) -> LlmRequest {
    let mut turns = Vec::new();
    if let (false, Some(k)) = (keeps_sessions, kept) {
        for (role, text) in &k.turns {
            turns.push(turn(if role == "assistant" { Role::Assistant } else { Role::User }, text));
        }
    }
    turns.push(turn(Role::User, question));
    LlmRequest {
        system: system(c, keeps_sessions),
        turns,
    }
}

/// The conversation after an answer: the prime's pair, then the last exchanges.
pub fn remember(kept: &mut KeptConversation, question: &str, answer: &str) {
    kept.turns.push(("user".into(), question.into()));
    kept.turns.push(("assistant".into(), answer.into()));
    let keep = 2 + 2 * KEPT_EXCHANGES;
    if kept.turns.len() > keep {
        kept.turns.drain(2..kept.turns.len() - (keep - 2));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knowledge::corpus::CorpusObservation;

    fn corpus() -> CorpusFile {
        CorpusFile {
            name: "c".into(),
            observations: vec![CorpusObservation {
                id: 3,
                title: "the fact".into(),
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    #[test]
    fn the_cli_gets_the_corpus_as_its_first_turn_and_http_providers_as_the_cached_system_text() {
        let cli = prime_request(&corpus(), true);
        assert!(!cli.system.contains("## #3") && cli.turns[0].text.contains("## #3"));
        let http = prime_request(&corpus(), false);
        assert!(http.system.contains("## #3") && !http.turns[0].text.contains("## #3"));
        let kept = KeptConversation {
            turns: vec![("user".into(), "ack?".into()), ("assistant".into(), "ok".into())],
            ..Default::default()
        };
        let q = query_request(&corpus(), Some(&kept), "why?", false);
        assert_eq!(q.system, http.system, "the same prefix on every call");
        assert_eq!(q.turns.iter().map(|t| t.text.as_str()).collect::<Vec<_>>(), ["ack?", "ok", "why?"]);
        assert_eq!(query_request(&corpus(), Some(&kept), "why?", true).turns.len(), 1);
    }

    #[test]
    fn only_the_prime_and_the_last_exchanges_are_kept() {
        let mut k = KeptConversation {
            turns: vec![("user".into(), "prime".into()), ("assistant".into(), "ack".into())],
            ..Default::default()
        };
        for i in 0..20 {
            remember(&mut k, &format!("q{i}"), &format!("a{i}"));
        }
        assert_eq!(k.turns.len(), 2 + 2 * KEPT_EXCHANGES);
        assert_eq!((k.turns[1].1.as_str(), k.turns[2].1.as_str()), ("ack", "q12"));
        assert_eq!(k.turns.last().unwrap().1, "a19");
    }
}
