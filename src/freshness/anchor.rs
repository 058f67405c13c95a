//! Taking code anchors (issue 38): for each queued observation whose calls ran inside a git work
//! tree, the commit HEAD names and, for each file it names inside the tree, the file's blob id at
//! that commit and the blob id of its content on disk now — an edit's observation thus anchors to
//! the content the edit produced. One `git ls-tree` and one `git hash-object` per work tree per
//! chunk of observations; HEAD is read from `.git` without a process.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use super::git::{Repo, discover, relative_to};
use crate::freshness::anchor_rows::{Anchor, AnchorJob};

/// The anchors of `jobs` (jobs outside any work tree get none). A work tree git cannot read is
/// logged and its jobs get none: they are not retried.
pub fn take(jobs: &[AnchorJob]) -> Vec<Anchor> {
    let mut repos: HashMap<String, Option<Repo>> = HashMap::new();
    // Work tree → (job, relative path) pairs.
    let mut wanted: HashMap<String, (Repo, Vec<(i64, String)>)> = HashMap::new();
    for job in jobs {
        let Some(cwd) = job.cwd.as_deref() else { continue };
        let repo = repos.entry(cwd.to_string()).or_insert_with(|| discover(Path::new(cwd)));
        let Some(repo) = repo.clone() else { continue };
        let key = repo.root.to_string_lossy().into_owned();
        let entry = wanted.entry(key).or_insert_with(|| (repo.clone(), Vec::new()));
        for p in &job.paths {
            if let Some(rel) = relative_to(&repo.root, Path::new(cwd), p) {
                entry.1.push((job.observation_id, rel));
            }
        }
    }
    let mut out = Vec::new();
    for (root, (repo, pairs)) in wanted {
        if pairs.is_empty() {
            continue;
        }
        match anchors_in(&repo, &root, &pairs) {
            Ok(mut a) => out.append(&mut a),
            Err(e) => tracing::warn!(root = %root, error = %e, "code anchors not taken"),
        }
    }
    out
}

fn anchors_in(repo: &Repo, root: &str, pairs: &[(i64, String)]) -> Result<Vec<Anchor>, super::FreshnessError> {
    let paths: Vec<String> = pairs.iter().map(|(_, p)| p.clone()).collect::<BTreeSet<_>>().into_iter().collect();
    let head = repo.head();
    let at_head = match &head {
        Some(h) => repo.blobs_at(h, &paths)?,
        None => HashMap::new(),
    };
    let on_disk = repo.hash_files(&paths)?;
    Ok(pairs
        .iter()
        .map(|(id, p)| Anchor {
            observation_id: *id,
            repo_root: root.to_string(),
            path: p.clone(),
            head_commit: head.clone(),
            head_blob: at_head.get(p).cloned(),
            content_blob: on_disk.get(p).cloned(),
        })
        .collect())
}
