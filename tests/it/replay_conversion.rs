//! The replay counts of docs/spec/hooks.md §6 "Check" over the whole transcript set
//! (`MEMD_TRANSCRIPTS_DIR`).

use crate::support;
use std::collections::BTreeMap;

use memd::replay::convert::convert_file;
use memd::replay::event::{EventKind, Origin, SessionEvents};

fn count(sessions: &[SessionEvents], kind: EventKind, origin: Origin) -> usize {
    sessions.iter().map(|s| s.count(kind, Some(origin))).sum()
}

#[test]
fn counts_match_the_spec_check() {
    let Some(files) = support::transcripts::session_files() else {
        return;
    };
    let sessions: Vec<SessionEvents> = files.iter().map(|f| convert_file(f).expect("convert")).collect();
    assert_eq!(sessions.len(), 15);
    let sources: BTreeMap<String, usize> = sessions
        .iter()
        .flat_map(|s| &s.events)
        .filter(|e| e.kind == EventKind::SessionStart)
        .fold(BTreeMap::new(), |mut m, e| {
            *m.entry(e.payload["source"].as_str().unwrap_or("").to_string()).or_default() += 1;
            m
        });
    assert_eq!(
        sources,
        BTreeMap::from([("clear".into(), 2), ("compact".into(), 1), ("startup".into(), 13)])
    );
    use EventKind::*;
    use Origin::*;
    let main: Vec<usize> = [UserPromptSubmit, PreToolUse, PostToolUse, PostToolUseFailure, Stop, SessionEnd]
        .iter()
        .map(|k| count(&sessions, *k, Main))
        .collect();
    assert_eq!(main, [24, 462, 433, 12, 20, 15], "main: UPS, Pre, Post, Failure, Stop, End");
    let denials: u64 = sessions.iter().map(|s| s.dropped_main.denials).sum();
    let validation: u64 = sessions.iter().map(|s| s.dropped_main.validation_errors).sum();
    assert_eq!((denials, validation), (13, 4));
    let side: Vec<usize> = [PreToolUse, PostToolUse, PostToolUseFailure]
        .iter()
        .map(|k| count(&sessions, *k, Sidechain))
        .collect();
    assert_eq!(side, [156, 133, 10], "inline sidechains");
    assert_eq!(sessions.iter().map(|s| s.dropped_sidechain.validation_errors).sum::<u64>(), 13);
    let sub: Vec<usize> = [PreToolUse, PostToolUse, PostToolUseFailure]
        .iter()
        .map(|k| count(&sessions, *k, Subagent))
        .collect();
    assert_eq!(sub, [89, 86, 3], "subagent files");
    let exits = sessions
        .iter()
        .flat_map(|s| &s.events)
        .filter(|e| e.kind == SessionEnd && e.payload["reason"] == "prompt_input_exit")
        .count();
    assert_eq!(exits, 1);
    let spotter = sessions.iter().find(|s| s.transcript_path.contains("ae4a77f8")).expect("spotter");
    let all = |k| spotter.count(k, Some(Main));
    assert_eq!((all(SessionStart), all(PostToolUse), all(Stop)), (2, 230, 2));
}

/// Over the committed fixtures (always present): every `tool_use` block of a file becomes exactly
/// one PostToolUse or PostToolUseFailure event, or is counted as dropped (a denial or a
/// validation error), and every session starts.
#[test]
fn every_tool_use_of_the_fixtures_is_delivered_or_counted_as_dropped() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/transcripts");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 8);
    use EventKind::*;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let blocks = text
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|r| r["type"] == "assistant")
            .flat_map(|r| r["message"]["content"].as_array().cloned().unwrap_or_default())
            .filter(|b| b["type"] == "tool_use")
            .count();
        let s = convert_file(f).expect("convert");
        let delivered = s.count(PostToolUse, None) + s.count(PostToolUseFailure, None);
        let d = &s.dropped_main;
        let dropped = (d.denials + d.validation_errors + s.dropped_sidechain.denials + s.dropped_sidechain.validation_errors) as usize;
        assert_eq!(
            delivered + dropped,
            blocks,
            "{}: {delivered} delivered + {dropped} dropped",
            f.display()
        );
        assert!(s.count(SessionStart, Some(Origin::Main)) >= 1, "{}", f.display());
    }
}
