//! Ports (issue 37): a port held by another program or by another data dir's memd is named in one
//! line by the command that wanted a worker there; a taken default port makes the worker pick a
//! free one (memd.pid tells the CLI); `MEMD_PORT` that is not a port is an error; `memd serve
//! --port/--data-dir` override the environment.

use std::net::TcpListener;
use std::process::{Command, Output};
use std::time::Duration;

use crate::support::{TestWorker, wait_until};

fn memd(home: &std::path::Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_memd"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("MEMD_DATA_DIR", home.join(".memd"))
        .env("MEMD_LOG", "warn")
        .envs(env.iter().copied())
        .args(args)
        .output()
        .expect("run memd")
}

fn stop(home: &std::path::Path) {
    let _ = memd(home, &[], &["stop"]);
}

#[test]
fn a_taken_port_is_named_by_who_holds_it() {
    // Another program: accepts connections, never speaks HTTP.
    let other = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = other.local_addr().unwrap().port().to_string();
    let home = tempfile::tempdir().unwrap();
    let out = memd(home.path(), &[("MEMD_PORT", &port)], &["search", "anything"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("port {port} is held by another program (not memd)")), "{err}");

    // Another data dir's memd on an explicit port.
    let a = TestWorker::start(&[]);
    let a_port = a.addr().port().to_string();
    let home_b = tempfile::tempdir().unwrap();
    let out = memd(home_b.path(), &[("MEMD_PORT", &a_port)], &["search", "anything"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains(&format!("port {a_port} is held by another memd (pid {}", a.pid().unwrap())),
        "{err}"
    );
    drop(other);
}

#[test]
fn a_taken_default_port_makes_the_worker_pick_a_free_one() {
    let home = tempfile::tempdir().unwrap();
    // Hold the default port (37800 + uid % 100) if nobody does yet; either way it is taken.
    let default = memd::config::default_port();
    let _held = TcpListener::bind(("127.0.0.1", default)).ok();
    let out = memd(home.path(), &[], &["search", "anything"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let pid = memd::data_dir::read_pid_file(&home.path().join(".memd/memd.pid")).expect("memd.pid");
    assert!(
        pid.port != 0 && pid.port != default,
        "listening on {} instead of {default}",
        pid.port
    );
    stop(home.path());
}

#[test]
fn memd_port_must_be_a_port_and_serve_flags_override_the_environment() {
    let home = tempfile::tempdir().unwrap();
    let out = memd(home.path(), &[("MEMD_PORT", "70000")], &["serve"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("MEMD_PORT=\"70000\" is not a port number"), "{err}");

    let dir = home.path().join("elsewhere");
    let mut child = Command::new(env!("CARGO_BIN_EXE_memd"))
        .env_clear()
        .env("HOME", home.path())
        .env("MEMD_PORT", "not-a-port")
        .env("MEMD_LOG", "warn")
        .args(["serve", "--port", "0", "--data-dir"])
        .arg(&dir)
        .spawn()
        .unwrap();
    let started = wait_until(Duration::from_secs(20), || {
        memd::data_dir::read_pid_file(&dir.join("memd.pid")).is_some_and(|p| p.port != 0)
    });
    let _ = child.kill();
    let _ = child.wait();
    assert!(started, "--port 0 --data-dir win over MEMD_PORT and MEMD_DATA_DIR");
}
