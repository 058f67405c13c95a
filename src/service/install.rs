//! `memd service install/uninstall/status`: which files to write for this platform, the commands
//! that load them, and a manifest (`<data>/service.json`) so uninstall removes exactly what
//! install wrote — and nothing a person changed since.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};

use super::LAUNCHD_LABEL;
use super::units::{UnitParams, launchd_plist, systemd_service, systemd_socket};

#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{0} exists and was not written by memd; move it away or remove it first")]
    NotOurs(PathBuf),
    #[error("the service manifest {path} cannot be read: {reason}")]
    Manifest { path: PathBuf, reason: String },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ServiceError + '_ {
    move |source| ServiceError::Io {
        path: path.to_path_buf(),
        source,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Platform {
    Systemd,
    Launchd,
}

impl Platform {
    pub fn native() -> Self {
        if cfg!(target_os = "macos") {
            Platform::Launchd
        } else {
            Platform::Systemd
        }
    }

    fn tool(self) -> &'static str {
        match self {
            Platform::Systemd => "systemctl",
            Platform::Launchd => "launchctl",
        }
    }
}

/// Where the files go: systemd user units under `$XDG_CONFIG_HOME/systemd/user` (else
/// `~/.config/systemd/user`); launchd agents under `~/Library/LaunchAgents`.
#[derive(Debug, Clone)]
pub struct Places {
    pub home: PathBuf,
    pub xdg_config: Option<PathBuf>,
    pub uid: u32,
}

impl Places {
    fn unit_dir(&self) -> PathBuf {
        self.xdg_config
            .clone()
            .unwrap_or_else(|| self.home.join(".config"))
            .join("systemd/user")
    }

    fn plist(&self) -> PathBuf {
        self.home.join("Library/LaunchAgents").join(format!("{LAUNCHD_LABEL}.plist"))
    }
}

/// What install writes and runs.
#[derive(Debug, Clone)]
pub struct Plan {
    pub platform: Platform,
    pub files: Vec<(PathBuf, String)>,
    pub commands: Vec<Vec<String>>,
}

fn cmd(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

pub fn install_plan(platform: Platform, places: &Places, p: &UnitParams) -> Plan {
    match platform {
        Platform::Systemd => {
            let dir = places.unit_dir();
            let mut files = vec![(dir.join("memd.service"), systemd_service(p))];
            if p.socket {
                files.push((dir.join("memd.socket"), systemd_socket(p)));
            }
            let unit = if p.socket { "memd.socket" } else { "memd.service" };
            Plan {
                platform,
                files,
                commands: vec![
                    cmd(&["systemctl", "--user", "daemon-reload"]),
                    cmd(&["systemctl", "--user", "enable", "--now", unit]),
                ],
            }
        }
        Platform::Launchd => {
            let plist = places.plist();
            let target = format!("gui/{}", places.uid);
            Plan {
                platform,
                commands: vec![vec!["launchctl".into(), "bootstrap".into(), target, plist.to_string_lossy().into()]],
                files: vec![(plist, launchd_plist(p))],
            }
        }
    }
}

/// What uninstall runs before it removes the files.
pub fn uninstall_commands(m: &Manifest, places: &Places) -> Vec<Vec<String>> {
    match m.platform {
        Platform::Systemd => {
            let mut stop = cmd(&["systemctl", "--user", "disable", "--now"]);
            for (path, _) in &m.files {
                if let Some(name) = path.file_name() {
                    stop.push(name.to_string_lossy().into());
                }
            }
            vec![stop]
        }
        Platform::Launchd => vec![vec![
            "launchctl".into(),
            "bootout".into(),
            format!("gui/{}/{LAUNCHD_LABEL}", places.uid),
        ]],
    }
}

/// `<data>/service.json`: what install wrote, byte for byte.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Manifest {
    pub platform: Platform,
    pub socket: bool,
    pub files: Vec<(PathBuf, String)>,
}

pub fn manifest_path(data_dir: &Path) -> PathBuf {
    data_dir.join("service.json")
}

pub fn read_manifest(data_dir: &Path) -> Result<Option<Manifest>, ServiceError> {
    let path = manifest_path(data_dir);
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text).map(Some).map_err(|e| ServiceError::Manifest {
            path,
            reason: e.to_string(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ServiceError::Io { path, source: e }),
    }
}

/// What running one command gave.
#[derive(Debug, Clone, PartialEq)]
pub enum Ran {
    Ok,
    Failed(String),
    /// The tool is not on `PATH`: the person runs it.
    NotFound,
}

/// The first executable `name` on `path_env`.
pub fn find_on_path(path_env: Option<&str>, name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    path_env?
        .split(':')
        .filter(|d| !d.is_empty())
        .map(|d| PathBuf::from(d).join(name))
        .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
}

/// Runs each command in order until one fails; the rest are reported as not run.
pub fn run_commands(commands: &[Vec<String>], path_env: Option<&str>) -> Vec<(Vec<String>, Ran)> {
    let mut out = Vec::new();
    let mut stopped = false;
    for c in commands {
        let ran = match (stopped, find_on_path(path_env, &c[0])) {
            (true, _) => Ran::NotFound,
            (false, None) => Ran::NotFound,
            (false, Some(tool)) => match Command::new(tool).args(&c[1..]).output() {
                Ok(o) if o.status.success() => Ran::Ok,
                Ok(o) => Ran::Failed(String::from_utf8_lossy(&o.stderr).trim().chars().take(300).collect()),
                Err(e) => Ran::Failed(e.to_string()),
            },
        };
        stopped |= ran != Ran::Ok;
        out.push((c.clone(), ran));
    }
    out
}

/// Temp file + fsync + rename, with `mode`.
fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .mode(mode)
        .open(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)
}

/// Writes the plan's files (0644, their directories created) and the manifest. A file already
/// there that memd did not write is refused; one memd wrote is replaced.
pub fn write_files(plan: &Plan, socket: bool, data_dir: &Path) -> Result<(), ServiceError> {
    let ours = read_manifest(data_dir)?.map(|m| m.files).unwrap_or_default();
    for (path, text) in &plan.files {
        if let Ok(existing) = std::fs::read_to_string(path) {
            let written_by_us = ours.iter().any(|(p, t)| p == path && *t == existing);
            if existing != *text && !written_by_us {
                return Err(ServiceError::NotOurs(path.clone()));
            }
        }
    }
    for (path, text) in &plan.files {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io(dir))?;
        }
        write_atomic(path, text.as_bytes(), 0o644).map_err(io(path))?;
    }
    // Files an earlier install wrote that this one does not (a socket unit dropped) go too.
    for (path, text) in &ours {
        let kept = plan.files.iter().any(|(p, _)| p == path);
        if !kept && std::fs::read_to_string(path).is_ok_and(|t| t == *text) {
            let _ = std::fs::remove_file(path);
        }
    }
    let manifest = Manifest {
        platform: plan.platform,
        socket,
        files: plan.files.clone(),
    };
    let mpath = manifest_path(data_dir);
    let json = serde_json::to_vec_pretty(&manifest).unwrap_or_default();
    write_atomic(&mpath, &json, 0o600).map_err(io(&mpath))
}

/// Removes the files the manifest lists, each only if it is still what memd wrote; then the
/// manifest. Answers the files kept because a person changed them.
pub fn remove_files(m: &Manifest, data_dir: &Path) -> Result<Vec<PathBuf>, ServiceError> {
    let mut kept = Vec::new();
    for (path, text) in &m.files {
        match std::fs::read_to_string(path) {
            Ok(t) if t == *text => std::fs::remove_file(path).map_err(io(path))?,
            Ok(_) => kept.push(path.clone()),
            Err(_) => {}
        }
    }
    let mpath = manifest_path(data_dir);
    std::fs::remove_file(&mpath).map_err(io(&mpath))?;
    Ok(kept)
}

/// The command a person runs to see the service (`systemctl --user status memd`).
pub fn status_command(platform: Platform, places: &Places) -> Vec<String> {
    match platform {
        Platform::Systemd => cmd(&["systemctl", "--user", "is-active", "memd.service"]),
        Platform::Launchd => vec!["launchctl".into(), "print".into(), format!("gui/{}/{LAUNCHD_LABEL}", places.uid)],
    }
}

/// The tool the platform's commands use, for messages.
pub fn tool(platform: Platform) -> &'static str {
    platform.tool()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn places(home: &Path) -> Places {
        Places {
            home: home.to_path_buf(),
            xdg_config: None,
            uid: 501,
        }
    }

    fn params(socket: bool) -> UnitParams {
        UnitParams {
            binary: "/usr/bin/memd".into(),
            data_dir: "/d".into(),
            port: 1,
            socket,
        }
    }

    #[test]
    fn install_then_uninstall_leaves_nothing_and_keeps_what_a_person_changed() {
        let home = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let plan = install_plan(Platform::Systemd, &places(home.path()), &params(true));
        assert_eq!(plan.files.len(), 2);
        assert_eq!(plan.commands[1], cmd(&["systemctl", "--user", "enable", "--now", "memd.socket"]));
        write_files(&plan, true, data.path()).unwrap();
        let unit = home.path().join(".config/systemd/user/memd.service");
        assert!(unit.is_file());
        // Reinstalling without the socket drops the socket unit memd wrote.
        let plan2 = install_plan(Platform::Systemd, &places(home.path()), &params(false));
        write_files(&plan2, false, data.path()).unwrap();
        assert!(!home.path().join(".config/systemd/user/memd.socket").exists());
        let m = read_manifest(data.path()).unwrap().unwrap();
        assert_eq!(
            uninstall_commands(&m, &places(home.path())),
            vec![cmd(&["systemctl", "--user", "disable", "--now", "memd.service"])]
        );
        std::fs::write(&unit, "edited").unwrap();
        assert_eq!(remove_files(&m, data.path()).unwrap(), vec![unit.clone()]);
        assert!(unit.is_file(), "an edited unit stays");
        assert!(read_manifest(data.path()).unwrap().is_none());
    }

    #[test]
    fn a_file_memd_did_not_write_is_refused() {
        let home = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let plan = install_plan(Platform::Launchd, &places(home.path()), &params(false));
        assert_eq!(plan.commands[0][2], "gui/501");
        std::fs::create_dir_all(plan.files[0].0.parent().unwrap()).unwrap();
        std::fs::write(&plan.files[0].0, "someone else's").unwrap();
        assert!(matches!(write_files(&plan, false, data.path()), Err(ServiceError::NotOurs(_))));
    }

    #[test]
    fn a_missing_tool_is_not_run_and_stops_the_rest() {
        let out = run_commands(&[cmd(&["no-such-tool-memd"]), cmd(&["true"])], Some("/usr/bin:/bin"));
        assert_eq!(out[0].1, Ran::NotFound);
        assert_eq!(out[1].1, Ran::NotFound);
        let out = run_commands(&[cmd(&["true"]), cmd(&["false"])], Some("/usr/bin:/bin"));
        assert_eq!(out[0].1, Ran::Ok);
        assert!(matches!(out[1].1, Ran::Failed(_)));
    }
}
