//! Auto-start: 20 hooks at once with no worker start exactly one `memd serve`, and every event
//! ends up stored (delivered directly or through the spool the new worker ingests).

use crate::support::hook::*;
use crate::support::{DEADLINE, wait_until};

#[test]
fn twenty_concurrent_hooks_start_one_worker_and_lose_nothing() {
    let data = tempfile::tempdir().unwrap();
    let env = [("MEMD_SPOOL_SCAN_MS", "200"), ("MEMD_OBSERVER_BATCH_DEBOUNCE_MS", "50")];
    let children: Vec<_> = (0..20)
        .map(|i| {
            std::thread::spawn({
                let cmd = bare_command(data.path(), &env);
                move || run_hook(cmd, "observation", &post_tool("auto-s", i))
            })
        })
        .collect();
    for c in children {
        let out = c.join().unwrap();
        assert_eq!((out.status.code(), stdout(&out)), (Some(0), "{}\n".to_string()));
    }
    let pid_file = data.path().join("memd.pid");
    assert!(
        wait_until(DEADLINE, || memd::data_dir::read_pid_file(&pid_file).is_some_and(|p| p.port != 0)),
        "a worker started"
    );
    let db = data.path().join("memd.db");
    let stored = || {
        rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .and_then(|c| c.query_row("SELECT count(*) FROM tool_uses", [], |r| r.get::<_, i64>(0)))
            .unwrap_or(0)
    };
    assert!(wait_until(DEADLINE, || stored() == 20), "all 20 events stored (got {})", stored());
    let log = std::fs::read_to_string(data.path().join("logs/hook.log")).unwrap_or_default();
    assert_eq!(
        log.matches("started the worker").count(),
        1,
        "exactly one hook spawned a worker:\n{log}"
    );
    let serve_out = std::fs::read_to_string(data.path().join("logs/serve.out")).unwrap_or_default();
    assert!(
        !serve_out.contains("already running"),
        "no second worker was attempted:\n{serve_out}"
    );
    assert!(!data.path().join("spawn.lock").exists(), "the worker removed the spawn lock");
    // Stop the worker the hooks started.
    let pid = memd::data_dir::read_pid_file(&pid_file).unwrap().pid;
    // SAFETY: signalling the worker this test caused to be started.
    unsafe { libc::kill(pid as i32, libc::SIGTERM) };
    assert!(wait_until(DEADLINE, || !pid_file.exists()), "worker stopped");
}
