//! The one way memd starts `git` (issue 50). A repository is untrusted: its `.git/config`, a file
//! it includes (`include`, `includeIf`), a nested repository and a `.git` file pointing elsewhere
//! can each name a program for git to run — an fsmonitor hook, a pager, a signature checker, an
//! external diff, a credential helper, an ssh command. [`command`] builds a `git` process that runs
//! none of them:
//!
//! - a cleared environment (only `PATH`, `HOME` and a C locale come through), no system or global
//!   config file (`GIT_CONFIG_NOSYSTEM`, `GIT_CONFIG_GLOBAL=/dev/null`), no terminal prompt, no
//!   optional locks, no replace objects, no system attributes;
//! - `--no-pager`, and `-c` overrides — which win over every config file, included ones too, and
//!   reach any git that git starts itself — for every setting that names a program or reaches the
//!   network ([`OVERRIDES`]);
//! - stdin closed unless the caller pipes it, stderr captured.
//!
//! Filter and textconv drivers (`filter.<name>.*`, `diff.<name>.textconv`) have names a repository
//! chooses, so no `-c` can list them: memd's git calls never run them instead — `hash-object
//! --no-filters`, `log` without a patch and with `--no-textconv --no-ext-diff`, `ls-tree`,
//! `check-ignore`. The hostile-repository test sets every one of these and checks that nothing ran.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Stdio};

/// `-c` overrides: every setting that makes git run a program or reach the network, disabled.
pub const OVERRIDES: &[&str] = &[
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "core.editor=false",
    "core.askPass=",
    "core.sshCommand=false",
    "core.gitProxy=",
    "core.alternateRefsCommand=",
    "core.quotepath=off",
    "credential.helper=",
    "log.showSignature=false",
    "gpg.program=false",
    "gpg.ssh.program=false",
    "gpg.x509.program=false",
    "commit.gpgSign=false",
    "tag.gpgSign=false",
    "diff.external=",
    "sequence.editor=false",
    "protocol.allow=never",
    "submodule.recurse=false",
    "safe.bareRepository=explicit",
    "gc.auto=0",
    "maintenance.auto=false",
    "uploadpack.packObjectsHook=",
    "http.proxy=",
    "https.proxy=",
];

/// Environment variables a hardened git keeps from memd's own (everything else is cleared).
const KEPT_ENV: [&str; 2] = ["PATH", "HOME"];

/// A `git` process for the work tree at `root` (`git -C root`), hardened as the module header
/// says; the caller adds its subcommand and arguments. Every git process memd starts comes from
/// here (a test holds `src/` to it).
pub fn command(root: &Path) -> Command {
    let mut c = Command::new("git");
    c.env_clear();
    for key in KEPT_ENV {
        if let Some(v) = std::env::var_os(key) {
            c.env(key, v);
        }
    }
    if std::env::var_os("PATH").is_none() {
        c.env("PATH", "/usr/local/bin:/usr/bin:/bin");
    }
    c.envs([
        ("LC_ALL", "C"),
        ("GIT_CONFIG_NOSYSTEM", "1"),
        ("GIT_CONFIG_GLOBAL", "/dev/null"),
        ("GIT_TERMINAL_PROMPT", "0"),
        ("GIT_OPTIONAL_LOCKS", "0"),
        ("GIT_NO_REPLACE_OBJECTS", "1"),
        ("GIT_ATTR_NOSYSTEM", "1"),
        ("GIT_NO_LAZY_FETCH", "1"),
        ("GIT_PAGER", "cat"),
        ("PAGER", "cat"),
    ]);
    c.arg("--no-pager").arg("-C").arg(root);
    for o in OVERRIDES {
        c.args([OsStr::new("-c"), OsStr::new(o)]);
    }
    c.stdin(Stdio::null()).stderr(Stdio::piped());
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(c: &Command) -> Vec<String> {
        c.get_args().map(|a| a.to_string_lossy().into_owned()).collect()
    }

    #[test]
    fn the_command_clears_the_environment_and_overrides_every_program_setting() {
        let c = command(Path::new("/w/repo"));
        let a = args(&c);
        assert_eq!(&a[..3], ["--no-pager", "-C", "/w/repo"]);
        for key in [
            "core.fsmonitor",
            "core.hooksPath",
            "log.showSignature",
            "gpg.program",
            "diff.external",
        ] {
            assert!(a.iter().any(|x| x.starts_with(&format!("{key}="))), "{key} is overridden");
        }
        let envs: Vec<(String, Option<String>)> = c
            .get_envs()
            .map(|(k, v)| (k.to_string_lossy().into_owned(), v.map(|v| v.to_string_lossy().into_owned())))
            .collect();
        let get = |k: &str| envs.iter().find(|(n, _)| n == k).and_then(|(_, v)| v.clone());
        assert_eq!(get("GIT_CONFIG_GLOBAL").as_deref(), Some("/dev/null"));
        assert_eq!(get("GIT_CONFIG_NOSYSTEM").as_deref(), Some("1"));
        assert!(get("GIT_DIR").is_none() && get("GIT_EXTERNAL_DIFF").is_none());
    }

    /// Every place in `src/` that starts a process named `git` does it here.
    #[test]
    fn no_other_file_in_src_starts_git() {
        fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
            for e in std::fs::read_dir(dir).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    walk(&p, out);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    out.push(p);
                }
            }
        }
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        walk(&src, &mut files);
        assert!(files.len() > 100, "read src/");
        let starts_git = regex::Regex::new(r#"Command::new\(\s*(OsStr::new\()?"git""#).unwrap();
        let offenders: Vec<_> = files
            .iter()
            .filter(|p| !p.ends_with("guard/git.rs"))
            .filter(|p| starts_git.is_match(&std::fs::read_to_string(p).unwrap()))
            .collect();
        assert!(offenders.is_empty(), "git started outside guard::git::command: {offenders:?}");
    }

    #[test]
    fn every_override_is_a_key_and_a_value() {
        for o in OVERRIDES {
            let (k, _) = o.split_once('=').expect("key=value");
            assert!(k.contains('.') && !k.contains(' '), "{o}");
        }
    }
}
