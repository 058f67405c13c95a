//! Retrieval benchmarks on generated data (issue 6 targets): search p50/p99 at 100,000
//! observations — each made from one raw tool call, indexed in the raw archive's search index
//! (issue 35) — and SessionStart context injection at 100,000. `SEARCH_OBSERVATIONS=10000` for
//! 10,000.
//!
//! The database is generated once (rows inserted with rusqlite into a schema made by
//! `memd::store::migrations::migrate`) and kept under the target tmp dir for later runs. Before
//! criterion runs, a one-shot report prints p50/p99 over 100 runs per query.
//! Run: `cargo bench --bench search`.
#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stdout, clippy::print_stderr, clippy::exit)] // a test or a bench: a failed assumption fails it, and it reports by printing

use std::path::PathBuf;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group};
use memd::config::ContextSettings;
use memd::modes::load_mode;
use memd::retrieval::{ContextRequest, Scope, SearchRequest, Zone, context_inject, search};
use rusqlite::{Connection, OpenFlags, params};

fn observations() -> i64 {
    std::env::var("SEARCH_OBSERVATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000)
}
const PROJECTS: i64 = 50;
const T0: i64 = 1_750_000_000_000;

/// Planted words (queried below), mixed into a Zipf-distributed synthetic vocabulary.
const WORDS: &[&str] = &[
    "cache",
    "invalidation",
    "upload",
    "retry",
    "retries",
    "flaky",
    "login",
    "limiter",
    "token",
    "bucket",
    "middleware",
    "parser",
    "lexer",
    "config",
    "database",
    "migration",
    "schema",
    "deadlock",
    "timeout",
    "socket",
    "handler",
    "session",
    "worker",
];
const VOCABULARY: usize = 20_000;
const SYLLABLES: &[&str] = &[
    "ka", "ro", "mi", "tan", "sel", "vu", "dor", "pi", "len", "gra", "sto", "que", "brin", "za", "fol", "nek",
];

/// The synthetic word of vocabulary rank `r`.
fn word(r: usize) -> String {
    let mut n = r;
    let mut w = String::new();
    while n > 0 || w.len() < 4 {
        w.push_str(SYLLABLES[n % SYLLABLES.len()]);
        n /= SYLLABLES.len();
    }
    w
}

const CJK: &[&str] = &["修复了缓存失效的问题", "数据库迁移完成", "上传重试三次", "登录限流"];
const TYPES: &[&str] = &["bugfix", "feature", "refactor", "change", "discovery", "decision"];

struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) as usize
    }
    /// Zipf-like rank: uniform on a log scale, so low ranks are frequent and the tail is long.
    fn rank(&mut self) -> usize {
        let u = (self.next() % 1_000_000) as f64 / 1_000_000.0;
        (((VOCABULARY as f64).powf(u) - 1.0) as usize).min(VOCABULARY - 1)
    }
    fn words(&mut self, n: usize) -> String {
        (0..n).map(|_| word(self.rank())).collect::<Vec<_>>().join(" ")
    }
    /// Synthetic words plus, in every 4th record, one planted word.
    fn text(&mut self, n: usize) -> String {
        let mut t = self.words(n);
        if self.next().is_multiple_of(4) {
            t.push(' ');
            t.push_str(WORDS[self.next() % WORDS.len()]);
        }
        t
    }
}

fn generate(path: &PathBuf) {
    let mut conn = Connection::open(path).expect("open");
    memd::store::migrations::migrate(&mut conn, T0).expect("migrate");
    conn.execute_batch("PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF;")
        .expect("pragma");
    let tx = conn.transaction().expect("tx");
    let mut rng = Lcg(42);
    let n = observations();
    for s in 0..(n / 100) {
        let project = format!("project-{}", s % PROJECTS);
        tx.execute(
            "INSERT INTO sdk_sessions (content_session_id, memory_session_id, platform_source, project, started_at, started_at_epoch, last_event_epoch)
             VALUES (?1, ?2, 'claude', ?3, '', ?4, ?4)",
            params![format!("c{s}"), format!("m{s}"), project, T0 + s * 60_000],
        )
        .expect("session");
    }
    {
        let mut stmt = tx
            .prepare(
                "INSERT INTO observations (memory_session_id, project, platform_source, type, title, subtitle, narrative, facts, concepts,
                   files_read, files_modified, discovery_tokens, content_hash, origin, created_at, created_at_epoch)
                 VALUES (?1, ?2, 'claude', ?3, ?4, ?5, ?6, ?7, '[\"how-it-works\"]', ?8, '[]', 500, ?9, 'observer', '', ?10)",
            )
            .expect("prepare");
        for i in 0..n {
            let s = i / 100;
            let title = rng.text(7);
            let mut narrative = rng.text(40);
            if i % 50 == 0 {
                narrative.push_str(CJK[rng.next() % CJK.len()]);
            }
            let facts = serde_json::to_string(&[rng.words(10), rng.words(10)]).expect("facts");
            let files = serde_json::to_string(&[format!("/src/mod{}/file{}.rs", i % 97, i % 13)]).expect("files");
            stmt.execute(params![
                format!("m{s}"),
                format!("project-{}", s % PROJECTS),
                TYPES[i as usize % TYPES.len()],
                title,
                rng.words(5),
                narrative,
                facts,
                files,
                format!("h{i}"),
                T0 + i * 30_000
            ])
            .expect("insert");
        }
    }
    raw_calls(&tx, n, &mut rng);
    tx.commit().expect("commit");
}

/// One raw tool call per observation (an edit writing synthetic code with identifiers, its
/// response), linked as the observation's source and indexed as ingest indexes it.
fn raw_calls(tx: &Connection, n: i64, rng: &mut Lcg) {
    let mut call = tx
        .prepare(
            "INSERT INTO tool_uses (id, session_db_id, content_session_id, platform_source, project, prompt_number, tool_name,
               tool_input, tool_response, input_chars, response_chars, occurred_at_epoch, created_at_epoch)
             VALUES (?1, ?2, ?3, 'claude', ?4, 1, 'Edit', ?5, ?6, 0, 0, ?7, ?7)",
        )
        .expect("prepare");
    for i in 0..n {
        let s = i / 100;
        let code = format!(
            "fn {}_{}() {{ let {}{} = {}(); }}\n{}",
            word(rng.rank()),
            word(rng.rank()),
            word(rng.rank()),
            identifier(i),
            word(rng.rank()),
            rng.words(30)
        );
        let input = serde_json::json!({"file_path": format!("/src/mod{}/file{}.rs", i % 97, i % 13), "old_string": rng.words(10), "new_string": code}).to_string();
        let response = serde_json::json!({"stdout": rng.words(60)}).to_string();
        call.execute(params![
            i + 1,
            s + 1,
            format!("c{s}"),
            format!("project-{}", s % PROJECTS),
            input,
            response,
            T0 + i * 30_000
        ])
        .expect("call");
        memd::store::raw_index::index_call(tx, i + 1, "Edit", &input, &response).expect("index");
        tx.execute("INSERT INTO observation_sources VALUES (?1, ?1)", [i + 1])
            .expect("source");
    }
}

/// A camelCase identifier only call `i` writes (`where did we change <it>?` has one answer).
fn identifier(i: i64) -> String {
    format!("Handler{i}Token")
}

fn database() -> Connection {
    let name = format!("search-bench-{}-zipf-raw.db", observations());
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    if !path.exists() {
        let t = Instant::now();
        let tmp = path.with_extension("tmp");
        let _ = std::fs::remove_file(&tmp);
        generate(&tmp);
        std::fs::rename(&tmp, &path).expect("rename");
        eprintln!(
            "generated {} observations and their calls in {:.1}s",
            observations(),
            t.elapsed().as_secs_f64()
        );
    }
    // A database kept from an earlier run gets the migrations added since (e.g. new indexes).
    let mut rw = Connection::open(&path).expect("open rw");
    memd::store::migrations::migrate(&mut rw, T0).expect("migrate");
    drop(rw);
    Connection::open_with_flags(&path, OpenFlags::SQLITE_OPEN_READ_ONLY).expect("open ro")
}

fn request(query: &str, project: Option<&str>) -> SearchRequest {
    SearchRequest::new(query, Scope::new(project.map(|p| vec![p.to_string()]), None))
}

const QUERIES: &[(&str, &str)] = &[
    ("word", "deadlock"),
    ("two words", "cache invalidation"),
    ("phrase", "\"token bucket\""),
    ("prefix", "migrat*"),
    ("sentence", "what did we decide about retrying the flaky upload?"),
    ("cjk trigram", "缓存失效"),
    ("cjk bigram", "限流"),
    ("no match", "zzzzqqq"),
    ("where changed", "where did we change Handler4242Token?"),
];

fn percentiles(mut v: Vec<Duration>) -> (f64, f64) {
    v.sort();
    let at = |p: f64| v[((v.len() as f64 * p) as usize).min(v.len() - 1)].as_secs_f64() * 1000.0;
    (at(0.50), at(0.99))
}

fn context_request() -> ContextRequest {
    ContextRequest {
        chain: vec!["project-7".into()],
        platform: "claude".into(),
        full: false,
        max_chars: None,
        memory_lines: Vec::new(),
    }
}

fn report(conn: &Connection) {
    let mode = load_mode("code", &[]).0;
    let cfg = ContextSettings::default();
    for (name, q) in QUERIES {
        for project in [None, Some("project-7")] {
            let req = request(q, project);
            let times: Vec<Duration> = (0..100)
                .map(|_| {
                    let t = Instant::now();
                    let r = search(conn, &req).expect("search");
                    std::hint::black_box(r);
                    t.elapsed()
                })
                .collect();
            let (p50, p99) = percentiles(times);
            let scope = if project.is_some() { "one project" } else { "all projects" };
            eprintln!("search {name:<12} {scope:<12} p50 {p50:7.2} ms  p99 {p99:7.2} ms");
        }
    }
    let req = context_request();
    let times: Vec<Duration> = (0..100)
        .map(|_| {
            let t = Instant::now();
            let r = context_inject(conn, &req, &cfg, &mode, &Zone::Utc, T0 + observations() * 30_000).expect("context");
            std::hint::black_box(r);
            t.elapsed()
        })
        .collect();
    let (p50, p99) = percentiles(times);
    eprintln!("context injection (50 obs, 10 summaries) p50 {p50:7.2} ms  p99 {p99:7.2} ms");
}

fn bench_search(c: &mut Criterion) {
    let conn = database();
    report(&conn);
    let mode = load_mode("code", &[]).0;
    let cfg = ContextSettings::default();
    let mut g = c.benchmark_group("search_100k");
    for (name, q) in QUERIES {
        let req = request(q, None);
        g.bench_function(*name, |b| b.iter(|| search(&conn, &req).expect("search")));
    }
    g.finish();
    let req = context_request();
    c.bench_function("context_inject_100k", |b| {
        b.iter(|| context_inject(&conn, &req, &cfg, &mode, &Zone::Utc, T0 + observations() * 30_000).expect("context"))
    });
}

criterion_group!(benches, bench_search);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
