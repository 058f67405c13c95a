use super::*;
use std::os::unix::fs::{PermissionsExt, symlink};

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn a_file_is_written_atomically_with_its_mode_and_no_temp_left() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join("src")).unwrap();
    let place = Place::open(d.path(), Path::new("src"), None).unwrap();
    place.write("CLAUDE.md", b"one\n", Mode::KeepOr(0o644)).unwrap();
    assert_eq!(std::fs::read_to_string(d.path().join("src/CLAUDE.md")).unwrap(), "one\n");
    assert_eq!(mode(&d.path().join("src/CLAUDE.md")), 0o644);
    std::fs::set_permissions(d.path().join("src/CLAUDE.md"), std::fs::Permissions::from_mode(0o640)).unwrap();
    place.write("CLAUDE.md", b"two\n", Mode::KeepOr(0o644)).unwrap();
    assert_eq!(mode(&d.path().join("src/CLAUDE.md")), 0o640, "a person's mode is kept");
    assert_eq!(place.read("CLAUDE.md", 100).unwrap().unwrap(), b"two\n");
    let names: Vec<_> = std::fs::read_dir(d.path().join("src"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "no temporary file stays: {names:?}");
    place.write("x.md", b"private", Mode::Exactly(0o600)).unwrap();
    assert_eq!(mode(&d.path().join("src/x.md")), 0o600);
    assert!(place.remove("x.md").unwrap());
    assert!(!place.remove("x.md").unwrap());
}

#[test]
fn a_link_below_the_root_is_refused_and_nothing_is_written_through_it() {
    let d = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let root = d.path();
    // A linked folder inside the project.
    symlink(outside.path(), root.join("linked")).unwrap();
    let err = Place::open(root, Path::new("linked"), None).unwrap_err();
    assert!(
        err.to_string().contains("symbolic link") && err.to_string().contains("linked"),
        "{err}"
    );
    let err = Place::open(root, Path::new("linked/deeper"), Some(0o700)).unwrap_err();
    assert!(err.to_string().contains("symbolic link"), "{err}");
    // A linked target file.
    std::fs::write(outside.path().join("rc"), "mine").unwrap();
    symlink(outside.path().join("rc"), root.join("CLAUDE.md")).unwrap();
    let place = Place::open(root, Path::new(""), None).unwrap();
    assert!(place.write("CLAUDE.md", b"x", Mode::KeepOr(0o644)).is_err());
    assert!(place.read("CLAUDE.md", 100).is_err());
    assert!(place.remove("CLAUDE.md").is_err());
    assert_eq!(std::fs::read_to_string(outside.path().join("rc")).unwrap(), "mine");
    assert!(std::fs::read_dir(outside.path()).unwrap().count() == 1);
    // The old fixed temporary name, planted as a link, is never opened.
    symlink(outside.path().join("hook"), root.join(".notes.md.memd-tmp")).unwrap();
    place.write("notes.md", b"ok", Mode::KeepOr(0o644)).unwrap();
    assert!(!outside.path().join("hook").exists());
    // Paths that leave the root.
    assert!(Place::open(root, Path::new("../x"), None).is_err());
    assert!(place.write("../x", b"x", Mode::KeepOr(0o644)).is_err());
}

#[test]
fn a_fifo_is_refused_without_blocking() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("CLAUDE.md");
    let c = CString::new(fifo.as_os_str().as_bytes()).unwrap();
    // SAFETY: NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let place = Place::open(d.path(), Path::new(""), None).unwrap();
    let err = place.read("CLAUDE.md", 100).unwrap_err();
    assert!(err.to_string().contains("FIFO"), "{err}");
    assert!(place.write("CLAUDE.md", b"x", Mode::KeepOr(0o644)).is_err());
}

#[test]
fn missing_folders_are_made_with_the_given_mode_or_refused() {
    let d = tempfile::tempdir().unwrap();
    assert!(Place::open(d.path(), Path::new("a/b"), None).is_err());
    let p = Place::open(d.path(), Path::new("a/b"), Some(0o700)).unwrap();
    assert_eq!(p.path(), d.path().join("a/b"));
    assert_eq!(mode(&d.path().join("a")) & 0o077, 0, "made private");
}

#[test]
fn paths_split_under_a_root_only_by_plain_components() {
    let root = Path::new("/p");
    assert_eq!(
        split_under(root, Path::new("/p/src/CLAUDE.md")),
        Some((PathBuf::from("src"), "CLAUDE.md"))
    );
    assert_eq!(split_under(root, Path::new("/p/CLAUDE.md")), Some((PathBuf::new(), "CLAUDE.md")));
    assert_eq!(split_under(root, Path::new("/p/../etc/x")), None);
    assert_eq!(split_under(root, Path::new("/q/x")), None);
}
