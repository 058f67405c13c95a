//! The text of the service files `memd service install` writes (pure: tests check them with
//! `systemd-analyze verify` and a property-list parser).
//!
//! systemd user units: `memd.service` is `Type=notify` (memd says `READY=1` once readiness would
//! answer 200) with a watchdog, `Restart=on-failure`, `KillMode=mixed` (SIGTERM to memd, then
//! SIGKILL to the whole group only if it outlives `TimeoutStopSec`, so observer subprocesses
//! never leak). With `--socket`, `memd.socket` owns `127.0.0.1:<port>` and the first hook
//! connection starts the worker. launchd: a per-user agent, kept alive unless it exited cleanly.

use std::path::{Path, PathBuf};

use super::{LAUNCHD_LABEL, STOP_TIMEOUT_S};

/// What the service files name.
#[derive(Debug, Clone)]
pub struct UnitParams {
    /// The absolute path of the memd binary.
    pub binary: PathBuf,
    pub data_dir: PathBuf,
    pub port: u16,
    /// Whether the worker is socket-activated (`memd.socket`).
    pub socket: bool,
}

/// A systemd watchdog comfortably above memd's own deadlines (a store call may wait 5 s).
const WATCHDOG_S: u64 = 60;

/// Quotes one word for a systemd command line or `Environment=` assignment.
fn sd_quote(s: &str) -> String {
    let escaped = s.replace('\\', "\\\\").replace('"', "\\\"").replace('%', "%%").replace('$', "$$");
    format!("\"{escaped}\"")
}

pub fn systemd_service(p: &UnitParams) -> String {
    let socket_deps = if p.socket {
        "Requires=memd.socket\nAfter=memd.socket\n"
    } else {
        ""
    };
    format!(
        "# Written by `memd service install`; `memd service uninstall` removes it.\n\
         [Unit]\n\
         Description=memd: memory for coding agents\n\
         {socket_deps}\
         \n\
         [Service]\n\
         Type=notify\n\
         NotifyAccess=main\n\
         ExecStart={bin} serve\n\
         ExecReload=/bin/kill -HUP $MAINPID\n\
         Environment={dir} {port}\n\
         Restart=on-failure\n\
         RestartSec=2\n\
         TimeoutStopSec={STOP_TIMEOUT_S}\n\
         KillMode=mixed\n\
         WatchdogSec={WATCHDOG_S}\n\
         \n\
         [Install]\n\
         WantedBy=default.target\n",
        bin = sd_quote(&p.binary.to_string_lossy()),
        dir = sd_quote(&format!("MEMD_DATA_DIR={}", p.data_dir.display())),
        port = sd_quote(&format!("MEMD_PORT={}", p.port)),
    )
}

pub fn systemd_socket(p: &UnitParams) -> String {
    format!(
        "# Written by `memd service install --socket`; `memd service uninstall` removes it.\n\
         [Unit]\n\
         Description=memd worker socket (starts memd on the first connection)\n\
         \n\
         [Socket]\n\
         ListenStream=127.0.0.1:{port}\n\
         FileDescriptorName=memd\n\
         NoDelay=true\n\
         \n\
         [Install]\n\
         WantedBy=sockets.target\n",
        port = p.port
    )
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

pub fn launchd_plist(p: &UnitParams) -> String {
    let logs = p.data_dir.join("logs");
    let s = |v: &Path| xml_escape(&v.to_string_lossy());
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- Written by `memd service install`; `memd service uninstall` removes it. -->
<plist version="1.0">
<dict>
	<key>Label</key>
	<string>{LAUNCHD_LABEL}</string>
	<key>ProgramArguments</key>
	<array>
		<string>{bin}</string>
		<string>serve</string>
	</array>
	<key>EnvironmentVariables</key>
	<dict>
		<key>MEMD_DATA_DIR</key>
		<string>{dir}</string>
		<key>MEMD_PORT</key>
		<string>{port}</string>
	</dict>
	<key>RunAtLoad</key>
	<true/>
	<key>KeepAlive</key>
	<dict>
		<key>SuccessfulExit</key>
		<false/>
	</dict>
	<key>ProcessType</key>
	<string>Background</string>
	<key>ExitTimeOut</key>
	<integer>{STOP_TIMEOUT_S}</integer>
	<key>ThrottleInterval</key>
	<integer>5</integer>
	<key>StandardOutPath</key>
	<string>{out}</string>
	<key>StandardErrorPath</key>
	<string>{err}</string>
</dict>
</plist>
"#,
        bin = s(&p.binary),
        dir = s(&p.data_dir),
        port = p.port,
        out = s(&logs.join("launchd.out.log")),
        err = s(&logs.join("launchd.err.log")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(socket: bool) -> UnitParams {
        UnitParams {
            binary: "/opt/my tools/memd".into(),
            data_dir: "/home/a/.memd".into(),
            port: 37_801,
            socket,
        }
    }

    #[test]
    fn the_service_quotes_paths_and_needs_the_socket_only_with_it() {
        let unit = systemd_service(&params(false));
        assert!(unit.contains("ExecStart=\"/opt/my tools/memd\" serve\n"), "{unit}");
        assert!(unit.contains("Environment=\"MEMD_DATA_DIR=/home/a/.memd\" \"MEMD_PORT=37801\""));
        assert!(unit.contains("Type=notify\n") && unit.contains("KillMode=mixed\n"));
        assert!(!unit.contains("memd.socket"));
        assert!(systemd_service(&params(true)).contains("Requires=memd.socket\n"));
        assert!(systemd_socket(&params(true)).contains("ListenStream=127.0.0.1:37801\n"));
        assert_eq!(sd_quote("50%$x"), "\"50%%$$x\"");
    }

    #[test]
    fn the_plist_escapes_text() {
        let mut p = params(false);
        p.data_dir = "/Users/a&b/.memd".into();
        let plist = launchd_plist(&p);
        assert!(plist.contains("<string>/Users/a&amp;b/.memd</string>"));
        assert!(plist.contains("<string>/Users/a&amp;b/.memd/logs/launchd.err.log</string>"));
    }
}
