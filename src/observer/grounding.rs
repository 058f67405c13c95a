//! An LLM observer's names checked against the evidence (issue 35): a fact or concept that names
//! an identifier (snake_case, camelCase or PascalCase with an inner capital, 4+ characters) that
//! occurs nowhere in the batch's tool calls was made up, and is dropped — search would otherwise
//! send the user to an edit that never wrote it.

use std::collections::HashSet;

use serde_json::Value;

use super::extractive::symbols::identifiers;
use super::types::{ObservationDraft, ToolEvent};
use crate::pipeline::terms::is_word_char;

/// Every word of the events' inputs and responses.
pub fn batch_words(events: &[ToolEvent]) -> HashSet<String> {
    let mut out = HashSet::new();
    for e in events {
        collect(&e.tool_input, &mut out);
        collect(&e.tool_response, &mut out);
    }
    out
}

fn collect(v: &Value, out: &mut HashSet<String>) {
    match v {
        Value::String(s) => out.extend(s.split(|c: char| !is_word_char(c)).filter(|w| !w.is_empty()).map(str::to_owned)),
        Value::Array(a) => a.iter().for_each(|x| collect(x, out)),
        Value::Object(m) => m.values().for_each(|x| collect(x, out)),
        _ => {}
    }
}

/// Whether every identifier `text` names occurs in the batch.
fn grounded(text: &str, words: &HashSet<String>) -> bool {
    identifiers(text).all(|id| words.contains(id))
}

/// Drops the facts and concepts of `draft` naming an identifier the batch does not hold; returns
/// how many were dropped. A batch without events (a summary) checks nothing.
pub fn drop_ungrounded(draft: &mut ObservationDraft, words: &HashSet<String>) -> usize {
    if words.is_empty() {
        return 0;
    }
    let before = draft.facts.len() + draft.concepts.len();
    draft.facts.retain(|f| grounded(f, words));
    draft.concepts.retain(|c| grounded(c, words));
    before - draft.facts.len() - draft.concepts.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn facts_naming_identifiers_the_batch_never_wrote_are_dropped() {
        let e = ToolEvent {
            row_id: 1,
            tool_name: "Edit".into(),
            tool_input: json!({"file_path": "src/a.js", "new_string": "function debouncedUpdateTokens() {}"}),
            tool_response: json!({"ok": true}),
            is_error: false,
            cwd: None,
            occurred_at_epoch: 0,
        };
        let words = batch_words(&[e]);
        let mut d = ObservationDraft {
            facts: vec![
                "Added debouncedUpdateTokens to the tokenizer".into(),
                "Added renderTokenAndText as well".into(),
                "The change is small".into(),
            ],
            concepts: vec!["what-changed".into(), "debouncedUpdateTokens".into(), "made_up_name".into()],
            ..Default::default()
        };
        assert_eq!(drop_ungrounded(&mut d, &words), 2);
        assert_eq!(d.facts, ["Added debouncedUpdateTokens to the tokenizer", "The change is small"]);
        assert_eq!(d.concepts, ["what-changed", "debouncedUpdateTokens"]);
    }
}
