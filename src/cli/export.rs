//! `memd export --format md|json [--project P] [--since D] --out DIR` and `memd import-md DIR`
//! (issue 39): one file per observation plus an index, written from `GET /api/export` pages; read
//! back through `POST /api/import/observations` in chunks (ids kept when free, nothing twice),
//! then the supersession links with the ids the import gave.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use serde_json::{Value, json};

use super::client_context::{CliContext, call_json};
use crate::export::admit::admit;
use crate::export::index::{IndexEntry, render};
use crate::export::{Format, OBSERVATIONS_DIR, file_name, from_json, from_markdown, to_json, to_markdown};
use crate::guard::write::{Mode, Place};
use crate::mcp::link::with_query;
use crate::protocol::paths;
use crate::store::export_rows::ExportedObservation;
use crate::text::terminal;

/// A chunk sent to the worker stays under this many bytes of JSON (the body limit is 5 MiB).
const CHUNK_BYTES: usize = 3 * 1024 * 1024;
const CHUNK_ITEMS: usize = 200;

#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    /// md (front matter and narrative) or json.
    #[arg(long, value_enum, default_value = "md")]
    pub format: Format,
    /// Only this project.
    #[arg(long)]
    pub project: Option<String>,
    /// Only observations from this date on (YYYY-MM-DD, an ISO time, or epoch ms).
    #[arg(long)]
    pub since: Option<String>,
    /// The directory to write (created; files of the same names are replaced).
    #[arg(long)]
    pub out: PathBuf,
}

fn since_ms(s: &str) -> anyhow::Result<i64> {
    s.trim()
        .parse::<i64>()
        .ok()
        .or_else(|| crate::import::clean::parse_iso(s))
        .with_context(|| format!("--since {s:?}: use YYYY-MM-DD, an ISO time or epoch ms"))
}

pub fn export(env: &HashMap<String, String>, a: ExportArgs) -> anyhow::Result<ExitCode> {
    let link = CliContext::load(env, None).link();
    let since = a.since.as_deref().map(since_ms).transpose()?;
    // Every memory is private: folders 0700, files 0600, nothing written through a link.
    if !a.out.exists() {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&a.out)
            .with_context(|| format!("creating {}", a.out.display()))?;
    }
    let top = Place::open(&a.out, Path::new(""), None)?;
    let dir = Place::open(&a.out, Path::new(OBSERVATIONS_DIR), Some(0o700))?;
    dir.restrict(0o700)?;
    let mut entries = Vec::new();
    let mut after = 0;
    loop {
        let mut q = vec![("after", after.to_string()), ("limit", "500".to_string())];
        q.extend(a.project.iter().map(|p| ("project", p.clone())));
        q.extend(since.iter().map(|s| ("since", s.to_string())));
        let page = call_json(&link, "GET", &with_query(paths::EXPORT, &q), None)?;
        let items: Vec<ExportedObservation> = serde_json::from_value(page["items"].clone()).context("the worker's page")?;
        for e in &items {
            let name = file_name(e, a.format);
            let text = match a.format {
                Format::Md => to_markdown(e),
                Format::Json => to_json(e),
            };
            dir.write(&name, text.as_bytes(), Mode::Exactly(0o600))?;
            entries.push(IndexEntry::of(e, name));
        }
        match page["next"].as_i64() {
            Some(next) => after = next,
            None => break,
        }
    }
    let (name, text) = render(&entries, a.format);
    top.write(&name, text.as_bytes(), Mode::Exactly(0o600))?;
    say!(
        "Exported {} observations to {} ({name} lists them).",
        entries.len(),
        a.out.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Every exported record under `dir` (its `observations/` folder, else the folder itself), by id,
/// each with its file; files that do not read are returned with the reason.
#[allow(clippy::type_complexity)]
fn read_tree(dir: &Path) -> anyhow::Result<(Vec<(PathBuf, ExportedObservation)>, Vec<(PathBuf, String)>)> {
    let sub = dir.join(OBSERVATIONS_DIR);
    let root = if sub.is_dir() { sub } else { dir.to_path_buf() };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&root)
        .with_context(|| format!("reading {}", root.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && matches!(p.extension().and_then(|e| e.to_str()), Some("md" | "json")))
        .filter(|p| !matches!(p.file_name().and_then(|n| n.to_str()), Some("index.md" | "index.json")))
        .collect();
    files.sort();
    let (mut records, mut bad) = (Vec::new(), Vec::new());
    for path in files {
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) => {
                bad.push((path, format!("unreadable: {e}")));
                continue;
            }
        };
        let read = match path.extension().and_then(|e| e.to_str()) {
            Some("json") => from_json(&text),
            _ => from_markdown(&text),
        };
        match read {
            Ok(e) => records.push((path, e)),
            Err(err) => bad.push((path, err.to_string())),
        }
    }
    records.sort_by_key(|(_, e)| e.id);
    Ok((records, bad))
}

/// Chunks of records under [`CHUNK_BYTES`] and [`CHUNK_ITEMS`].
fn chunks(records: &[ExportedObservation]) -> Vec<&[ExportedObservation]> {
    let (mut out, mut start, mut bytes) = (Vec::new(), 0, 0);
    for (i, e) in records.iter().enumerate() {
        let size = serde_json::to_string(e).map_or(0, |s| s.len());
        if i > start && (bytes + size > CHUNK_BYTES || i - start >= CHUNK_ITEMS) {
            out.push(&records[start..i]);
            (start, bytes) = (i, 0);
        }
        bytes += size;
    }
    if start < records.len() {
        out.push(&records[start..]);
    }
    out
}

/// `memd import-md DIR`: every record admitted on the store's terms ([`admit`]); a record that
/// is not (or is too large for one request, or the worker refuses) is skipped and named with its
/// file and reason, and the rest are imported.
pub fn import_md(env: &HashMap<String, String>, dir: &Path) -> anyhow::Result<ExitCode> {
    let link = CliContext::load(env, None).link();
    let (read, mut skipped) = read_tree(dir)?;
    let now = crate::clock::now_ms();
    let mut records = Vec::with_capacity(read.len());
    let mut file_of: HashMap<i64, PathBuf> = HashMap::new();
    for (path, e) in read {
        match admit(e.clone(), now) {
            Err(why) => skipped.push((path, why.to_string())),
            Ok(_) if serde_json::to_string(&e).map_or(0, |t| t.len()) > CHUNK_BYTES => {
                skipped.push((path, format!("larger than {} MiB, the most one request carries", CHUNK_BYTES >> 20)));
            }
            Ok(a) => {
                for w in &a.warnings {
                    say_err!("memd: {}: {w}", terminal::line(&path.display().to_string()));
                }
                file_of.insert(e.id, path);
                records.push(e);
            }
        }
    }
    let mut ids: HashMap<i64, i64> = HashMap::new();
    let mut counts: HashMap<String, usize> = HashMap::new();
    for chunk in chunks(&records) {
        let ans = call_json(&link, "POST", paths::IMPORT_OBSERVATIONS, Some(&json!({"items": chunk})))?;
        for o in ans["outcomes"].as_array().into_iter().flatten() {
            let what = o["outcome"].as_str().unwrap_or("refused").to_string();
            if let (Some(from), Some(id)) = (o["from"].as_i64(), o["id"].as_i64()) {
                ids.insert(from, id);
            }
            if let (Some(from), Some(why)) = (o["from"].as_i64(), o["refused"].as_str()) {
                let file = file_of.get(&from).cloned().unwrap_or_else(|| PathBuf::from(format!("#{from}")));
                skipped.push((file, why.to_string()));
                continue;
            }
            *counts.entry(what).or_default() += 1;
        }
    }
    let links: Vec<Value> = records
        .iter()
        .filter_map(|e| {
            let (id, by) = (ids.get(&e.id)?, ids.get(&e.record.superseded_by?)?);
            Some(json!({"id": id, "supersededBy": by, "reason": e.record.supersede_reason}))
        })
        .collect();
    if !links.is_empty() {
        call_json(&link, "POST", paths::IMPORT_LINKS, Some(&json!({"links": links})))?;
    }
    skipped.sort();
    for (path, why) in &skipped {
        say_err!(
            "memd: skipped {}: {}",
            terminal::line(&path.display().to_string()),
            terminal::line(why)
        );
    }
    let n = |k: &str| counts.get(k).copied().unwrap_or(0);
    say!(
        "Imported {} observations ({} under their own id, {} under a new id); {} already here, {} forgotten here before, {} skipped.",
        n("kept") + n("remapped"),
        n("kept"),
        n("remapped"),
        n("duplicate"),
        n("forgotten"),
        skipped.len(),
    );
    Ok(if skipped.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
