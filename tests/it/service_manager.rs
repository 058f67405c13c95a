//! Issue 16: memd under a service manager, without a real init system. The unit files pass
//! `systemd-analyze verify`, the launchd plist parses as a property list; the sd_notify protocol
//! on a socket of the test's own; socket activation through a listener the test bound; SIGHUP
//! reloads a live setting; SIGTERM under load with a notify socket drains and exits 0.

use std::os::unix::net::UnixDatagram;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{TestWorker, fixture_missing, init_body, observation_body, wait_until};

fn tool(name: &str, how: &str) -> Option<std::path::PathBuf> {
    let found = memd::service::install::find_on_path(std::env::var("PATH").ok().as_deref(), name);
    if found.is_none() {
        fixture_missing(name, how);
    }
    found
}

#[test]
fn installed_units_pass_systemd_analyze_and_uninstall_removes_exactly_them() {
    let Some(analyze) = tool("systemd-analyze", "apt-get install systemd") else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("data dir");
    let memd = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_memd"))
            .args(args)
            .env_clear()
            .env("HOME", home.path())
            .env("MEMD_DATA_DIR", &data)
            .env("MEMD_PORT", "37999")
            .env("PATH", "/nonexistent")
            .output()
            .unwrap()
    };
    let dry = memd(&["service", "install", "--dry-run", "--socket"]);
    assert!(dry.status.success(), "{dry:?}");
    let dry_text = String::from_utf8_lossy(&dry.stdout);
    assert!(
        dry_text.contains("would run: systemctl --user enable --now memd.socket"),
        "{dry_text}"
    );
    assert!(!home.path().join(".config").exists(), "a dry run writes nothing");

    let out = memd(&["service", "install", "--socket"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("systemctl is not on PATH; run these yourself"), "{text}");
    let units = home.path().join(".config/systemd/user");
    let (service, socket) = (units.join("memd.service"), units.join("memd.socket"));
    let unit = std::fs::read_to_string(&service).unwrap();
    assert!(
        unit.contains("Type=notify")
            && unit.contains(&format!(
                "ExecStart=\"{}\" serve",
                std::fs::canonicalize(env!("CARGO_BIN_EXE_memd")).unwrap().display()
            )),
        "{unit}"
    );
    assert!(
        unit.contains("\"MEMD_DATA_DIR=") && unit.contains("data dir\""),
        "the data dir with its space is quoted: {unit}"
    );
    assert!(std::fs::read_to_string(&socket).unwrap().contains("ListenStream=127.0.0.1:37999"));
    let verify = Command::new(analyze).arg("verify").arg(&service).arg(&socket).output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&verify.stdout),
        String::from_utf8_lossy(&verify.stderr)
    );
    assert!(verify.status.success() && said.trim().is_empty(), "systemd-analyze verify: {said}");

    let status = memd(&["service", "status"]);
    assert!(String::from_utf8_lossy(&status.stdout).contains("socket-activated"), "{status:?}");
    let doctor = memd(&["doctor"]);
    assert!(
        String::from_utf8_lossy(&doctor.stdout).contains("installed for Systemd (socket-activated)"),
        "{doctor:?}"
    );

    let out = memd(&["service", "uninstall"]);
    assert!(out.status.success(), "{out:?}");
    let left: Vec<_> = std::fs::read_dir(&units).unwrap().collect();
    assert!(left.is_empty(), "uninstall removed both units: {left:?}");
    assert!(!data.join("service.json").exists());
}

#[test]
fn the_launchd_plist_parses_with_its_keys() {
    let Some(python) = tool("python3", "apt-get install python3") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let plist = memd::service::units::launchd_plist(&memd::service::units::UnitParams {
        binary: "/usr/local/bin/memd".into(),
        data_dir: dir.path().join("a&b"),
        port: 37_800,
        socket: false,
    });
    let path = dir.path().join("dev.memd.worker.plist");
    std::fs::write(&path, plist).unwrap();
    let script = "import plistlib,sys,json; d=plistlib.load(open(sys.argv[1],'rb')); print(json.dumps(d))";
    let out = Command::new(python).args(["-c", script]).arg(&path).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let d: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(d["Label"], "dev.memd.worker");
    assert_eq!(d["ProgramArguments"], serde_json::json!(["/usr/local/bin/memd", "serve"]));
    assert_eq!(d["RunAtLoad"], true);
    assert_eq!(d["KeepAlive"]["SuccessfulExit"], false);
    assert_eq!(d["ProcessType"], "Background");
    assert_eq!(d["ExitTimeOut"], 30);
    assert!(d["StandardErrorPath"].as_str().unwrap().ends_with("a&b/logs/launchd.err.log"));
    assert_eq!(d["EnvironmentVariables"]["MEMD_PORT"], "37800");
}

/// Datagrams received on `sock` until `until` matches one or the deadline passes.
fn receive_until(sock: &UnixDatagram, deadline: Duration, mut until: impl FnMut(&str) -> bool) -> Vec<String> {
    sock.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
    let end = Instant::now() + deadline;
    let mut got = Vec::new();
    let mut buf = vec![0u8; 4096];
    while Instant::now() < end {
        if let Ok(n) = sock.recv(&mut buf) {
            let msg = String::from_utf8_lossy(&buf[..n]).into_owned();
            let done = until(&msg);
            got.push(msg);
            if done {
                break;
            }
        }
    }
    got
}

#[test]
fn sd_notify_says_ready_after_readiness_pings_the_watchdog_and_says_stopping() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notify.sock");
    let sock = UnixDatagram::bind(&path).unwrap();
    let mut w = TestWorker::start(&[("NOTIFY_SOCKET", path.to_str().unwrap()), ("WATCHDOG_USEC", "400000")]);
    let got = receive_until(&sock, Duration::from_secs(10), |m| m.contains("READY=1"));
    assert!(got.iter().any(|m| m.contains("READY=1") && m.contains("STATUS=")), "{got:?}");
    assert_eq!(w.get("/api/readiness").status, 200, "READY=1 came once readiness answers 200");
    let mut pings = 0;
    receive_until(&sock, Duration::from_secs(10), |m| {
        pings += usize::from(m == "WATCHDOG=1");
        pings >= 3
    });
    assert!(pings >= 3, "WATCHDOG=1 every 200 ms: {pings} pings");
    assert_eq!(w.status()["supervisor"]["service_manager"], "systemd");
    let status = w.stop();
    assert!(status.success());
    let got = receive_until(&sock, Duration::from_secs(5), |m| m.contains("STOPPING=1"));
    assert!(
        got.iter().any(|m| m.contains("STOPPING=1") && m.contains("EXTEND_TIMEOUT_USEC=")),
        "{got:?}"
    );
}

#[test]
fn sigterm_under_load_with_a_notify_socket_drains_within_the_stop_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notify.sock");
    let sock = UnixDatagram::bind(&path).unwrap();
    let mut w = TestWorker::start(&[("NOTIFY_SOCKET", path.to_str().unwrap())]);
    let begun = Instant::now();
    let status = crate::worker_durability::sigterm_under_64_clients(&mut w);
    assert!(status.success(), "exit status {status:?}");
    let took = begun.elapsed();
    assert!(
        took < Duration::from_secs(memd::service::STOP_TIMEOUT_S),
        "load and drain took {took:?}"
    );
    let got = receive_until(&sock, Duration::from_secs(5), |m| m.contains("STOPPING=1"));
    assert!(got.iter().any(|m| m.contains("STOPPING=1")), "{got:?}");
}

#[test]
fn a_listener_passed_by_the_manager_is_served() {
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let fd = listener.as_raw_fd();
    let mut w = TestWorker::prepared(&[]);
    let mut cmd = w.command();
    // The shell's pid is memd's after `exec`: LISTEN_PID names it, as systemd does after fork.
    cmd.env_remove("MEMD_PORT").env("MEMD_PORT", "1");
    let mut sh = Command::new("/bin/sh");
    sh.arg("-c")
        .arg("LISTEN_PID=$$ LISTEN_FDS=1 LISTEN_FDNAMES=memd exec \"$0\" serve")
        .arg(env!("CARGO_BIN_EXE_memd"));
    sh.env_clear()
        .envs(cmd.get_envs().filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned()))));
    sh.stdout(Stdio::null()).stderr(Stdio::null());
    // SAFETY: dup2 and fcntl are async-signal-safe; fd 3 becomes the listener, without
    // close-on-exec.
    unsafe {
        sh.pre_exec(move || {
            if fd == 3 {
                libc::fcntl(3, libc::F_SETFD, 0);
            } else if libc::dup2(fd, 3) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = sh.spawn().unwrap();
    drop(listener);
    w.child = Some(child);
    w.port = addr.port();
    assert!(
        wait_until(Duration::from_secs(30), || memd::client::http::send(
            addr,
            &memd::client::http::Request {
                method: "GET",
                path: "/api/readiness",
                ..Default::default()
            },
            Duration::from_secs(1)
        )
        .is_ok_and(|r| r.status == 200)),
        "the worker serves on the passed listener"
    );
    w.token = std::fs::read_to_string(w.data_dir().join("token")).unwrap().trim().to_string();
    assert_eq!(w.post("/api/sessions/init", &init_body("act", "hello")).status, 200);
    assert_eq!(w.post("/api/sessions/observations", &observation_body("act", 1)).status, 200);
    assert!(wait_until(Duration::from_secs(10), || w.count("SELECT count(*) FROM tool_uses") == 1));
    let pid = memd::data_dir::read_pid_file(&w.data_dir().join("memd.pid")).unwrap();
    assert_eq!(pid.port, addr.port(), "the PID file names the passed listener's port");
    assert!(w.stop().success());
}

#[test]
fn sighup_applies_a_new_budget_without_a_restart() {
    let mut w = TestWorker::prepared(&[("MEMD_LOG", "info")]);
    let settings = w.data_dir().join("settings.json");
    std::fs::write(&settings, r#"{"MEMD_DAILY_TOKEN_BUDGET": "1000"}"#).unwrap();
    w.spawn();
    assert_eq!(w.status()["provider"]["budget"], 1000);
    let pid = w.pid().unwrap();
    std::fs::write(&settings, r#"{"MEMD_DAILY_TOKEN_BUDGET": "5000", "MEMD_DB_READERS": "2"}"#).unwrap();
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(pid as i32, libc::SIGHUP) };
    assert!(
        wait_until(Duration::from_secs(10), || w.status()["provider"]["budget"] == 5000),
        "budget after SIGHUP: {}",
        w.status()["provider"]["budget"]
    );
    assert_eq!(w.pid(), Some(pid), "the same process");
    // The new settings apply before the reload logs them: wait for the line.
    let read_log = || std::fs::read_to_string(w.data_dir().join("logs/memd.log")).unwrap_or_default();
    wait_until(Duration::from_secs(10), || read_log().contains("settings reloaded"));
    let log = read_log();
    assert!(
        log.contains("settings reloaded") && log.contains("MEMD_DAILY_TOKEN_BUDGET") && log.contains("needs_restart=MEMD_DB_READERS"),
        "the log says what was applied and what needs a restart:\n{log}"
    );
    assert!(w.stop().success());
}
