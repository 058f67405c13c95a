//! `memd eval [DATASET]`: the retrieval benchmark. Starts a fresh `memd serve` (a temporary data
//! directory, the extractive observer, embeddings on when a model is found), loads the dataset
//! through the public API — memories saved (the raw path), then, in a second fresh worker, the
//! recorded sessions replayed as hook events (the extractive path) — asks every question with
//! `GET /api/search` in keyword, vector and hybrid mode, and prints the report (Markdown, or
//! JSON with `--json`). `memd eval --generate TRANSCRIPTS… --out DIR` writes a dataset.

use crate::protocol::paths;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Args;

use crate::client::worker::Worker;
use crate::config::{Settings, data_dir_from_env};
use crate::data_dir::{DataDir, read_pid_file};
use crate::eval::dataset::{Dataset, load, write_lines};
use crate::eval::generate::generate;
use crate::eval::poisoning::{PoisoningReport, Recorded, corpus, markdown as poisoning_markdown, score};
use crate::eval::report::{PathReport, Report, by_category, markdown};
use crate::eval::run::{Row, SearchMode, ask, replayed_rows, save_memories, wait_embedded};
use crate::replay::convert::convert_file;
use crate::replay::loss::wait_drained;
use crate::replay::runner::{RunOptions, run as run_replay};

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// The dataset directory (memories.jsonl, questions*.jsonl, sessions.jsonl).
    #[arg(default_value = "datasets/transcripts")]
    pub dataset: PathBuf,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Also write the Markdown report to this file.
    #[arg(long)]
    pub markdown: Option<PathBuf>,
    /// The all-MiniLM-L6-v2 directory (default: MEMD_EMBED_MODEL_DIR, else the data dir's).
    #[arg(long)]
    pub model_dir: Option<PathBuf>,
    /// Paths to run: raw, extractive (default both), truenow (scripted git histories, before and
    /// after freshness; needs git).
    #[arg(long, value_delimiter = ',', default_values_t = ["raw".to_string(), "extractive".to_string()])]
    pub paths: Vec<String>,
    /// Ask a running worker of this data directory instead of fresh ones (for tuning: memories
    /// saved again reinforce the same rows; replayed events are duplicates).
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// Write a dataset from these Claude Code transcripts (files or directories) instead.
    #[arg(long, num_args = 1..)]
    pub generate: Vec<PathBuf>,
    /// Where `--generate` writes.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Measure the instruction screen instead: the built-in attack corpus per class (tune and
    /// report halves) and the share of the dataset's recorded sessions' observations it quarantines.
    #[arg(long)]
    pub poisoning: bool,
    /// Also write every answer to this file, one JSON line each (path, mode, question, split, the
    /// first relevant rank, the first three results): for reading what a change moved.
    #[arg(long)]
    pub trace: Option<PathBuf>,
}

/// A `memd serve` child on a temporary data directory, stopped on drop (or, with `--data-dir`,
/// a running worker: no child, nothing removed).
struct EvalWorker {
    child: Option<Child>,
    /// Its data directory (removed with the worker).
    dir: PathBuf,
    worker: Worker,
}

impl Drop for EvalWorker {
    fn drop(&mut self) {
        let Some(child) = self.child.as_mut() else { return };
        // SAFETY: kill with a valid pid of our own child.
        unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        let _ = child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A new private directory under the system temp dir.
fn scratch_dir() -> anyhow::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let dir = std::env::temp_dir().join(format!("memd-eval-{}-{nanos}", std::process::id()));
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .with_context(|| format!("create {}", dir.display()))?;
    Ok(dir)
}

fn start_worker(model: Option<&Path>, env: &HashMap<String, String>, running: Option<&Path>) -> anyhow::Result<EvalWorker> {
    if let Some(dir) = running {
        let worker = Worker::locate(&DataDir::new(dir.to_path_buf()), 0);
        return Ok(EvalWorker {
            child: None,
            dir: dir.to_path_buf(),
            worker,
        });
    }
    let dir = scratch_dir()?;
    let mut cmd = Command::new(std::env::current_exe().context("current exe")?);
    cmd.arg("serve")
        .env_clear()
        .env("PATH", env.get("PATH").cloned().unwrap_or_default())
        .env("HOME", &dir)
        .env("MEMD_DATA_DIR", &dir)
        .env("MEMD_PORT", "0")
        .env("MEMD_LOG", "warn")
        .env("MEMD_PROVIDER", "extractive")
        .env("MEMD_OBSERVER_BATCH_DEBOUNCE_MS", "50")
        .env("MEMD_VECTOR_QUERY_BUDGET_MS", "20000")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    match model {
        Some(m) => cmd.env("MEMD_EMBEDDINGS", "local").env("MEMD_EMBED_MODEL_DIR", m),
        None => cmd.env("MEMD_EMBEDDINGS", "none"),
    };
    // Search settings under test (fusion weights, floors) pass through.
    for (k, v) in env.iter().filter(|(k, _)| {
        k.starts_with("MEMD_SEARCH_")
            || matches!(
                k.as_str(),
                "MEMD_EMBED_ENCODER" | "MEMD_EMBED_KERNEL" | "MEMD_FRESHNESS" | "MEMD_GRAPH_SEARCH"
            )
    }) {
        cmd.env(k, v);
    }
    // The worker goes when the benchmark goes, even killed (no leaked `memd serve`).
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: prctl(PR_SET_PDEATHSIG) is async-signal-safe and only sets this child's own flag.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                Ok(())
            });
        }
    }
    let child = cmd.spawn().context("spawn memd serve")?;
    let pid = child.id();
    let data = DataDir::new(dir.clone());
    let mut w = EvalWorker {
        child: Some(child),
        worker: Worker::locate(&data, 0),
        dir,
    };
    let start = Instant::now();
    loop {
        if let Some(p) = read_pid_file(&data.pid_file()).filter(|p| p.pid == pid && p.port != 0) {
            w.worker = Worker::locate(&data, p.port);
            if w.worker
                .get(paths::READINESS, Duration::from_secs(2))
                .is_ok_and(|r| r.status == 200)
            {
                return Ok(w);
            }
        }
        if start.elapsed() > Duration::from_secs(60) {
            bail!("the benchmark worker did not become ready");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn model_dir(args: &EvalArgs, env: &HashMap<String, String>) -> Option<PathBuf> {
    let dir = args
        .model_dir
        .clone()
        .unwrap_or_else(|| Settings::load(data_dir_from_env(env), env).vectors.model_dir);
    crate::vectors::embedder::model_present(&dir).then_some(dir)
}

/// Asks every question in every mode the worker can answer.
fn ask_all(w: &Worker, d: &Dataset, rows: &HashMap<String, Vec<Row>>, run: &Run<'_>, p: &mut PathReport) -> anyhow::Result<()> {
    let mut trace = match run.trace {
        Some(path) => Some(std::fs::OpenOptions::new().create(true).append(true).open(path)?),
        None => None,
    };
    for &mode in run.modes {
        let mut answers = Vec::new();
        for q in &d.questions {
            let a = ask(w, q, mode, rows)?;
            if let Some(f) = trace.as_mut() {
                let line = serde_json::json!({
                    "path": p.path, "mode": mode.name(), "id": q.id, "split": q.split(), "query": q.query,
                    "first_relevant": (a.scores.reciprocal_rank > 0.0).then(|| (1.0 / a.scores.reciprocal_rank).round() as usize),
                    "top": a.top,
                });
                std::io::Write::write_all(f, format!("{line}\n").as_bytes())?;
            }
            if mode == SearchMode::Keyword && a.unmapped {
                p.unmapped += 1;
            }
            answers.push((q.category.clone(), q.split(), a));
        }
        p.modes.insert(mode, by_category(&answers));
    }
    Ok(())
}

/// What every path of one run shares.
struct Run<'a> {
    model: Option<&'a Path>,
    modes: &'a [SearchMode],
    env: &'a HashMap<String, String>,
    /// `--data-dir`: a running worker instead of fresh ones.
    running: Option<&'a Path>,
    /// `--trace`: where every answer is written.
    trace: Option<&'a Path>,
}

fn raw_path(d: &Dataset, run: &Run<'_>) -> anyhow::Result<PathReport> {
    let model = run.model;
    let w = start_worker(model, run.env, run.running)?;
    let rows = save_memories(&w.worker, &d.memories)?;
    let (embedded, secs) = wait_embedded(&w.worker, model.is_some(), Duration::from_secs(1800))?;
    let mut p = PathReport {
        path: "raw".into(),
        rows: d.memories.len(),
        embed_seconds: secs,
        rows_embedded: embedded,
        ..PathReport::default()
    };
    ask_all(&w.worker, d, &rows, run, &mut p)?;
    Ok(p)
}

fn extractive_path(d: &Dataset, run: &Run<'_>) -> anyhow::Result<PathReport> {
    let model = run.model;
    let w = start_worker(model, run.env, run.running)?;
    let opts = RunOptions::to_local_worker(w.worker.addr, w.worker.token.clone(), Some(w.dir.clone()));
    let sent = run_replay(&d.sessions, &opts);
    let errors: u64 = sent.tally.kinds.values().flat_map(|k| k.errors.values()).sum();
    if errors > 0 {
        bail!("{errors} replayed events were not acknowledged");
    }
    let status = || {
        w.worker
            .get(paths::STATUS, Duration::from_secs(10))
            .ok()?
            .json()
            .and_then(|v| serde_json::from_value(v).ok())
    };
    let drain = wait_drained(Duration::from_secs(600), status);
    if !drain.drained {
        bail!("the observer queue did not drain ({} pending)", drain.pending);
    }
    let rows = replayed_rows(&w.dir.join("memd.db"))?;
    let (embedded, secs) = wait_embedded(&w.worker, model.is_some(), Duration::from_secs(1800))?;
    let made: usize = {
        let mut all: Vec<&Row> = rows.values().flatten().collect();
        all.sort();
        all.dedup();
        all.len()
    };
    let mut p = PathReport {
        path: "extractive".into(),
        rows: made,
        embed_seconds: secs,
        rows_embedded: embedded,
        ..PathReport::default()
    };
    ask_all(&w.worker, d, &rows, run, &mut p)?;
    Ok(p)
}

/// The scripted git histories of "what is true now", with freshness off (before) then on.
fn true_now_path(run: &Run<'_>) -> anyhow::Result<Vec<crate::eval::true_now::TrueNow>> {
    let mut out = Vec::new();
    for on in [false, true] {
        let mut env = run.env.clone();
        env.insert("MEMD_FRESHNESS".into(), on.to_string());
        let w = start_worker(None, &env, None)?;
        // Outside the worker's data dir (whose own files memd does not record).
        let repos = scratch_dir()?;
        let r = crate::eval::true_now::run(&w.worker, &w.dir.join("memd.db"), &repos, on);
        let _ = std::fs::remove_dir_all(&repos);
        out.push(r?);
    }
    Ok(out)
}

fn write_dataset(inputs: &[PathBuf], out: &Path) -> anyhow::Result<ExitCode> {
    let files = super::replay::session_files(inputs)?;
    let mut sessions = Vec::new();
    for f in &files {
        sessions.push(convert_file(f).with_context(|| format!("convert {}", f.display()))?);
    }
    let g = generate(&sessions);
    std::fs::create_dir_all(out).with_context(|| format!("create {}", out.display()))?;
    write_lines(&out.join("memories.jsonl"), &g.memories)?;
    write_lines(&out.join("questions.jsonl"), &g.questions)?;
    write_lines(&out.join("sessions.jsonl"), &g.events)?;
    say_err!(
        "{} sessions → {} memories, {} questions, {} events in {}",
        sessions.len(),
        g.memories.len(),
        g.questions.len(),
        g.events.len(),
        out.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// The recorded sessions replayed through the extractive observer in a fresh worker: how many of
/// their observations the screen quarantined, and why.
fn recorded_quarantine(d: &Dataset, env: &HashMap<String, String>) -> anyhow::Result<Recorded> {
    let w = start_worker(None, env, None)?;
    let opts = RunOptions::to_local_worker(w.worker.addr, w.worker.token.clone(), Some(w.dir.clone()));
    run_replay(&d.sessions, &opts);
    let status = || {
        w.worker
            .get(paths::STATUS, Duration::from_secs(10))
            .ok()?
            .json()
            .and_then(|v| serde_json::from_value(v).ok())
    };
    if !wait_drained(Duration::from_secs(600), status).drained {
        bail!("the observer queue did not drain");
    }
    let conn = rusqlite::Connection::open_with_flags(w.dir.join("memd.db"), rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let mut rec = Recorded {
        observations: conn.query_row("SELECT count(*) FROM observations", [], |r| r.get(0))?,
        memories: d.memories.len(),
        memories_flagged: d
            .memories
            .iter()
            .filter(|m| crate::pipeline::instruction::screen(&format!("{}\n{}", m.title, m.text)).is_some())
            .map(|m| m.id.clone())
            .collect(),
        ..Recorded::default()
    };
    let mut st = conn.prepare("SELECT coalesce(quarantine_reason, '?'), count(*) FROM observations WHERE quarantined = 1 GROUP BY 1")?;
    for row in st.query_map([], |r| {
        Ok((
            r.get::<_, String>("coalesce(quarantine_reason, '?')")?,
            r.get::<_, i64>("count(*)")?,
        ))
    })? {
        let (reason, n) = row?;
        rec.quarantined += n;
        rec.reasons.insert(reason, n);
    }
    Ok(rec)
}

fn poisoning(args: &EvalArgs, env: &HashMap<String, String>) -> anyhow::Result<ExitCode> {
    let classes = score(&corpus(), |t| crate::pipeline::instruction::screen(t).is_some());
    let recorded = match load(&args.dataset) {
        Ok(d) if !d.sessions.is_empty() => Some(recorded_quarantine(&d, env)?),
        _ => None,
    };
    let report = PoisoningReport { classes, recorded };
    if args.json {
        say_json!(&report);
    } else {
        say_part!("{}", poisoning_markdown(&report));
    }
    Ok(ExitCode::SUCCESS)
}

pub fn run(args: EvalArgs, env: &HashMap<String, String>) -> anyhow::Result<ExitCode> {
    if !args.generate.is_empty() {
        let out = args.out.clone().context("--generate needs --out DIR")?;
        return write_dataset(&args.generate, &out);
    }
    if args.poisoning {
        return poisoning(&args, env);
    }
    let d = load(&args.dataset).with_context(|| format!("load {}", args.dataset.display()))?;
    let model = model_dir(&args, env);
    let mut report = Report {
        dataset: args.dataset.display().to_string(),
        questions: d.questions.len(),
        ..Report::default()
    };
    let modes: Vec<SearchMode> = match &model {
        Some(_) => SearchMode::ALL.to_vec(),
        None => {
            report
                .notes
                .push("no embedding model found (--model-dir): keyword mode only".into());
            vec![SearchMode::Keyword]
        }
    };
    let run = Run {
        model: model.as_deref(),
        modes: &modes,
        env,
        running: args.data_dir.as_deref(),
        trace: args.trace.as_deref(),
    };
    for path in &args.paths {
        match path.as_str() {
            "raw" => report.paths.push(raw_path(&d, &run)?),
            "extractive" if d.sessions.is_empty() => report.notes.push("the dataset has no sessions.jsonl: no extractive path".into()),
            "extractive" => report.paths.push(extractive_path(&d, &run)?),
            "truenow" => report.true_now = true_now_path(&run)?,
            other => bail!("unknown path {other:?} (raw, extractive, truenow)"),
        }
    }
    let mut md = markdown(&report);
    if !report.true_now.is_empty() {
        md.push_str(&crate::eval::true_now::markdown(&report.true_now));
    }
    if let Some(f) = &args.markdown {
        std::fs::write(f, &md).with_context(|| format!("write {}", f.display()))?;
    }
    if args.json {
        say_json!(&report);
    } else {
        say_part!("{md}");
    }
    Ok(ExitCode::SUCCESS)
}
