use super::*;
use crate::modes::load_mode;
use crate::observer::types::BatchMeta;
use crate::observer::types::ToolEvent;

fn batch(n: usize) -> Box<ClaimedBatch> {
    let events = (0..n)
        .map(|i| ToolEvent {
            row_id: i as i64 + 1,
            tool_name: if i == 0 { "Read".into() } else { "Bash".into() },
            tool_input: serde_json::json!({"file_path": "/r/src/a.rs", "command": "ls"}),
            tool_response: serde_json::json!({"stdout": "ok"}),
            is_error: false,
            cwd: Some("/r".into()),
            occurred_at_epoch: 1_000,
        })
        .collect();
    Box::new(ClaimedBatch {
        meta: BatchMeta {
            prompt_text: Some("fix it".into()),
            pending_ids: (1..=n as i64).collect(),
            ..BatchMeta::first_prompt((1, "memd-claude-s", "s"), "p", "/r", 0)
        },
        work: BatchWork::Observations(events),
    })
}

const CLAIMS_A_WRITE: &str = "<observation><type>change</type><title>Edited a</title>\
<files_read><file>src/a.rs</file></files_read><files_modified><file>src/a.rs</file></files_modified></observation>";

#[test]
fn claimed_modifications_without_write_evidence_are_dropped() {
    let (mode, _) = load_mode("code", &[]);
    let mut job = Job::new(batch(2), 16_000);
    assert_eq!(job.apply_reply(CLAIMS_A_WRITE, &mode), Step::Next);
    job.advance();
    let (_, out, delta) = job.finish("anthropic", "m", &mode, &Privacy::default());
    assert_eq!(out.origin, "observer");
    assert!(out.observations[0].files_modified.is_empty());
    assert_eq!(out.observations[0].files_read, vec!["src/a.rs".to_string()]);
    assert_eq!(delta.calls, -1, "no call recorded here; the stored batch counts it");
}

#[test]
fn prose_is_reasked_once_with_the_reply_as_assistant_turn_then_goes_extractive() {
    let (mode, _) = load_mode("code", &[]);
    let mut job = Job::new(batch(2), 16_000);
    assert_eq!(job.apply_reply("Sure! Here is what happened.", &mode), Step::Reask);
    let req = job.request(&mode).unwrap();
    assert_eq!(req.turns.len(), 3);
    assert_eq!(req.turns[1].text, "Sure! Here is what happened.");
    assert_eq!(req.turns[2].text, CORRECTIVE_TURN);
    assert_eq!(job.apply_reply("Still prose.", &mode), Step::Extractive);
    job.part_extractive();
    let (_, out, _) = job.finish("anthropic", "m", &mode, &Privacy::default());
    assert_eq!(out.origin, "extractive");
    assert!(!out.observations.is_empty());
}

#[test]
fn overflow_halves_the_batch_then_the_field_limit_then_goes_extractive() {
    let mut job = Job::new(batch(3), 16_000);
    job.on_overflow();
    let ranges: Vec<_> = job.parts.iter().map(|p| p.range.clone()).collect();
    assert_eq!(ranges, vec![0..1, 1..3]);
    for limit in [8_000, 4_000, 2_000] {
        job.on_overflow();
        assert_eq!(
            job.parts[0],
            Part {
                range: 0..1,
                field_max: limit
            }
        );
    }
    job.on_overflow();
    assert_eq!(job.extractive_ranges, vec![0..1]);
    assert_eq!(job.parts.len(), 1);
}
