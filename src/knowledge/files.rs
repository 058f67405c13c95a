//! `<data>/corpora/`: one `<name>.corpus.json` per corpus, and for the HTTP providers (which keep
//! no conversation themselves) `<name>.session.json`, the knowledge agent's turns so far. Written
//! owner-only and atomically (temp file, fsync, rename), never through a link; a file that does
//! not parse is reported, not served.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::KnowledgeError;
use super::corpus::{CorpusFile, CorpusStats, check_name};
use crate::data_dir::{DataDir, write_private};

const CORPUS_SUFFIX: &str = ".corpus.json";
const SESSION_SUFFIX: &str = ".session.json";

/// A kept conversation of an HTTP provider: the turns after the corpus prefix.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct KeptConversation {
    pub session_id: String,
    pub provider: String,
    /// (role, text): `user` or `assistant`, oldest first; the first pair is the prime.
    pub turns: Vec<(String, String)>,
}

/// One line of `list_corpora`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Listed {
    pub name: String,
    pub description: String,
    pub stats: CorpusStats,
    pub session_id: Option<String>,
    pub updated_at: String,
}

#[derive(Debug, Clone)]
pub struct CorpusFiles {
    data: DataDir,
}

impl CorpusFiles {
    pub fn new(data_dir: PathBuf) -> Self {
        Self {
            data: DataDir::new(data_dir),
        }
    }

    pub fn dir(&self) -> PathBuf {
        self.data.root.join("corpora")
    }

    fn path(&self, name: &str, suffix: &str) -> Result<PathBuf, KnowledgeError> {
        check_name(name)?;
        Ok(self.dir().join(format!("{name}{suffix}")))
    }

    fn write_json(&self, path: PathBuf, v: &impl Serialize) -> Result<(), KnowledgeError> {
        self.data
            .private_dir(&self.dir())
            .map_err(|e| KnowledgeError::Files(e.to_string()))?;
        let bytes = serde_json::to_vec_pretty(v).map_err(|e| KnowledgeError::Files(e.to_string()))?;
        write_private(&path, &bytes).map_err(|e| KnowledgeError::Files(e.to_string()))
    }

    fn read_json<T: for<'de> Deserialize<'de>>(&self, path: PathBuf) -> Result<Option<T>, KnowledgeError> {
        if crate::data_dir::refuse_redirect(&path).is_err() {
            return Err(KnowledgeError::Files(format!("{} is a link; refusing to read it", path.display())));
        }
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(KnowledgeError::Files(format!("{}: {e}", path.display()))),
        };
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| KnowledgeError::Files(format!("{} does not parse: {e}", path.display())))
    }

    pub fn write(&self, c: &CorpusFile) -> Result<(), KnowledgeError> {
        self.write_json(self.path(&c.name, CORPUS_SUFFIX)?, c)
    }

    pub fn read(&self, name: &str) -> Result<Option<CorpusFile>, KnowledgeError> {
        self.read_json(self.path(name, CORPUS_SUFFIX)?)
    }

    /// A corpus that must exist.
    pub fn get(&self, name: &str) -> Result<CorpusFile, KnowledgeError> {
        self.read(name)?.ok_or_else(|| KnowledgeError::NotFound {
            name: name.to_string(),
            available: self.list().into_iter().map(|l| l.name).collect(),
        })
    }

    /// Every readable corpus, by name.
    pub fn list(&self) -> Vec<Listed> {
        let Ok(entries) = std::fs::read_dir(self.dir()) else {
            return Vec::new();
        };
        let mut out: Vec<Listed> = entries
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.strip_suffix(CORPUS_SUFFIX).map(String::from))
            .filter_map(|name| match self.read(&name) {
                Ok(Some(c)) => Some(Listed {
                    name: c.name,
                    description: c.description,
                    stats: c.stats,
                    session_id: c.session_id,
                    updated_at: c.updated_at,
                }),
                Ok(None) => None,
                Err(e) => {
                    tracing::warn!(corpus = %name, error = %e, "corpus file skipped");
                    None
                }
            })
            .collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    /// Removes the corpus and its conversation; false when there was no corpus.
    pub fn delete(&self, name: &str) -> Result<bool, KnowledgeError> {
        let path = self.path(name, CORPUS_SUFFIX)?;
        self.forget_conversation(name)?;
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(KnowledgeError::Files(format!("{}: {e}", path.display()))),
        }
    }

    pub fn conversation(&self, name: &str) -> Result<Option<KeptConversation>, KnowledgeError> {
        self.read_json(self.path(name, SESSION_SUFFIX)?)
    }

    pub fn keep_conversation(&self, name: &str, c: &KeptConversation) -> Result<(), KnowledgeError> {
        self.write_json(self.path(name, SESSION_SUFFIX)?, c)
    }

    pub fn forget_conversation(&self, name: &str) -> Result<(), KnowledgeError> {
        match std::fs::remove_file(self.path(name, SESSION_SUFFIX)?) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(KnowledgeError::Files(e.to_string())),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_corpus_round_trips_owner_only_and_is_listed_then_deleted_with_its_conversation() {
        let tmp = tempfile::tempdir().unwrap();
        let files = CorpusFiles::new(tmp.path().to_path_buf());
        assert!(files.list().is_empty() && files.read("a").unwrap().is_none());
        let c = CorpusFile {
            version: 1,
            name: "a".into(),
            description: "d".into(),
            ..Default::default()
        };
        files.write(&c).unwrap();
        assert_eq!(files.read("a").unwrap(), Some(c));
        let mode = std::fs::metadata(files.dir().join("a.corpus.json")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let conv = KeptConversation {
            session_id: "s".into(),
            provider: "anthropic".into(),
            turns: vec![("user".into(), "q".into())],
        };
        files.keep_conversation("a", &conv).unwrap();
        assert_eq!(files.conversation("a").unwrap(), Some(conv));
        std::fs::write(files.dir().join("broken.corpus.json"), b"{").unwrap();
        assert_eq!(files.list().iter().map(|l| l.name.as_str()).collect::<Vec<_>>(), ["a"]);
        assert!(files.read("broken").is_err());
        assert!(files.delete("a").unwrap() && !files.delete("a").unwrap());
        assert!(files.conversation("a").unwrap().is_none());
        let missing = files.get("a").unwrap_err().to_string();
        assert!(missing.contains("not found"), "{missing}");
        assert!(files.read("../x").is_err());
    }
}
