//! Staleness (issue 38): an observation is stale when a file it is about was changed — or
//! deleted — by a commit after its anchor; an uncommitted edit in progress never makes it stale.
//! The file is changed when HEAD's blob of it is neither the blob at the anchor's commit nor the
//! content anchored (so committing the very edit an observation recorded keeps it current). The
//! check of a work tree runs only when its HEAD moved since the last check: one `git ls-tree` for
//! its anchored files, then one `git log` per file found changed to name the commit.

use std::collections::{BTreeSet, HashMap};

use super::FreshnessError;
use super::git::Repo;
use crate::freshness::anchor_rows::{LiveAnchor, StaleMark};

/// What HEAD says of one anchored file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Current,
    Changed,
    Deleted,
}

/// The verdict on `a` given the file's blob at HEAD (None: not in HEAD's tree).
pub fn judge(a: &LiveAnchor, at_head: Option<&str>) -> Verdict {
    match at_head {
        Some(b) if a.head_blob.as_deref() == Some(b) || a.content_blob.as_deref() == Some(b) => Verdict::Current,
        Some(_) => Verdict::Changed,
        // Never committed when anchored, and still not: nothing a commit did.
        None if a.head_blob.is_none() => Verdict::Current,
        None => Verdict::Deleted,
    }
}

/// The marks for `anchors` of one work tree at `head` (`now`: the time used when git cannot name
/// the commit, e.g. after a history rewrite).
pub fn check(repo: &Repo, head: &str, anchors: &[LiveAnchor], now: i64) -> Result<Vec<StaleMark>, FreshnessError> {
    let anchors: Vec<&LiveAnchor> = anchors.iter().filter(|a| a.head_commit.as_deref() != Some(head)).collect();
    if anchors.is_empty() {
        return Ok(Vec::new());
    }
    let paths: Vec<String> = anchors
        .iter()
        .map(|a| a.path.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let blobs = repo.blobs_at(head, &paths)?;
    let mut named: HashMap<(String, Option<String>), (String, i64)> = HashMap::new();
    let mut marks = Vec::new();
    for a in anchors {
        if judge(a, blobs.get(&a.path).map(String::as_str)) == Verdict::Current {
            continue;
        }
        let key = (a.path.clone(), a.head_commit.clone());
        let (commit, at_epoch) = match named.get(&key) {
            Some(c) => c.clone(),
            None => {
                let c = repo
                    .last_change(a.head_commit.as_deref(), &a.path)?
                    .unwrap_or_else(|| (head.to_string(), now));
                named.insert(key, c.clone());
                c
            }
        };
        marks.push(StaleMark {
            observation_id: a.observation_id,
            commit,
            file: a.path.clone(),
            at_epoch,
        });
    }
    Ok(marks)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn anchor(head_blob: Option<&str>, content_blob: Option<&str>) -> LiveAnchor {
        LiveAnchor {
            observation_id: 1,
            path: "src/a.rs".into(),
            head_commit: Some("c".repeat(40)),
            head_blob: head_blob.map(String::from),
            content_blob: content_blob.map(String::from),
        }
    }

    #[test]
    fn an_unrelated_commit_leaves_the_file_current() {
        assert_eq!(judge(&anchor(Some("b1"), Some("b1")), Some("b1")), Verdict::Current);
    }

    #[test]
    fn committing_the_anchored_edit_keeps_it_current() {
        // Anchored while the edit was uncommitted: disk held b2, HEAD b1; the edit is committed.
        assert_eq!(judge(&anchor(Some("b1"), Some("b2")), Some("b2")), Verdict::Current);
    }

    #[test]
    fn a_later_commit_of_other_content_makes_it_stale() {
        assert_eq!(judge(&anchor(Some("b1"), Some("b2")), Some("b3")), Verdict::Changed);
    }

    #[test]
    fn a_deleting_commit_makes_it_stale_and_an_untracked_file_never_is() {
        assert_eq!(judge(&anchor(Some("b1"), Some("b1")), None), Verdict::Deleted);
        assert_eq!(judge(&anchor(None, Some("b9")), None), Verdict::Current);
        assert_eq!(judge(&anchor(None, Some("b9")), Some("b9")), Verdict::Current);
    }
}
