//! Hostile inputs against the privacy stage (issue 5): nested and unclosed tags, 5 MB of
//! `<private>`, and near-miss candidates for every redaction pattern (inputs that would make a
//! backtracking engine explode). Each must finish well under 1 s; criterion reports the time.
//! Run: `cargo bench --bench privacy`.

use criterion::{Criterion, criterion_group, criterion_main};
use memd::pipeline::privacy::Privacy;
use memd::pipeline::redact::{RedactConfig, Redactor};
use memd::pipeline::tags::strip_tags;

fn hostile_tags() -> Vec<(&'static str, String)> {
    vec![
        (
            "nested_10k",
            format!("{}x{}", "<private>".repeat(10_000), "</private>".repeat(10_000)),
        ),
        ("unclosed_100k", "<private a=\"1\" ".repeat(100_000)),
        ("private_5mb", "<private>".repeat(5 * 1024 * 1024 / 9)),
        ("orphan_closes_200k", "</private> ".repeat(200_000)),
        ("mixed_names_100k", "<system-reminder><private-notes><memd-context>".repeat(100_000)),
    ]
}

/// Near-miss candidates for every built-in detector, about 1 MB each.
fn hostile_secrets() -> Vec<(&'static str, String)> {
    let mb = 1_000_000;
    vec![
        (
            "pem_without_end",
            format!("-----BEGIN RSA PRIVATE KEY-----\n{}", "A".repeat(mb - 40)),
        ),
        ("pem_many_begins", "-----BEGIN PRIVATE KEY----- ".repeat(mb / 28)),
        ("jwt_dots", "eyJaaaaaaaaa.".repeat(mb / 13)),
        ("aws_prefixes", "AKIA".repeat(mb / 4)),
        ("aws_secret_names", "aws_secret_access_key=".repeat(mb / 22)),
        ("github_prefixes", "ghp_github_pat_".repeat(mb / 15)),
        ("openai_no_digit", format!("sk-{}", "a-".repeat(mb / 2 - 2))),
        ("anthropic_short", "sk-ant-abc ".repeat(mb / 11)),
        ("stripe_short", "sk_live_abc ".repeat(mb / 12)),
        ("slack_prefixes", "xoxb-".repeat(mb / 5)),
        ("google_short", "AIzaSy ".repeat(mb / 7)),
        ("bearer_hex", "Bearer 0123456789abcdef".repeat(mb / 23)),
        (
            "one_megabyte_payload",
            "let x = 1; // ordinary code line without secrets\n".repeat(mb / 49),
        ),
    ]
}

fn bench(c: &mut Criterion) {
    let token = "ab".repeat(32);
    let (redactor, _) = Redactor::new(&RedactConfig {
        memd_token: Some(&token),
        ..RedactConfig::default()
    });
    let privacy = Privacy::new(redactor.clone());
    let mut g = c.benchmark_group("privacy");
    g.sample_size(10);
    for (name, input) in hostile_tags() {
        g.bench_function(format!("strip_tags/{name}"), |b| b.iter(|| strip_tags(&input).text.len()));
    }
    for (name, input) in hostile_secrets() {
        g.bench_function(format!("redact/{name}"), |b| b.iter(|| redactor.redact(&input).0.len()));
    }
    let payload = serde_json::json!({"stdout": "x".repeat(500_000), "stderr": "AKIAIOSFODNN7EXAMPLE ".repeat(20_000)});
    g.bench_function("clean_json/1mb_tool_response", |b| {
        b.iter(|| privacy.clean_json(payload.clone()).1.redactions.total())
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
