//! The in-memory sign-code index: every document's 384 sign bits (48 bytes, the code sqlite-vec's
//! `vec_quantize_binary` makes) beside its scope columns, scanned with popcount for the
//! Hamming-nearest candidates that [`super::nearest`] re-ranks by exact cosine
//! (docs/decisions.md, "Sign codes in memory").
//!
//! It follows `vectors` through `vectors_log` (schema v4: one entry per changed document, keyed by its
//! row): [`CodeIndex::catch_up`] re-reads every row logged since the last look, whoever wrote it.
//! Re-reading a row is idempotent, so a write that lands between two statements is applied once now
//! and harmlessly again later. When the entries it needs were trimmed (or the file was replaced) it
//! rebuilds from `vectors`. About 80 bytes a document and a map entry a row; the worker's
//! resident memory grows by 40 MB at 300,000 documents, 3.3 MB at 30,000 (docs/decisions.md).

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use rusqlite::{Connection, OptionalExtension};

use super::documents::DocKind;
use super::embedder::DIM;
use super::index::VectorCols;
use super::nearest::VectorScope;
use crate::store::StoreError;

const WORDS: usize = DIM / 64;
/// A document's sign bits.
pub type Code = [u64; WORDS];
/// Entries kept in `vectors_log` by [`trim_log`]; an index further behind rebuilds.
pub const LOG_KEPT: i64 = 50_000;

/// Bit `i` set when component `i` is positive (`vec_quantize_binary`'s rule).
pub fn code_of(v: &[f32]) -> Code {
    let mut c = [0u64; WORDS];
    for (i, x) in v.iter().take(DIM).enumerate() {
        if *x > 0.0 {
            c[i / 64] |= 1 << (i % 64);
        }
    }
    c
}

/// The code of a `vectors.embedding` blob (f16, or the f32 of older data dirs) without decoding it,
/// the code sqlite-vec made of the f32 vector it was given. In f32, positive is sign bit clear and
/// some magnitude bit set. In f16 it is the sign bit clear: a positive component too small for f16
/// (below 3·10⁻⁸; all-MiniLM-L6-v2 has three dimensions that small in most documents) is stored as
/// +0 and a negative one as −0, so the sign keeps what the rounding lost. An exact zero, which the
/// model does not produce, reads as positive there.
pub(super) fn code_of_blob(b: &[u8]) -> Option<Code> {
    let width = match b.len() {
        n if n == DIM * 2 => 2,
        n if n == DIM * 4 => 4,
        _ => return None,
    };
    let mut c = [0u64; WORDS];
    for (i, x) in b.chunks_exact(width).enumerate() {
        let high = x[width - 1];
        let positive = high & 0x80 == 0 && (width == 2 || high != 0 || x[..width - 1].iter().any(|&y| y != 0));
        if positive {
            c[i / 64] |= 1 << (i % 64);
        }
    }
    Some(c)
}

/// Bits that differ between two codes.
pub fn hamming(a: &Code, b: &Code) -> u32 {
    a.iter().zip(b).map(|(x, y)| (x ^ y).count_ones()).sum()
}

#[derive(Debug, Clone, Copy)]
struct Doc {
    row_id: i64,
    created: i64,
    project: u32,
    platform: u32,
    /// The document id after its row's prefix (`narrative`, `fact_0`, …), interned.
    suffix: u32,
    kind: DocKind,
}

/// A candidate from the scan: the document and its Hamming distance to the query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub doc_id: String,
    pub hamming: u32,
}

/// Interned strings: project and platform names, document id suffixes (a few dozen each).
#[derive(Debug, Default)]
struct Names {
    ids: HashMap<String, u32>,
    names: Vec<String>,
}

impl Names {
    fn id(&mut self, name: String) -> u32 {
        if let Some(id) = self.ids.get(&name) {
            return *id;
        }
        self.names.push(name.clone());
        self.ids.insert(name, self.names.len() as u32 - 1);
        self.names.len() as u32 - 1
    }
}

enum Step {
    Current,
    /// Re-read the rows logged after this sequence number.
    Apply(i64),
    Rebuild,
}

/// An index this large rebuilds on its own read connection rather than inside a query (30,000
/// documents took 75–163 ms, 300,000 took 0.9–1.6 s: over the query budget).
const INLINE_REBUILD_MAX: usize = 50_000;

#[derive(Debug, Default)]
struct Codes {
    /// The highest `vectors_log.seq` reflected; None until built.
    applied: Option<i64>,
    codes: Vec<Code>,
    docs: Vec<Doc>,
    rows: HashMap<(DocKind, i64), Vec<u32>>,
    projects: Names,
    platforms: Names,
    suffixes: Names,
}

/// What status can say about the index.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct CodeStatus {
    pub built: bool,
    pub documents: usize,
    pub applied_seq: i64,
}

/// The shared index (one per worker; queries take it in turn, a scan takes a few milliseconds).
#[derive(Debug)]
pub struct CodeIndex {
    inner: Mutex<Codes>,
    /// Built and current enough to answer (a large index due for a rebuild is not).
    built: AtomicBool,
    /// A build is under way (claimed by [`CodeIndex::claim_build`]).
    building: AtomicBool,
    /// From this many documents a rebuild is not done inside a query ([`INLINE_REBUILD_MAX`]).
    inline_rebuild_max: usize,
}

impl Default for CodeIndex {
    fn default() -> Self {
        Self::rebuilding_inline_below(INLINE_REBUILD_MAX)
    }
}

fn last_seq(conn: &Connection) -> Result<i64, StoreError> {
    Ok(conn
        .query_row("SELECT seq FROM sqlite_sequence WHERE name = 'vectors_log'", [], |r| r.get(0))
        .optional()?
        .unwrap_or(0))
}

/// Drops the log entries older than the newest `kept` ([`LOG_KEPT`] in the vector sync's garbage pass).
pub fn trim_log(conn: &Connection, kept: i64) -> Result<usize, StoreError> {
    Ok(conn.execute("DELETE FROM vectors_log WHERE seq <= ?1", [last_seq(conn)? - kept])?)
}

impl Codes {
    /// Adds a row of `load`'s query (doc_kind, row_id, doc_id, project, platform_source,
    /// created_at_epoch, embedding); a row of an unknown kind or a blob of no vector is skipped.
    fn push(&mut self, r: &rusqlite::Row<'_>, c: VectorCols) -> Result<(), StoreError> {
        let Some(kind) = DocKind::parse(r.get_ref(c.doc_kind)?.as_str().unwrap_or("")) else {
            return Ok(());
        };
        let Some(code) = code_of_blob(r.get_ref(c.embedding)?.as_blob().unwrap_or(&[])) else {
            return Ok(());
        };
        let (row_id, doc_id): (i64, String) = (r.get(c.row_id)?, r.get(c.doc_id)?);
        let slot = self.docs.len() as u32;
        let (project, platform) = (self.projects.id(r.get(c.project)?), self.platforms.id(r.get(c.platform_source)?));
        // An id without its row's prefix (none is made so) is kept whole, marked by a leading NUL.
        let suffix = match doc_id.strip_prefix(kind.id_prefix(row_id).as_str()) {
            Some(rest) => rest.to_string(),
            None => format!("\0{doc_id}"),
        };
        self.docs.push(Doc {
            row_id,
            created: r.get(c.created_at_epoch)?,
            project,
            platform,
            suffix: self.suffixes.id(suffix),
            kind,
        });
        self.codes.push(code);
        self.rows.entry((kind, row_id)).or_default().push(slot);
        Ok(())
    }

    fn doc_id(&self, doc: &Doc) -> String {
        let suffix = &self.suffixes.names[doc.suffix as usize];
        match suffix.strip_prefix('\0') {
            Some(whole) => whole.to_string(),
            None => format!("{}{suffix}", doc.kind.id_prefix(doc.row_id)),
        }
    }

    /// Removes a row's documents (swapping the last documents into their slots).
    fn remove_row(&mut self, key: (DocKind, i64)) {
        let Some(mut slots) = self.rows.remove(&key) else { return };
        slots.sort_unstable_by(|a, b| b.cmp(a));
        for slot in slots {
            let last = self.docs.len() as u32 - 1;
            self.docs.swap_remove(slot as usize);
            self.codes.swap_remove(slot as usize);
            if slot != last {
                let moved = self.docs[slot as usize];
                if let Some(s) = self
                    .rows
                    .get_mut(&(moved.kind, moved.row_id))
                    .and_then(|v| v.iter_mut().find(|s| **s == last))
                {
                    *s = slot;
                }
            }
        }
    }

    /// Reads `sql`'s rows (doc_kind, row_id, doc_id, project, platform_source, created, embedding) in.
    fn load(&mut self, conn: &Connection, sql: &str, params: impl rusqlite::Params) -> Result<(), StoreError> {
        let mut st = conn.prepare_cached(sql)?;
        let c = VectorCols::of(&st)?;
        let mut rows = st.query(params)?;
        while let Some(r) = rows.next()? {
            self.push(r, c)?;
        }
        Ok(())
    }

    fn rebuild(&mut self, conn: &Connection) -> Result<(), StoreError> {
        // The log position first: what is written after it is logged above it and re-read later.
        let seq = last_seq(conn)?;
        *self = Codes::default();
        self.load(
            conn,
            "SELECT doc_kind, row_id, doc_id, project, platform_source, created_at_epoch, embedding FROM vectors",
            [],
        )?;
        self.applied = Some(seq);
        Ok(())
    }

    /// What catching up takes now.
    fn step(&self, conn: &Connection) -> Result<Step, StoreError> {
        let last = last_seq(conn)?;
        let Some(applied) = self.applied else { return Ok(Step::Rebuild) };
        if last == applied {
            return Ok(Step::Current);
        }
        let oldest: Option<i64> = conn.query_row("SELECT min(seq) FROM vectors_log", [], |r| r.get(0))?;
        // Behind the trimmed part, a newer file, or more changes than documents: read it all.
        if last < applied || oldest.is_none_or(|o| o > applied + 1) || last - applied > self.docs.len() as i64 {
            return Ok(Step::Rebuild);
        }
        Ok(Step::Apply(applied))
    }

    fn catch_up(&mut self, conn: &Connection) -> Result<(), StoreError> {
        let step = self.step(conn)?;
        self.take(conn, step)
    }

    fn take(&mut self, conn: &Connection, step: Step) -> Result<(), StoreError> {
        match step {
            Step::Current => Ok(()),
            Step::Rebuild => self.rebuild(conn),
            Step::Apply(applied) => self.apply(conn, applied),
        }
    }

    /// Re-reads the rows logged after `applied`.
    fn apply(&mut self, conn: &Connection, applied: i64) -> Result<(), StoreError> {
        let mut changed = HashSet::new();
        let mut upto = applied;
        {
            let mut st = conn.prepare_cached("SELECT seq, doc_kind, row_id FROM vectors_log WHERE seq > ?1 ORDER BY seq")?;
            let mut rows = st.query([applied])?;
            while let Some(r) = rows.next()? {
                let seq: i64 = r.get(0)?;
                // Sequence numbers have no holes but the trimmed prefix: one here means a trim
                // landed after `step` looked.
                if upto == applied && seq != applied + 1 {
                    drop(rows);
                    return self.rebuild(conn);
                }
                upto = seq;
                if let Some(kind) = DocKind::parse(r.get_ref(1)?.as_str().unwrap_or("")) {
                    changed.insert((kind, r.get::<_, i64>(2)?));
                }
            }
        }
        for (kind, row_id) in changed {
            self.remove_row((kind, row_id));
            self.load(
                conn,
                "SELECT doc_kind, row_id, doc_id, project, platform_source, created_at_epoch, embedding
                 FROM vectors WHERE doc_kind = ?1 AND row_id = ?2",
                rusqlite::params![kind.as_str(), row_id],
            )?;
        }
        self.applied = Some(upto);
        Ok(())
    }

    /// The `k` Hamming-nearest documents in scope, nearest first (ties by slot).
    fn search(&self, query: &[f32], scope: &VectorScope, k: usize) -> Vec<Candidate> {
        let q = code_of(query);
        let admit = Admit::new(scope, &self.projects, &self.platforms);
        let mut dist = vec![u16::MAX; self.docs.len()];
        let mut hist = [0usize; DIM + 1];
        for (i, (code, doc)) in self.codes.iter().zip(&self.docs).enumerate() {
            if admit.all || admit.doc(doc) {
                let h = hamming(code, &q) as usize;
                dist[i] = h as u16;
                hist[h] += 1;
            }
        }
        // The distance at which the k-th document falls: every nearer one is in, then ties in slot order.
        let (mut below, mut cut) = (0, DIM);
        for (h, n) in hist.iter().enumerate() {
            if below + n >= k {
                cut = h;
                break;
            }
            below += n;
        }
        let mut ties = k.saturating_sub(below);
        let mut out: Vec<(u16, u32)> = Vec::with_capacity(k);
        for (i, d) in dist.iter().enumerate() {
            if (*d as usize) < cut {
                out.push((*d, i as u32));
            } else if *d as usize == cut && ties > 0 {
                ties -= 1;
                out.push((*d, i as u32));
            }
        }
        out.sort_unstable();
        out.into_iter()
            .map(|(d, i)| Candidate {
                doc_id: self.doc_id(&self.docs[i as usize]),
                hamming: d as u32,
            })
            .collect()
    }
}

/// A scope resolved against the interned names.
struct Admit {
    all: bool,
    kinds: [bool; 3],
    projects: Option<HashSet<u32>>,
    platforms: Option<HashSet<u32>>,
    start: i64,
    end: i64,
}

impl Admit {
    fn new(scope: &VectorScope, projects: &Names, platforms: &Names) -> Self {
        let kinds = DocKind::ALL.map(|k| scope.kinds.is_empty() || scope.kinds.contains(&k));
        let projects = (!scope.projects.is_empty()).then(|| scope.projects.iter().filter_map(|p| projects.ids.get(p).copied()).collect());
        let platforms = scope.platform_source.as_ref().map(|_| {
            platforms
                .ids
                .iter()
                .filter(|(name, _)| scope.platform_admits(name))
                .map(|(_, id)| *id)
                .collect()
        });
        let (start, end) = (scope.date_start.unwrap_or(i64::MIN), scope.date_end.unwrap_or(i64::MAX));
        let all = kinds.iter().all(|k| *k) && projects.is_none() && platforms.is_none() && start == i64::MIN && end == i64::MAX;
        Admit {
            all,
            kinds,
            projects,
            platforms,
            start,
            end,
        }
    }

    fn doc(&self, d: &Doc) -> bool {
        let kind = DocKind::ALL.iter().position(|k| *k == d.kind).unwrap_or(0);
        self.kinds[kind]
            && self.projects.as_ref().is_none_or(|p| p.contains(&d.project))
            && self.platforms.as_ref().is_none_or(|p| p.contains(&d.platform))
            && d.created >= self.start
            && d.created <= self.end
    }
}

impl CodeIndex {
    /// An index that rebuilds inside a query only while it holds fewer than `documents`.
    pub fn rebuilding_inline_below(documents: usize) -> Self {
        CodeIndex {
            inner: Mutex::default(),
            built: AtomicBool::new(false),
            building: AtomicBool::new(false),
            inline_rebuild_max: documents,
        }
    }

    /// Brings the index up to date with `vectors` (building it on first use); the documents it holds.
    pub fn catch_up(&self, conn: &Connection) -> Result<usize, StoreError> {
        let mut codes = self.lock()?;
        let result = codes.catch_up(conn);
        self.built.store(codes.applied.is_some(), Ordering::Release);
        self.building.store(false, Ordering::Release);
        result.map(|()| codes.docs.len())
    }

    /// Catches up, then the `k` Hamming-nearest documents of `query` in `scope`. None when a large
    /// index must be rebuilt: it then counts as not built, so the next query starts the rebuild
    /// ([`CodeIndex::claim_build`]) and sqlite-vec answers until it is done.
    pub fn search(&self, conn: &Connection, query: &[f32], scope: &VectorScope, k: usize) -> Result<Option<Vec<Candidate>>, StoreError> {
        let mut codes = self.lock()?;
        let step = codes.step(conn)?;
        if matches!(step, Step::Rebuild) && codes.docs.len() >= self.inline_rebuild_max {
            self.built.store(false, Ordering::Release);
            return Ok(None);
        }
        codes.take(conn, step)?;
        Ok(Some(codes.search(query, scope, k)))
    }

    /// True while the index can answer. A build (the first, or a large rebuild) reads every stored
    /// vector, so it runs on its own ([`CodeIndex::claim_build`]) while queries use sqlite-vec.
    pub fn built(&self) -> bool {
        self.built.load(Ordering::Acquire)
    }

    /// True for the one caller that is to run the build due (then [`CodeIndex::catch_up`]).
    pub fn claim_build(&self) -> bool {
        !self.built() && !self.building.swap(true, Ordering::AcqRel)
    }

    pub fn status(&self) -> CodeStatus {
        match self.inner.try_lock() {
            Ok(c) => CodeStatus {
                built: self.built(),
                documents: c.docs.len(),
                applied_seq: c.applied.unwrap_or(0),
            },
            Err(_) => CodeStatus::default(),
        }
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, Codes>, StoreError> {
        self.inner
            .lock()
            .map_err(|_| StoreError::Internal("code index lock poisoned".into()))
    }
}
