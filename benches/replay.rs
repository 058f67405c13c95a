//! Hot paths without a worker: transcript → hook events conversion (all real transcripts when
//! `MEMD_TRANSCRIPTS_DIR` names them, else the committed fixtures), observer XML parsing, and
//! redaction over a 1 MB payload. Run: `cargo bench --bench replay`.
#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stdout, clippy::print_stderr, clippy::exit)] // a test or a bench: a failed assumption fails it, and it reports by printing

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use memd::observer::xml::parse_reply;
use memd::pipeline::redact::{RedactConfig, Redactor};
use memd::replay::convert::convert;
use memd::replay::transcript::{is_subagent_file, parse_records};

fn transcript_files() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dirs = [
        std::env::var_os("MEMD_TRANSCRIPTS_DIR").map(PathBuf::from).unwrap_or_default(),
        root.join("tests/fixtures/transcripts"),
    ];
    let Some(dir) = dirs.into_iter().find(|d| d.is_dir()) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|x| x == "jsonl") && !is_subagent_file(p));
    files.sort();
    files
}

fn conversion(c: &mut Criterion) {
    let texts: Vec<Vec<u8>> = transcript_files().iter().filter_map(|p| std::fs::read(p).ok()).collect();
    let bytes: usize = texts.iter().map(Vec::len).sum();
    let parsed: Vec<Vec<serde_json::Value>> = texts.iter().map(|t| parse_records(t.as_slice()).unwrap_or_default()).collect();
    let events: usize = parsed.iter().map(|r| convert(r, Vec::new(), "s", "t").events.len()).sum();
    eprintln!("conversion corpus: {} files, {bytes} bytes, {events} events", texts.len());
    let mut g = c.benchmark_group("replay");
    g.throughput(Throughput::Bytes(bytes as u64));
    g.bench_function("read+convert all transcripts", |b| {
        b.iter(|| {
            for t in &texts {
                let records = parse_records(t.as_slice()).unwrap_or_default();
                black_box(convert(&records, Vec::new(), "s", "t"));
            }
        })
    });
    g.throughput(Throughput::Elements(events as u64));
    g.bench_function("convert parsed records (events)", |b| {
        b.iter(|| {
            for r in &parsed {
                black_box(convert(r, Vec::new(), "s", "t"));
            }
        })
    });
    g.finish();
}

const REPLY: &str = "<observation>\n  <type>bugfix</type>\n  <title>Coupon rounding fixed in coupon::apply</title>\n  <subtitle>Half-up rounding restored</subtitle>\n  <facts>\n    <fact>coupon::apply rounded half-down</fact>\n    <fact>a regression test covers 0.5 cents</fact>\n  </facts>\n  <narrative>The checkout failed for carts with a coupon because the discount was rounded half-down; apply now rounds half-up and the 12 checkout tests pass.</narrative>\n  <concepts>\n    <concept>problem-solution</concept>\n    <concept>gotcha</concept>\n  </concepts>\n  <files_read>\n    <file>src/checkout/coupon.rs</file>\n  </files_read>\n  <files_modified>\n    <file>src/checkout/coupon.rs</file>\n    <file>tests/checkout.rs</file>\n  </files_modified>\n</observation>\n";

fn observer_xml(c: &mut Criterion) {
    let types = ["bugfix", "feature", "refactor", "change", "discovery", "decision"];
    let five = REPLY.repeat(5);
    let mut g = c.benchmark_group("observer_xml");
    g.throughput(Throughput::Bytes(five.len() as u64));
    g.bench_function("parse_reply 5 observations", |b| {
        b.iter(|| black_box(parse_reply(black_box(&five), &types)))
    });
    g.finish();
}

fn redaction(c: &mut Criterion) {
    let line = "2026-10-02 build ok step=42 path=/home/dev/shop/src/checkout/coupon.rs user=dev token=none\n";
    let mut payload = line.repeat(1_000_000 / line.len());
    payload.push_str("export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n");
    let config = RedactConfig {
        redact: true,
        ..RedactConfig::default()
    };
    let (redactor, _) = Redactor::new(&config);
    let (_, counts) = redactor.redact(&payload);
    assert!(!counts.is_empty(), "the bench payload must hit a detector");
    let mut g = c.benchmark_group("redact");
    g.throughput(Throughput::Bytes(payload.len() as u64));
    g.sample_size(20);
    g.bench_function("1 MB payload", |b| b.iter(|| black_box(redactor.redact(black_box(&payload)))));
    g.finish();
}

criterion_group!(benches, conversion, observer_xml, redaction);
criterion_main!(benches);
