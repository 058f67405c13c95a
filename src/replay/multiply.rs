//! Copies of a session with fresh ids (hooks.md §6 rule 8): `-<suffix>` appended to every
//! `session_id` and `tool_use_id`, so a repeated replay makes new sessions instead of duplicates.

use serde_json::Value;

use super::event::SessionEvents;

/// The session with `-<suffix>` appended to its ids.
pub fn with_suffix(session: &SessionEvents, suffix: &str) -> SessionEvents {
    let mut copy = session.clone();
    copy.session_id = format!("{}-{suffix}", session.session_id);
    for e in &mut copy.events {
        for key in ["session_id", "tool_use_id"] {
            if let Some(Value::String(s)) = e.payload.get_mut(key) {
                s.push('-');
                s.push_str(suffix);
            }
        }
    }
    copy
}

/// `k` copies (suffixes `r1`..`rk`); `k <= 1` keeps the original ids.
pub fn multiply(sessions: &[SessionEvents], k: usize) -> Vec<SessionEvents> {
    if k <= 1 {
        return sessions.to_vec();
    }
    (1..=k)
        .flat_map(|i| sessions.iter().map(move |s| with_suffix(s, &format!("r{i}"))))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::event::{EventKind, HookEvent, Origin};
    use serde_json::json;

    #[test]
    fn suffixes_session_and_tool_ids_only() {
        let s = SessionEvents {
            session_id: "s".into(),
            events: vec![HookEvent {
                kind: EventKind::PostToolUse,
                origin: Origin::Main,
                at_ms: 0,
                payload: json!({"session_id":"s","tool_use_id":"t","tool_name":"Bash"}),
            }],
            ..Default::default()
        };
        let copies = multiply(std::slice::from_ref(&s), 2);
        assert_eq!(copies.len(), 2);
        assert_eq!(copies[1].session_id, "s-r2");
        assert_eq!(
            copies[1].events[0].payload,
            json!({"session_id":"s-r2","tool_use_id":"t-r2","tool_name":"Bash"})
        );
    }
}
