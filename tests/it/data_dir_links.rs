//! Issue 34, a data dir that cannot be redirected: a symbolic link (or another user's file) where
//! memd creates its logs, spool, backups or token is refused with a message naming the path, and
//! nothing is written through it; a token readable by other users is refused.

use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;
use std::time::Duration;

use crate::support::hook::{POST_TOOL, run_hook};
use crate::support::{TestWorker, observation_body};

/// `memd serve` on `w`'s data dir, expected to refuse: its stderr.
fn serve_refuses(w: &TestWorker) -> String {
    let mut child = w
        .command()
        .arg("serve")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    for _ in 0..100 {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(!status.success());
            let mut err = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
            return err;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    panic!("memd serve did not refuse");
}

fn empty_dir(p: &Path) -> bool {
    std::fs::read_dir(p).unwrap().next().is_none()
}

#[test]
fn issue_34_linked_logs_spool_or_backups_directories_are_refused_and_never_written_through() {
    for name in ["logs", "spool", "backups"] {
        let w = TestWorker::prepared(&[]);
        let elsewhere = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(w.data_dir()).unwrap();
        symlink(elsewhere.path(), w.data_dir().join(name)).unwrap();
        let said = serve_refuses(&w);
        let path = w.data_dir().join(name);
        assert!(
            said.contains(&path.display().to_string()) && said.contains("symbolic link"),
            "{name}: {said}"
        );
        assert!(empty_dir(elsewhere.path()), "{name}: nothing written through the link");
    }
    // The hook, worker down: the spool link is not followed either.
    let w = TestWorker::prepared(&[("MEMD_AUTOSTART", "false")]);
    let elsewhere = tempfile::tempdir().unwrap();
    symlink(elsewhere.path(), w.data_dir().join("spool")).unwrap();
    let out = run_hook(w.command(), "observation", POST_TOOL);
    assert_eq!(out.status.code(), Some(0), "the hook never fails the agent");
    assert!(empty_dir(elsewhere.path()), "the hook spools nothing through the link");
}

#[test]
fn issue_34_a_linked_log_file_is_not_written_through() {
    let mut w = TestWorker::prepared(&[]);
    let elsewhere = tempfile::tempdir().unwrap();
    let target = elsewhere.path().join("victim");
    std::fs::write(&target, "").unwrap();
    std::fs::create_dir_all(w.data_dir().join("logs")).unwrap();
    std::fs::set_permissions(w.data_dir().join("logs"), std::fs::Permissions::from_mode(0o700)).unwrap();
    symlink(&target, w.data_dir().join("logs/memd.log")).unwrap();
    symlink(&target, w.data_dir().join("logs/hook.log")).unwrap();
    w.spawn();
    assert_eq!(w.post("/api/sessions/observations", &observation_body("s", 1)).status, 200);
    let _ = run_hook(w.command(), "observation", POST_TOOL);
    assert_eq!(w.stop().code(), Some(0));
    assert_eq!(std::fs::read(&target).unwrap().len(), 0, "no log line reached the link's target");
}

#[test]
fn issue_34_a_linked_or_exposed_token_is_refused() {
    // A link to a file others can read: the worker would hand out a secret everyone knows.
    let w = TestWorker::prepared(&[]);
    let elsewhere = tempfile::tempdir().unwrap();
    let shared = elsewhere.path().join("token");
    std::fs::write(&shared, "a".repeat(64)).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o644)).unwrap();
    symlink(&shared, w.data_dir().join("token")).unwrap();
    let said = serve_refuses(&w);
    assert!(said.contains("token") && said.contains("symbolic link"), "{said}");

    // A regular token file that is group- or world-readable.
    let w = TestWorker::prepared(&[]);
    let token = w.data_dir().join("token");
    std::fs::write(&token, "b".repeat(64)).unwrap();
    std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o644)).unwrap();
    let said = serve_refuses(&w);
    assert!(
        said.contains("readable by other users") && said.contains(&token.display().to_string()),
        "{said}"
    );
}

#[test]
fn issue_34_a_fifo_as_settings_file_does_not_hang_the_worker() {
    let mut w = TestWorker::prepared(&[]);
    let path = std::ffi::CString::new(w.data_dir().join("settings.json").to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
    w.spawn();
    let warnings = w.status()["warnings"].to_string();
    assert!(
        warnings.contains("settings.json") && warnings.contains("not a regular file"),
        "{warnings}"
    );
}
