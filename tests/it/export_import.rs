//! `memd export` and `memd import-md` (issue 39) between two real workers: observations from the
//! extractive observer and saved memories (one superseding another), exported as Markdown and as
//! JSON, imported into an empty data dir — the same observations (ids, every field but the trust an
//! import sets on its own terms, links); a second import adds nothing; a broken file is named and
//! skipped, the rest imported.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{TestWorker, init_body, observation_body, wait_until};

fn memd(w: &TestWorker, args: &[&str]) -> (bool, String, String) {
    let out = w.command().args(args).output().expect("run memd");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Every observation as `GET /api/export` gives it, without the session's host id (a new
/// store may name it `import-…` only when it clashes, which it does not here).
fn everything(w: &TestWorker) -> Vec<Value> {
    let v = w.get("/api/export?limit=500").json().unwrap();
    v["items"].as_array().unwrap().clone()
}

/// A row without the fields an import sets on its own terms (origin, provenance, imported_from).
fn without_trust(o: &Value) -> Value {
    let mut o = o.clone();
    for k in ["origin", "provenance", "imported_from"] {
        o.as_object_mut().unwrap().remove(k);
    }
    o
}

fn seeded() -> TestWorker {
    let w = TestWorker::start(&[("MEMD_PROVIDER", "extractive"), ("MEMD_OBSERVER_BATCH_DEBOUNCE_MS", "50")]);
    assert_eq!(w.post("/api/sessions/init", &init_body("exp-1", "fix the build")).status, 200);
    for i in 0..3 {
        assert_eq!(w.post("/api/sessions/observations", &observation_body("exp-1", i)).status, 200);
    }
    assert_eq!(w.post("/api/sessions/complete", &json!({"contentSessionId": "exp-1"})).status, 200);
    assert!(
        wait_until(Duration::from_secs(30), || w.count("SELECT count(*) FROM observations") >= 1),
        "the extractive observer wrote an observation"
    );
    let old = w.post(
        "/api/memory/save",
        &json!({"text": "we pin tokio to 1.38", "project": "acme", "concepts": ["deps"]}),
    );
    let old = old.json().unwrap()["id"].as_i64().unwrap();
    let r = w.post(
        "/api/memory/save",
        &json!({"text": "the workspace moved to tokio 1.40", "project": "acme", "supersedes": old, "provenance": "user"}),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    w.post(
        "/api/memory/save",
        &json!({"text": "deploys need the key AKIAIOSFODNN7EXAMPLE in CI", "project": "blog", "type": "decision"}),
    );
    w
}

#[test]
fn an_export_imported_into_an_empty_data_dir_is_the_same_and_a_second_import_adds_nothing() {
    let src = seeded();
    let before = everything(&src);
    assert!(before.len() >= 4, "{before:?}");
    assert!(before.iter().any(|o| o["superseded_by"].is_i64()), "a link to carry over");
    for format in ["md", "json"] {
        let out = tempfile::tempdir().unwrap();
        let dir = out.path().to_str().unwrap();
        let (ok, stdout, stderr) = memd(&src, &["export", "--format", format, "--out", dir]);
        assert!(ok, "{stderr}");
        assert!(stdout.starts_with(&format!("Exported {} observations", before.len())), "{stdout}");
        let index = std::fs::read_to_string(out.path().join(format!("index.{format}"))).unwrap();
        assert!(index.contains("tokio 1.40"), "{index}");
        let files = std::fs::read_dir(out.path().join("observations")).unwrap().count();
        assert_eq!(files, before.len(), "one file per observation");
        if format == "md" {
            let first = std::fs::read_dir(out.path().join("observations")).unwrap().next().unwrap().unwrap();
            let text = std::fs::read_to_string(first.path()).unwrap();
            for key in [
                "\nid: ",
                "\ntype: ",
                "\nprovenance: ",
                "\ncreated_at: ",
                "\nfiles_modified: ",
                "\nconcepts: ",
            ] {
                assert!(text.contains(key), "front matter has {key:?}: {text}");
            }
            assert!(!index.contains("AKIAIOSFODNN7EXAMPLE"), "the secret was redacted when saved");
        }

        let dst = TestWorker::start(&[]);
        let (ok, stdout, stderr) = memd(&dst, &["import-md", dir]);
        assert!(ok, "{stdout}{stderr}");
        assert!(
            stdout.contains(&format!("Imported {n} observations ({n} under their own id", n = before.len())),
            "{stdout}"
        );
        let after = everything(&dst);
        for o in &after {
            // An import's trust is at most an import's (issue 50), whatever the file says.
            assert_eq!(o["origin"], "import", "{o}");
            assert_eq!(o["imported_from"], "import-md", "{o}");
            let p = o["provenance"].as_str().unwrap();
            assert!(p == "import" || p == "tool_output", "{o}");
        }
        assert_eq!(
            after.iter().map(without_trust).collect::<Vec<_>>(),
            before.iter().map(without_trust).collect::<Vec<_>>(),
            "{format}: ids, every other field, links and sessions"
        );
        let (ok, stdout, _) = memd(&dst, &["import-md", dir]);
        assert!(ok);
        assert!(
            stdout.starts_with(&format!(
                "Imported 0 observations (0 under their own id, 0 under a new id); {} already here",
                before.len()
            )),
            "{stdout}"
        );
        assert_eq!(everything(&dst).len(), before.len(), "a second import adds nothing");
        let hit = dst.get("/api/search?query=tokio&project=acme").text();
        assert!(hit.contains("tokio 1.40"), "imported rows are searchable: {hit}");
    }
}

#[test]
fn a_broken_file_is_named_and_skipped_and_the_rest_is_imported() {
    let src = seeded();
    let n = everything(&src).len();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().to_str().unwrap();
    assert!(memd(&src, &["export", "--out", dir, "--project", "acme"]).0);
    let acme = std::fs::read_dir(out.path().join("observations")).unwrap().count();
    assert!(acme < n && acme >= 2, "--project narrows: {acme} of {n}");
    std::fs::write(out.path().join("observations/999999-broken.md"), "---\nid 12\n---\n").unwrap();
    let dst = TestWorker::start(&[]);
    let (ok, stdout, stderr) = memd(&dst, &["import-md", dir]);
    assert!(!ok, "a skipped file fails the command");
    assert!(stderr.contains("999999-broken.md: front matter line 2"), "{stderr}");
    assert!(stdout.contains(&format!("Imported {acme} observations")), "{stdout}");
}
