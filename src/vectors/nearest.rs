//! Nearest-neighbour queries over the embedded store (docs/spec/retrieval.md §4.5, §8).
//!
//! The `k = limit × OVERSAMPLE` Hamming-nearest documents of the query's sign bits are taken from the
//! in-memory code index ([`super::codes`]) once it is built, else from sqlite-vec's `vectors_bin`
//! (the scope applied inside the scan as vec0 metadata constraints); they are then re-ranked by exact
//! cosine over their copies in `vectors`, and the best `limit` kept. With neither, every in-scope row
//! of `vectors` is compared (brute force).

use std::collections::HashMap;

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, OptionalExtension, params_from_iter};

use super::codes::CodeIndex;
use super::documents::DocKind;
use super::embedder::dot;
use super::index::{VectorCols, extension_loaded, from_blob, to_blob, vec_table_exists};
use crate::store::StoreError;

/// Binary candidates taken per document wanted; the exact re-ranking picks among them. Measured
/// recall against exact search: docs/decisions.md ("binary index with re-ranking").
pub const OVERSAMPLE: usize = 4;
/// vec0 refuses larger `k`.
const MAX_K: usize = 4096;

/// A nearest document: its row and cosine distance (0 = same direction).
#[derive(Debug, Clone, PartialEq)]
pub struct Neighbour {
    pub doc_id: String,
    pub kind: DocKind,
    pub row_id: i64,
    pub distance: f32,
}

/// Scope of a vector query: document metadata filters (spec §4.5).
#[derive(Debug, Clone, Default)]
pub struct VectorScope {
    pub kinds: Vec<DocKind>,
    /// Empty = every project.
    pub projects: Vec<String>,
    /// `claude` also admits documents without a platform (as rows without one count as `claude`).
    pub platform_source: Option<String>,
    pub date_start: Option<i64>,
    pub date_end: Option<i64>,
}

impl VectorScope {
    pub fn admits(&self, kind: DocKind, project: &str, platform: &str, created: i64) -> bool {
        (self.kinds.is_empty() || self.kinds.contains(&kind))
            && (self.projects.is_empty() || self.projects.iter().any(|p| p == project))
            && self.platform_admits(platform)
            && self.date_start.is_none_or(|s| created >= s)
            && self.date_end.is_none_or(|e| created <= e)
    }

    pub(super) fn platform_admits(&self, platform: &str) -> bool {
        match self.platform_source.as_deref() {
            None => true,
            Some("claude") => platform == "claude" || platform.is_empty(),
            Some(p) => p == platform,
        }
    }

    /// Adds to a project scope the projects whose rows were merged into one of its projects
    /// (`merged_into_project`, docs/spec/retrieval.md §0): documents carry their row's own project, so the
    /// scope must name the merged-away projects too. The exact check (project or
    /// merged_into_project in the chain) runs on the rows afterwards, in SQL.
    pub fn with_merged_projects(mut self, conn: &Connection) -> Result<Self, StoreError> {
        if self.projects.is_empty() {
            return Ok(self);
        }
        let ph = vec!["?"; self.projects.len()].join(",");
        let sql = format!(
            "SELECT DISTINCT project FROM observations WHERE merged_into_project IN ({ph})
             UNION SELECT DISTINCT project FROM session_summaries WHERE merged_into_project IN ({ph})"
        );
        let params: Vec<&str> = self.projects.iter().chain(self.projects.iter()).map(String::as_str).collect();
        let merged: Vec<String> = conn
            .prepare_cached(&sql)?
            .query_map(params_from_iter(params), |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        for p in merged {
            if !self.projects.contains(&p) {
                self.projects.push(p);
            }
        }
        Ok(self)
    }

    /// vec0 metadata constraints (`AND …`) and their parameters.
    fn constraints(&self) -> (String, Vec<SqlValue>) {
        let mut sql = String::new();
        let mut params = Vec::new();
        let mut any_of = |col: &str, values: Vec<String>, sql: &mut String| {
            sql.push_str(&format!(" AND {col} IN ({})", vec!["?"; values.len()].join(",")));
            params.extend(values.into_iter().map(SqlValue::Text));
        };
        // Every kind named is no constraint: every document is of one of them, and a vec0
        // metadata test costs the scan (the 100,000-row bench: docs/measurements.md).
        if !self.kinds.is_empty() && !DocKind::ALL.iter().all(|k| self.kinds.contains(k)) {
            any_of("doc_kind", self.kinds.iter().map(|k| k.as_str().to_string()).collect(), &mut sql);
        }
        if !self.projects.is_empty() {
            any_of("project", self.projects.clone(), &mut sql);
        }
        match self.platform_source.as_deref() {
            Some("claude") => any_of("platform_source", vec!["claude".into(), String::new()], &mut sql),
            Some(p) => any_of("platform_source", vec![p.to_string()], &mut sql),
            None => {}
        }
        if let Some(s) = self.date_start {
            sql.push_str(" AND created_at_epoch >= ?");
            params.push(SqlValue::Integer(s));
        }
        if let Some(e) = self.date_end {
            sql.push_str(" AND created_at_epoch <= ?");
            params.push(SqlValue::Integer(e));
        }
        (sql, params)
    }
}

/// Which path answered a query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryPath {
    Codes,
    SqliteVec,
    BruteForce,
}

/// The `limit` nearest documents of `query` within `scope`, through `codes` when it is built.
pub fn nearest(
    conn: &Connection,
    codes: Option<&CodeIndex>,
    query: &[f32],
    scope: &VectorScope,
    limit: usize,
) -> Result<(Vec<Neighbour>, QueryPath), StoreError> {
    if let Some(codes) = codes.filter(|c| c.built())
        && let Some(found) = codes_then_exact(conn, codes, query, scope, limit)?
    {
        return Ok((found, QueryPath::Codes));
    }
    if extension_loaded(conn) && vec_table_exists(conn)? {
        return Ok((binary_then_exact(conn, query, scope, limit)?, QueryPath::SqliteVec));
    }
    Ok((brute_force(conn, query, scope, limit)?, QueryPath::BruteForce))
}

fn binary_then_exact(conn: &Connection, query: &[f32], scope: &VectorScope, limit: usize) -> Result<Vec<Neighbour>, StoreError> {
    let k = (limit * OVERSAMPLE).clamp(1, MAX_K);
    let (filter, filter_params) = scope.constraints();
    // One statement: the binary k-NN, then each candidate's f32 copy for the exact distance.
    let sql = format!(
        "SELECT v.doc_id, v.doc_kind, v.row_id, v.project, v.platform_source, v.created_at_epoch, v.embedding
         FROM (SELECT doc_id FROM vectors_bin WHERE embedding MATCH vec_quantize_binary(?) AND k = ?{filter}) b
         JOIN vectors v ON v.doc_id = b.doc_id"
    );
    let params = [SqlValue::Blob(to_blob(query)), SqlValue::Integer(k as i64)]
        .into_iter()
        .chain(filter_params);
    let mut st = conn.prepare_cached(&sql)?;
    let c = VectorCols::of(&st)?;
    let mut rows = st.query(params_from_iter(params))?;
    let mut out = Vec::with_capacity(k);
    while let Some(r) = rows.next()? {
        out.extend(neighbour(query, r, c)?);
    }
    out.sort_by(nearer);
    out.truncate(limit);
    Ok(out)
}

/// None when the index has to be rebuilt first (see [`CodeIndex::search`]).
fn codes_then_exact(
    conn: &Connection,
    codes: &CodeIndex,
    query: &[f32],
    scope: &VectorScope,
    limit: usize,
) -> Result<Option<Vec<Neighbour>>, StoreError> {
    let Some(found) = codes.search(conn, query, scope, (limit * OVERSAMPLE).max(1))? else {
        return Ok(None);
    };
    // One statement for every candidate's stored vector (a statement each cost more than the scan).
    let ids = serde_json::to_string(&found.iter().map(|c| c.doc_id.as_str()).collect::<Vec<_>>())
        .map_err(|e| StoreError::Internal(e.to_string()))?;
    let mut st = conn.prepare_cached(
        "SELECT doc_id, doc_kind, row_id, embedding, project, platform_source, created_at_epoch
         FROM vectors WHERE doc_id IN (SELECT value FROM json_each(?1))",
    )?;
    let c = VectorCols::of(&st)?;
    let mut rows = st.query([ids])?;
    let mut out = Vec::with_capacity(found.len());
    while let Some(r) = rows.next()? {
        // The scope again: the document may have changed since the index looked.
        let (project, platform, created): (String, String, i64) =
            (r.get(c.project)?, r.get(c.platform_source)?, r.get(c.created_at_epoch)?);
        if let Some(n) = neighbour(query, r, c)?
            && scope.admits(n.kind, &project, &platform, created)
        {
            out.push(n);
        }
    }
    out.sort_by(nearer);
    out.truncate(limit);
    Ok(Some(out))
}

/// Nearest first, whichever path answered. Equal distances are the same text embedded twice: a
/// prompt and the summary `request` or title made of it, or "Edited src/app.rs" in three sessions.
/// The user's own words (the prompt) come first, then observations, then summaries, and within a
/// kind the newest row — the latest of identical memories is the one "the last time" asks for
/// (docs/decisions.md, "Sign codes in memory").
fn nearer(a: &Neighbour, b: &Neighbour) -> std::cmp::Ordering {
    let kind = |n: &Neighbour| {
        [DocKind::Prompt, DocKind::Observation, DocKind::Summary]
            .iter()
            .position(|k| *k == n.kind)
    };
    a.distance
        .total_cmp(&b.distance)
        .then_with(|| kind(a).cmp(&kind(b)))
        .then_with(|| b.row_id.cmp(&a.row_id))
        .then_with(|| a.doc_id.cmp(&b.doc_id))
}

/// The document of a result row (columns named by `c`) and its cosine
/// distance to `query`; None for an unknown kind.
fn neighbour(query: &[f32], r: &rusqlite::Row<'_>, c: VectorCols) -> Result<Option<Neighbour>, StoreError> {
    let Some(kind) = DocKind::parse(&r.get::<_, String>(c.doc_kind)?) else {
        return Ok(None);
    };
    let blob = r.get_ref(c.embedding)?.as_blob().map_err(|e| StoreError::Internal(e.to_string()))?;
    Ok(Some(Neighbour {
        doc_id: r.get(c.doc_id)?,
        kind,
        row_id: r.get(c.row_id)?,
        distance: 1.0 - dot(query, &from_blob(blob)),
    }))
}

/// The stored vector of the latest prompt of a session (None: no prompt, private, or not embedded yet).
pub fn latest_prompt_vector(conn: &Connection, content_session_id: &str) -> Result<Option<Vec<f32>>, StoreError> {
    let blob: Option<Vec<u8>> = conn
        .query_row(
            "SELECT v.embedding FROM user_prompts p JOIN vectors v ON v.doc_id = 'prompt_' || p.id
             WHERE p.content_session_id = ?1 ORDER BY p.prompt_number DESC, p.id DESC LIMIT 1",
            [content_session_id],
            |r| r.get(0),
        )
        .optional()?;
    Ok(blob.map(|b| from_blob(&b)))
}

/// Each row's best cosine similarity to `query` over its documents (rows without documents absent).
pub fn row_similarities(conn: &Connection, query: &[f32], kind: DocKind, row_ids: &[i64]) -> Result<HashMap<i64, f32>, StoreError> {
    let mut out: HashMap<i64, f32> = HashMap::new();
    let mut st = conn.prepare_cached("SELECT embedding FROM vectors WHERE doc_kind = ?1 AND row_id = ?2")?;
    for id in row_ids {
        let mut rows = st.query(rusqlite::params![kind.as_str(), id])?;
        while let Some(r) = rows.next()? {
            let blob = r.get_ref(0)?.as_blob().map_err(|e| StoreError::Internal(e.to_string()))?;
            let sim = dot(query, &from_blob(blob));
            let best = out.entry(*id).or_insert(f32::MIN);
            *best = best.max(sim);
        }
    }
    Ok(out)
}

/// Dot products over every in-scope row of `vectors`.
pub fn brute_force(conn: &Connection, query: &[f32], scope: &VectorScope, limit: usize) -> Result<Vec<Neighbour>, StoreError> {
    let mut st =
        conn.prepare_cached("SELECT doc_id, doc_kind, row_id, project, platform_source, created_at_epoch, embedding FROM vectors")?;
    let c = VectorCols::of(&st)?;
    let mut rows = st.query([])?;
    let mut all = Vec::new();
    while let Some(r) = rows.next()? {
        let (kind, project, platform, created): (String, String, String, i64) = (
            r.get(c.doc_kind)?,
            r.get(c.project)?,
            r.get(c.platform_source)?,
            r.get(c.created_at_epoch)?,
        );
        if DocKind::parse(&kind).is_some_and(|k| scope.admits(k, &project, &platform, created)) {
            all.extend(neighbour(query, r, c)?);
        }
    }
    all.sort_by(nearer);
    all.truncate(limit);
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scope_of_every_kind_puts_no_kind_test_in_the_scan() {
        let every = VectorScope {
            kinds: DocKind::ALL.to_vec(),
            ..VectorScope::default()
        };
        assert_eq!(every.constraints(), (String::new(), Vec::new()));
        let two = VectorScope {
            kinds: vec![DocKind::Observation, DocKind::Prompt],
            projects: vec!["p".into()],
            ..VectorScope::default()
        };
        let (sql, params) = two.constraints();
        assert_eq!(sql, " AND doc_kind IN (?,?) AND project IN (?)");
        assert_eq!(params.len(), 3);
        assert!(every.admits(DocKind::Summary, "p", "claude", 0) && !two.admits(DocKind::Summary, "p", "claude", 0));
    }
}
