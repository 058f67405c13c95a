//! Hostile inputs against the privacy stage (issue 5): nested and unclosed tags, 5 MB of
//! `<private>`, and near-miss candidates for every redaction pattern (inputs that would make a
//! backtracking engine explode). Issue 13: ordinary tool output — every tool input and result of
//! the committed transcript excerpts — through the whole step (`clean_json`, targets ≥ 50 MB/s),
//! and ~1 MB near-misses for each context rule (target ≤ 50 ms per MB). Criterion reports time and
//! throughput. Issue 36: the quarantine screen over one typical observation's text (title, facts,
//! narrative; ~600 bytes) and over a 64 KB near-miss. Run: `cargo bench --bench privacy`.
#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stdout, clippy::print_stderr, clippy::exit)] // a test or a bench: a failed assumption fails it, and it reports by printing

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
        ("assignment_no_value", "DB_PASSWORD= ".repeat(mb / 13)),
        ("assignment_keys_only", "password_token_secret_key ".repeat(mb / 26)),
        ("assignment_code", "token = get_token(x) ".repeat(mb / 21)),
        ("url_without_at", "postgres://user:pass".repeat(mb / 20)),
        ("authorization_bare", "Authorization: ".repeat(mb / 15)),
        ("cookie_no_value", "Cookie: ;".repeat(mb / 9)),
        ("curl_without_user", format!("curl {}", "-u ".repeat(mb / 3 - 2))),
        ("flag_without_value", "--password ".repeat(mb / 11)),
        ("keyword_low_entropy", "api key aaaaaaaaaaaaaaaaaaaaaaaa ".repeat(mb / 32)),
        ("base64_lines_63", format!("{}\n", "A".repeat(63)).repeat(mb / 64)),
        (
            "one_megabyte_payload",
            "let x = 1; // ordinary code line without secrets\n".repeat(mb / 49),
        ),
    ]
}

/// Every tool input and tool result of the committed transcript excerpts, as JSON values.
fn ordinary_tool_output() -> (Vec<serde_json::Value>, u64) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/transcripts");
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let text = std::fs::read_to_string(e.path()).unwrap_or_default();
        for line in text.lines() {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            if let Some(r) = v.get("toolUseResult") {
                out.push(r.clone());
            }
            for part in v["message"]["content"].as_array().into_iter().flatten() {
                match part["type"].as_str() {
                    Some("tool_use") => out.push(part["input"].clone()),
                    Some("tool_result") => out.push(part["content"].clone()),
                    _ => {}
                }
            }
        }
    }
    let bytes = out.iter().map(|v| v.to_string().len() as u64).sum();
    (out, bytes)
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
    let (ordinary, bytes) = ordinary_tool_output();
    g.throughput(criterion::Throughput::Bytes(bytes));
    g.bench_function(format!("clean_json/transcript_tool_output_{}kb", bytes / 1024), |b| {
        // The pipeline owns the parsed payload: the copy for each iteration is not timed.
        b.iter_batched(
            || ordinary.clone(),
            |values| values.into_iter().map(|v| privacy.clean_json(v).1.redactions.total()).sum::<u64>(),
            criterion::BatchSize::LargeInput,
        )
    });
    // Issue 36: the instruction screen every stored observation passes.
    let observation = "Edited src/checkout/coupon.rs: apply_discount, round_half_even\n\
        Edit src/checkout/coupon.rs: replaced 12 line(s) with 18 line(s); added apply_discount, round_half_even; removed round_half_up\n\
        `cargo test -p checkout` → test result: ok. 12 passed; 0 failed\n\
        The coupon total rounded half up, so a 0.5 cent discount went the wrong way on carts with two coupons; \
        totals now use banker's rounding and a regression test covers the two-coupon cart. The previous \
        rounding helper stays for invoices, which the tax office requires to round half up.\n\
        what-changed apply_discount round_half_even round_half_up";
    g.throughput(criterion::Throughput::Elements(1));
    g.bench_function("quarantine_screen/observation", |b| {
        b.iter(|| memd::pipeline::instruction::screen(std::hint::black_box(observation)))
    });
    let near = "you should run the previous instructions from the system before anything ".repeat(900);
    g.throughput(criterion::Throughput::Bytes(near.len() as u64));
    g.bench_function("quarantine_screen/near_miss_64kb", |b| {
        b.iter(|| memd::pipeline::instruction::screen(std::hint::black_box(&near)))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
