//! A throwaway PostgreSQL cluster for the team tests: `initdb` as the `postgres` user (when the
//! tests run as root) in a temp directory, `pg_ctl` on a free port, trust authentication on
//! 127.0.0.1 only. Stopped (and its directory removed) on drop; `stop`/`start` simulate an outage.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub struct Postgres {
    dir: tempfile::TempDir,
    pub port: u16,
    bin: PathBuf,
}

fn find_bin() -> Option<PathBuf> {
    let on_path = std::env::var("PATH").unwrap_or_default();
    let mut dirs: Vec<PathBuf> = on_path.split(':').map(PathBuf::from).collect();
    if let Ok(entries) = std::fs::read_dir("/usr/lib/postgresql") {
        let mut versions: Vec<PathBuf> = entries.flatten().map(|e| e.path().join("bin")).collect();
        versions.sort();
        dirs.extend(versions.into_iter().rev());
    }
    dirs.into_iter().find(|d| d.join("initdb").is_file() && d.join("pg_ctl").is_file())
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

impl Postgres {
    /// None (after saying what to install; a failure under `MEMD_REQUIRE_FIXTURES=1`) when
    /// PostgreSQL is not installed.
    pub fn start() -> Option<Self> {
        let Some(bin) = find_bin() else {
            super::fixture_missing("PostgreSQL (initdb, pg_ctl)", "apt install postgresql");
            return None;
        };
        let dir = tempfile::tempdir().expect("tempdir");
        if is_root() {
            let ok = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(dir.path())
                .status()
                .unwrap()
                .success();
            assert!(ok, "chown the cluster directory to postgres");
        }
        let pg = Self {
            dir,
            port: free_port(),
            bin,
        };
        let data = pg.data();
        let init = pg.as_postgres(
            pg.bin.join("initdb"),
            &["-D", data.to_str().unwrap(), "-A", "trust", "-U", "postgres", "--no-sync"],
        );
        assert!(init.status.success(), "initdb: {}", String::from_utf8_lossy(&init.stderr));
        pg.start_again();
        pg.sql("postgres", "CREATE DATABASE memd");
        Some(pg)
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn as_postgres(&self, program: PathBuf, args: &[&str]) -> Output {
        let mut cmd = if is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&program);
            c
        } else {
            Command::new(&program)
        };
        cmd.args(args).current_dir(self.dir.path()).output().expect("run a postgres tool")
    }

    /// Starts the server (again) on its port and waits until it accepts connections.
    pub fn start_again(&self) {
        let opts = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            self.port,
            self.dir.path().display()
        );
        let log = self.dir.path().join("server.log");
        let out = self.as_postgres(
            self.bin.join("pg_ctl"),
            &[
                "-D",
                self.data().to_str().unwrap(),
                "-o",
                &opts,
                "-l",
                log.to_str().unwrap(),
                "-w",
                "start",
            ],
        );
        assert!(
            out.status.success(),
            "pg_ctl start: {}{}",
            String::from_utf8_lossy(&out.stdout),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
    }

    /// Stops the server at once (connections cut), keeping its data.
    pub fn stop(&self) {
        let _ = self.as_postgres(
            self.bin.join("pg_ctl"),
            &["-D", self.data().to_str().unwrap(), "-m", "immediate", "-w", "stop"],
        );
    }

    /// Runs SQL with psql as `role` on database `db`; asserts success.
    pub fn sql_as(&self, role: &str, db: &str, sql: &str) -> String {
        match self.try_sql_as(role, db, sql) {
            Ok(out) => out,
            Err(e) => panic!("psql {sql}: {e}"),
        }
    }

    /// Runs SQL with psql as `role` on database `db`: its output, or the server's error.
    pub fn try_sql_as(&self, role: &str, db: &str, sql: &str) -> Result<String, String> {
        let psql = match self.bin.join("psql") {
            p if p.is_file() => p,
            _ => PathBuf::from("psql"),
        };
        let out = Command::new(psql)
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                role,
                "-d",
                db,
                "-v",
                "ON_ERROR_STOP=1",
                "-At",
                "-c",
                sql,
            ])
            .output()
            .expect("psql");
        match out.status.success() {
            true => Ok(String::from_utf8_lossy(&out.stdout).into_owned()),
            false => Err(String::from_utf8_lossy(&out.stderr).into_owned()),
        }
    }

    /// A psql session as `postgres` on `db` that ran `sql` and stays open (its session-level locks
    /// held) until the child is killed.
    pub fn session(&self, db: &str, sql: &str) -> std::process::Child {
        use std::io::Write;
        let psql = match self.bin.join("psql") {
            p if p.is_file() => p,
            _ => PathBuf::from("psql"),
        };
        let mut child = Command::new(psql)
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", "postgres", "-d", db, "-At"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("psql session");
        let mut stdin = child.stdin.take().expect("stdin");
        writeln!(stdin, "{sql}").expect("send to psql");
        // The pipe stays open (and psql with it) as long as the child lives.
        #[allow(clippy::mem_forget, reason = "the open pipe is the point: psql waits on it")]
        std::mem::forget(stdin);
        child
    }

    pub fn sql(&self, db: &str, sql: &str) -> String {
        self.sql_as("postgres", db, sql)
    }

    /// The connection URL of `role` to the `memd` database (no TLS: the server has no certificate).
    pub fn url(&self, role: &str) -> String {
        format!("postgres://{role}@127.0.0.1:{}/memd?sslmode=disable", self.port)
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        self.stop();
    }
}
