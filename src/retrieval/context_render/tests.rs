//! Exact text of docs/spec/retrieval.md §1.5 and the conformance cases K3, K9, K10.

use super::*;
use crate::modes::load_mode;

const H: i64 = 3_600_000;
const M: i64 = 60_000;
/// 2026-08-18T00:00Z.
const AUG18: i64 = 1_787_011_200_000;

fn mode() -> Mode {
    load_mode("code", &[]).0
}

fn pdt() -> Zone {
    Zone::Fixed {
        offset_s: -7 * 3600,
        abbrev: "PDT".into(),
    }
}

fn obs(id: i64, at: i64, ty: &str, title: &str, read: usize, work: i64) -> Observation {
    let record = crate::store::observation_record::ObservationRecord {
        obs_type: ty.into(),
        title: Some(title.into()),
        narrative: Some("n".repeat(read * 4 - title.chars().count())),
        facts: "[]".into(),
        discovery_tokens: work,
        created_at_epoch: at,
        memory_session_id: "m".into(),
        ..Default::default()
    };
    Observation { id, record }
}

fn opts(max: usize) -> RenderOptions {
    RenderOptions {
        full_count: 0,
        full_field_facts: false,
        show_stats: true,
        max_chars: max,
    }
}

#[test]
fn spec_example_exact_text() {
    // Local PDT times: Aug 18 9:14a (twice), 11:40a; Aug 19 2:40p; now Aug 19 3:25p.
    let local = |day: i64, h: i64, m: i64| AUG18 + day * 24 * H + (h + 7) * H + m * M;
    let data = ContextData {
        primary: "acme-api".into(),
        observations: vec![
            obs(
                4411,
                local(0, 9, 14),
                "discovery",
                "Login handler lacks per-IP throttling",
                418,
                200_000,
            ),
            obs(
                4412,
                local(0, 9, 14) + 20_000,
                "feature",
                "Token-bucket limiter added to auth middleware",
                418,
                200_000,
            ),
            obs(
                4420,
                local(1, 14, 40),
                "bugfix",
                "Limiter keyed on X-Forwarded-For behind proxy",
                418,
                12_330,
            ),
        ],
        summaries: vec![Summary {
            id: 812,
            request: Some("Add rate limiting to login endpoint".into()),
            created_at_epoch: local(0, 11, 40),
            ..Summary::default()
        }],
        last_summary: None,
        degraded: None,
    };
    let out = render_context(&data, &mode(), &opts(10_000), &pdt(), local(1, 15, 25));
    let want = "# [acme-api] recent context, 2026-08-19 3:25pm PDT
Mode: Code Development (code)

Legend: ◎summary ●bugfix ◆feature ↻refactor ✓change ○discovery ⚖decision ⚠security_alert ⚷security_note ⊘sensitive
Format: ID TIME TYPE TITLE — summaries are S<id>
Fetch details: get_observations([IDs]) | Search: search(query) | Around an item: timeline(anchor=ID)

Stats: 3 obs (1,254t read) | 412,330t work | 100% savings

### Aug 18, 2026
4411 9:14a ○ Login handler lacks per-IP throttling [llm]
4412 \" ◆ Token-bucket limiter added to auth middleware [llm]
S812 11:40a ◎ Add rate limiting to login endpoint [llm]
### Aug 19, 2026
4420 2:40p ● Limiter keyed on X-Forwarded-For behind proxy [llm]

Access 412k tokens of past work via get_observations([IDs]) or search.";
    assert_eq!(out.text, want);
    assert_eq!((out.observations, out.summaries), (3, 1));
}

#[test]
fn k9_welcome_for_empty_project() {
    let data = ContextData {
        primary: "acme".into(),
        ..ContextData::default()
    };
    let out = render_context(&data, &mode(), &opts(10_000), &Zone::Utc, AUG18);
    assert_eq!(
        out.text,
        "# [acme] recent context, 2026-08-18 12:00am UTC\nNo memories for this project yet; this session is being recorded."
    );
}

#[test]
fn k10_no_work_tokens_no_footer_and_last_summary_block() {
    let data = ContextData {
        primary: "acme".into(),
        observations: (1..=3).map(|i| obs(i, AUG18 + i * H, "change", "t", 80, 0)).collect(),
        summaries: Vec::new(),
        last_summary: Some(Summary {
            id: 9,
            learned: Some("  it\nworks ".into()),
            next_steps: Some("ship".into()),
            created_at_epoch: AUG18 + 5 * H,
            ..Summary::default()
        }),
        degraded: Some("failed rows: 2".into()),
    };
    let out = render_context(&data, &mode(), &opts(10_000), &Zone::Utc, AUG18 + 6 * H);
    assert!(
        out.text.contains(
            "\n\nStats: 3 obs (240t read)\nNote: memd observer degraded (failed rows: 2); see memd status.\n\n### Aug 18, 2026\n"
        )
    );
    assert!(
        out.text
            .ends_with("\n\nLast session summary S9:\n**Learned**: it works\n**Next Steps**: ship"),
        "{}",
        out.text
    );
    assert!(!out.text.contains("Access "));
    assert!(!out.text.contains("\n\n\n"));
}

#[test]
fn k3_cap_keeps_newest_rows_and_frame() {
    let title = "x".repeat(150);
    let data = ContextData {
        primary: "acme".into(),
        observations: (1..=200).map(|i| obs(i, AUG18 + i * M, "change", &title, 100, 1_000)).collect(),
        ..ContextData::default()
    };
    let out = render_context(&data, &mode(), &opts(10_000), &Zone::Utc, AUG18 + 300 * M);
    assert!(utf16_len(&out.text) <= 10_000);
    assert!(out.observations < 200 && out.observations > 10);
    assert!(out.text.contains("\n200 "), "newest row kept");
    assert!(!out.text.contains("\n1 "), "oldest row dropped");
    assert!(out.text.starts_with("# [acme] recent context"));
    assert!(out.text.contains("Legend: ◎summary"));
    assert!(out.text.ends_with("of past work via get_observations([IDs]) or search."));
    assert!(out.text.contains(&format!("Stats: {} obs", out.observations)));
    // Dropping one more row than needed is never done: one more row would not fit.
    let fewer = ContextData {
        observations: data.observations[200 - out.observations - 1..].to_vec(),
        ..data.clone()
    };
    let bigger = render_context(&fewer, &mode(), &opts(100_000), &Zone::Utc, AUG18 + 300 * M);
    assert!(utf16_len(&bigger.text) > 10_000);
}

#[test]
fn tiny_cap_cuts_text() {
    let data = ContextData {
        primary: "acme".into(),
        observations: vec![obs(1, AUG18, "change", "t", 10, 0)],
        ..ContextData::default()
    };
    let out = render_context(&data, &mode(), &opts(50), &Zone::Utc, AUG18);
    assert_eq!(utf16_len(&out.text), 50);
    assert!(out.text.ends_with('…'));
    assert_eq!(out.observations, 0);
}

#[test]
fn full_rows_show_narrative() {
    let mut o = obs(7, AUG18, "bugfix", "Fixed it", 10, 0);
    o.record.narrative = Some("line one\nline two".into());
    let data = ContextData {
        primary: "acme".into(),
        observations: vec![o],
        ..ContextData::default()
    };
    let mut ro = opts(10_000);
    ro.full_count = 1;
    let out = render_context(&data, &mode(), &ro, &Zone::Utc, AUG18);
    assert!(
        out.text.contains("**7** 12:00a ● **Fixed it** [llm]\nline one line two"),
        "{}",
        out.text
    );
}
