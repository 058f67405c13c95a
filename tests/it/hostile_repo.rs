//! Issue 50, a hostile repository: one work tree whose git configuration names a program for every
//! setting that can run one (fsmonitor, hooks, pager, signature check, external diff, textconv and
//! filter drivers, ssh, credentials, editors, an `includeIf` include), a nested repository and a
//! `.git` file pointing at a hostile git directory, plus links and FIFOs planted where memd writes.
//! A whole session runs through it — hooks, SessionStart, anchoring, the freshness check after a
//! signed commit, the folder pass, `memd promote` — and no program the repository names runs, and
//! nothing is written outside the project or through a link.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::json;

use crate::support::hook::run_hook;
use crate::support::{TestWorker, wait_until};

/// The test's own git (the repository's settings are the attacker's: setup never runs them).
fn setup_git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "core.fsmonitor=false",
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
        ])
        .args([
            "-c",
            "commit.gpgSign=false",
            "-c",
            "log.showSignature=false",
            "-c",
            "filter.evil.clean=cat",
        ])
        .args([
            "-c",
            "filter.evil.smudge=cat",
            "-c",
            "filter.evil.process=",
            "-c",
            "diff.external=",
            "-c",
            "core.pager=cat",
        ])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A git directory's config that names `mark` for everything that can run a program.
fn hostile_config(mark: &Path, hooks: &Path, include: &Path) -> String {
    let m = mark.display();
    format!(
        "[core]\n\tfsmonitor = {m}\n\thooksPath = {hooks}\n\tpager = {m}\n\tsshCommand = {m}\n\teditor = {m}\n\taskPass = {m}\n\tgitProxy = {m}\n\
         [log]\n\tshowSignature = true\n[gpg]\n\tprogram = {m}\n[gpg \"ssh\"]\n\tprogram = {m}\n\
         [diff]\n\texternal = {m}\n[diff \"evil\"]\n\ttextconv = {m}\n\
         [filter \"evil\"]\n\tclean = {m}\n\tsmudge = {m}\n\tprocess = {m}\n\
         [credential]\n\thelper = !{m}\n[sequence]\n\teditor = {m}\n[uploadpack]\n\tpackObjectsHook = {m}\n\
         [pager]\n\tlog = {m}\n\tls-tree = {m}\n\tcheck-ignore = {m}\n\
         [includeIf \"gitdir:**\"]\n\tpath = {include}\n",
        hooks = hooks.display(),
        include = include.display(),
    )
}

/// A commit of `path` = `text` on HEAD that carries a signature header (so `log.showSignature`
/// would run `gpg.program` to check it): committed plainly, then the commit object rewritten.
fn signed_commit(repo: &Path, path: &str, text: &str, scratch: &Path) {
    std::fs::write(repo.join(path), text).unwrap();
    setup_git(repo, &["add", path]);
    setup_git(repo, &["commit", "-q", "-m", &format!("change {path}")]);
    let plain = setup_git(repo, &["cat-file", "commit", "HEAD"]);
    let (head, body) = plain.split_once("\n\n").unwrap();
    let signed = format!("{head}\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEEabc\n -----END PGP SIGNATURE-----\n\n{body}\n");
    let file = scratch.join("commit.txt");
    std::fs::write(&file, signed).unwrap();
    let id = setup_git(repo, &["hash-object", "-t", "commit", "-w", "--no-filters", file.to_str().unwrap()]);
    setup_git(repo, &["update-ref", "HEAD", &id]);
}

fn mkfifo(path: &Path) {
    let ok = Command::new("mkfifo").arg(path).status().unwrap().success();
    assert!(ok, "mkfifo {}", path.display());
}

fn hook(w: &TestWorker, handler: &str, payload: serde_json::Value) {
    let out = run_hook(w.command(), handler, &payload.to_string());
    assert_eq!(out.status.code(), Some(0), "{handler}: {}", String::from_utf8_lossy(&out.stderr));
}

fn write_call(session: &str, cwd: &Path, i: usize, path: &Path) -> serde_json::Value {
    json!({
        "session_id": session, "cwd": cwd, "hook_event_name": "PostToolUse", "tool_name": "Write",
        "transcript_path": "/nonexistent.jsonl",
        "tool_input": {"file_path": path, "content": format!("pub fn step_{i}() {{}}\n")},
        "tool_response": {"type": "update", "filePath": path},
        "tool_use_id": format!("toolu_{session}_{i}"),
    })
}

/// One session through the hooks: SessionStart, a prompt, a Write of each file, Stop, SessionEnd.
fn session(w: &TestWorker, session: &str, cwd: &Path, files: &[PathBuf]) {
    let base = json!({"session_id": session, "cwd": cwd, "transcript_path": "/nonexistent.jsonl"});
    let with = |extra: serde_json::Value| {
        let mut v = base.clone();
        v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        v
    };
    hook(w, "context", with(json!({"hook_event_name": "SessionStart", "source": "startup"})));
    hook(
        w,
        "session-init",
        with(json!({"hook_event_name": "UserPromptSubmit", "prompt": "tidy the shop"})),
    );
    for (i, f) in files.iter().enumerate() {
        // The file exists where the agent wrote it (anchoring hashes it).
        if let Some(dir) = f.parent() {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(f, format!("pub fn step_{i}() {{}}\n")).unwrap();
        hook(w, "observation", write_call(session, cwd, i, f));
    }
    hook(
        w,
        "summarize",
        with(json!({"hook_event_name": "Stop", "stop_hook_active": false, "last_assistant_message": "done"})),
    );
    hook(
        w,
        "complete",
        with(json!({"hook_event_name": "SessionEnd", "reason": "prompt_input_exit"})),
    );
}

fn marks(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("ran")).unwrap_or_default()
}

#[test]
fn a_hostile_repository_runs_nothing_and_gets_nothing_written_outside_or_through_a_link() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let (markers, outside, hooks) = (t.join("markers"), t.join("outside"), t.join("hooks"));
    for d in [&markers, &outside, &hooks] {
        std::fs::create_dir_all(d).unwrap();
    }
    let mark = t.join("mark");
    std::fs::write(
        &mark,
        format!(
            "#!/bin/sh\necho \"$0 $*\" >> '{}'\ncat >/dev/null 2>&1\nexit 1\n",
            markers.join("ran").display()
        ),
    )
    .unwrap();
    Command::new("chmod").arg("+x").arg(&mark).status().unwrap();
    for h in [
        "pre-commit",
        "post-commit",
        "post-checkout",
        "post-index-change",
        "reference-transaction",
        "fsmonitor-watchman",
    ] {
        symlink(&mark, hooks.join(h)).unwrap();
    }
    let include = t.join("evil.inc");
    std::fs::write(
        &include,
        format!(
            "[core]\n\tfsmonitor = {m}\n\tpager = {m}\n[diff]\n\texternal = {m}\n",
            m = mark.display()
        ),
    )
    .unwrap();
    std::fs::write(outside.join(".bashrc"), "mine\n").unwrap();
    std::fs::write(outside.join("notes.md"), "my notes\n").unwrap();

    // The project, a nested repository inside it, and a project whose .git is a file.
    let repo = t.join("shop");
    for d in ["src", "lib", "docs", "inner/src"] {
        std::fs::create_dir_all(repo.join(d)).unwrap();
    }
    setup_git(&repo, &["init", "-q"]);
    std::fs::write(repo.join(".gitattributes"), "* filter=evil diff=evil\n").unwrap();
    std::fs::write(repo.join("src/a.rs"), "pub fn a() {}\n").unwrap();
    std::fs::write(repo.join("lib/b.rs"), "pub fn b() {}\n").unwrap();
    setup_git(&repo, &["add", ".gitattributes", "src/a.rs", "lib/b.rs"]);
    setup_git(&repo, &["commit", "-q", "-m", "start"]);
    let inner = repo.join("inner");
    setup_git(&inner, &["init", "-q"]);
    std::fs::write(inner.join("src/c.rs"), "pub fn c() {}\n").unwrap();
    setup_git(&inner, &["add", "."]);
    setup_git(&inner, &["commit", "-q", "-m", "inner"]);
    let linked_proj = t.join("work3");
    std::fs::create_dir_all(linked_proj.join("src")).unwrap();
    setup_git(
        t,
        &[
            "init",
            "-q",
            "--separate-git-dir",
            t.join("work3.git").to_str().unwrap(),
            linked_proj.to_str().unwrap(),
        ],
    );
    assert!(linked_proj.join(".git").is_file(), "work3's .git is a gitdir: file");
    std::fs::write(linked_proj.join("src/d.rs"), "pub fn d() {}\n").unwrap();
    setup_git(&linked_proj, &["add", "."]);
    setup_git(&linked_proj, &["commit", "-q", "-m", "d"]);
    let evil = hostile_config(&mark, &hooks, &include);
    for gitdir in [repo.join(".git"), inner.join(".git"), t.join("work3.git")] {
        let mut cfg = std::fs::read_to_string(gitdir.join("config")).unwrap();
        cfg.push_str(&evil);
        std::fs::write(gitdir.join("config"), cfg).unwrap();
    }
    // Plants where memd writes: the old fixed temporary names as links to a git hook and a shell
    // rc, a linked folder, FIFOs at a temporary name and at a context file, CLAUDE.md as a link.
    symlink("../.git/hooks/pre-commit", repo.join("src/.CLAUDE.md.memd-tmp")).unwrap();
    symlink(outside.join(".bashrc"), repo.join(".CLAUDE.md.memd-tmp")).unwrap();
    symlink(&outside, repo.join("linked")).unwrap();
    mkfifo(&repo.join("lib/.CLAUDE.md.memd-tmp"));
    mkfifo(&repo.join("docs/CLAUDE.md"));
    symlink(outside.join("notes.md"), repo.join("CLAUDE.md")).unwrap();
    assert_eq!(marks(&markers), "", "setup ran nothing of the repository's");

    let w = TestWorker::start(&[
        ("MEMD_PROVIDER", "extractive"),
        ("MEMD_OBSERVER_BATCH_DEBOUNCE_MS", "50"),
        ("MEMD_FOLDER_CONTEXT", "true"),
    ]);
    let files = [
        repo.join("src/a.rs"),
        repo.join("lib/b.rs"),
        repo.join("docs/guide.rs"),
        repo.join("linked/x.rs"),
        repo.join("inner/src/c.rs"),
        repo.join("main.rs"),
    ];
    session(&w, "hostile-1", &repo, &files);
    session(&w, "hostile-2", &linked_proj, &[linked_proj.join("src/d.rs")]);
    assert!(
        wait_until(Duration::from_secs(60), || {
            w.count("SELECT count(*) FROM observations WHERE files_modified <> '[]'") >= 2
                && w.count("SELECT count(*) FROM anchor_queue") == 0
                && w.count("SELECT count(*) FROM observation_anchors") >= 2
        }),
        "observations made and anchored"
    );
    assert_eq!(marks(&markers), "", "hooks and anchoring ran nothing of the repository's");

    // A signed commit of an anchored file in each repository, then a SessionStart: the freshness
    // check runs `git log` over it (which, with log.showSignature, would run gpg.program).
    signed_commit(&repo, "src/a.rs", "pub fn a() { changed() }\n", t);
    signed_commit(&linked_proj, "src/d.rs", "pub fn d() { changed() }\n", t);
    assert_eq!(marks(&markers), "", "setup ran nothing");
    for (s, cwd) in [("hostile-3", &repo), ("hostile-4", &linked_proj)] {
        hook(
            &w,
            "context",
            json!({"session_id": s, "cwd": cwd, "hook_event_name": "SessionStart", "source": "startup"}),
        );
    }
    assert!(
        wait_until(Duration::from_secs(30), || w
            .count("SELECT count(*) FROM observations WHERE stale_commit IS NOT NULL")
            >= 2),
        "the freshness check ran git log and marked both observations stale"
    );
    assert_eq!(marks(&markers), "", "the freshness check ran nothing of the repository's");

    // The folder pass: completes (a FIFO cannot hang it), writes only regular files inside the project.
    let mut folders = w.command();
    folders.arg("folders");
    let out = crate::support::output_within(folders, Duration::from_secs(60)).expect("the folder pass finishes");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(marks(&markers), "", "the folder pass ran nothing of the repository's: {stdout}");
    assert!(
        std::fs::symlink_metadata(repo.join("src/CLAUDE.md")).unwrap().file_type().is_file(),
        "{stdout}"
    );
    assert!(
        std::fs::read_to_string(repo.join("lib/CLAUDE.md")).unwrap().contains("### b.rs"),
        "{stdout}"
    );
    assert!(
        stdout.contains("docs/CLAUDE.md") && stdout.contains("FIFO"),
        "the FIFO is skipped with its reason: {stdout}"
    );
    assert!(
        stdout.contains("linked") && stdout.contains("symbolic link"),
        "the linked folder is refused: {stdout}"
    );
    assert!(!repo.join(".git/hooks/pre-commit").exists(), "no git hook was created");
    assert_eq!(std::fs::read_to_string(outside.join(".bashrc")).unwrap(), "mine\n");
    assert!(!outside.join("CLAUDE.md").exists(), "nothing written through the linked folder");
    assert_eq!(std::fs::read_to_string(outside.join("notes.md")).unwrap(), "my notes\n");

    // memd promote: CLAUDE.md a link out of the project is refused; a .git-file project is written.
    let id = w.count("SELECT max(id) FROM observations WHERE quarantined = 0");
    let out = w
        .command()
        .current_dir(&repo)
        .args(["promote", &id.to_string(), "--to", "claude-md"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("symbolic link") && err.contains("CLAUDE.md"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(outside.join("notes.md")).unwrap(), "my notes\n");
    let out = w
        .command()
        .current_dir(&linked_proj)
        .args(["promote", &id.to_string(), "--to", "claude-md"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(std::fs::read_to_string(linked_proj.join("CLAUDE.md")).unwrap().starts_with("- "));
    assert_eq!(marks(&markers), "", "promote ran nothing of the repository's");
}
