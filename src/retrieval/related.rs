//! `related(entity)` (MCP `related`, `GET /api/related`, `memd related`): an entity's neighbours
//! in the graph, strongest first, each with the observations that show the relation. An entity
//! is named as stored (a file relative to its project root), by an alias (its absolute path), or —
//! for a file, when nothing else matches — by the end of its path. Quarantined observations are
//! never evidence here, a neighbour whose name reads as an instruction is left out, and a relation
//! whose evidence is all stale says so.

use rusqlite::{Connection, params};
use serde::Serialize;

use super::RetrievalError;
use crate::clock::iso;

pub const DEFAULT_LIMIT: usize = 20;
pub const MAX_LIMIT: usize = 100;

#[derive(Debug, Clone, Default)]
pub struct RelatedRequest {
    pub entity: String,
    pub project: Option<String>,
    /// Relation kinds (`fixes`, …) or entity kinds (`file`, …) to keep; empty = all.
    pub kinds: Vec<String>,
    pub limit: usize,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Matched {
    pub kind: String,
    pub name: String,
    pub project: String,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Neighbour {
    pub entity: String,
    pub kind: String,
    pub relation: String,
    /// `out` when the asked entity is the relation's source (`file —fixes→ command`), else `in`.
    pub direction: &'static str,
    /// Distinct observations that show the relation.
    pub strength: usize,
    pub evidence: Vec<i64>,
    pub last_seen: String,
    /// Every observation of the evidence is stale (a later commit changed what it describes).
    pub stale: bool,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Related {
    pub entity: String,
    pub matched: Vec<Matched>,
    pub related: Vec<Neighbour>,
}

fn matches(conn: &Connection, req: &RelatedRequest) -> Result<Vec<(i64, Matched)>, RetrievalError> {
    let read = |sql: &str, first: &str| -> Result<Vec<(i64, Matched)>, RetrievalError> {
        let mut stmt = conn.prepare_cached(sql)?;
        let rows = stmt.query_map(params![first, req.project], |r| {
            Ok((
                r.get("id")?,
                Matched {
                    kind: r.get("kind")?,
                    name: r.get("name")?,
                    project: r.get("project")?,
                },
            ))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    };
    let exact = read(
        "SELECT id, kind, name, project FROM entities e
         WHERE (name = ?1 OR id IN (SELECT entity_id FROM entity_aliases WHERE alias = ?1)) AND (?2 IS NULL OR project = ?2)
         ORDER BY id LIMIT 20",
        req.entity.trim(),
    )?;
    if !exact.is_empty() {
        return Ok(exact);
    }
    read(
        "SELECT id, kind, name, project FROM entities e
         WHERE kind = 'file' AND name LIKE ?1 ESCAPE '\\' AND (?2 IS NULL OR project = ?2) ORDER BY id LIMIT 20",
        &format!("%/{}", like_escaped(req.entity.trim())),
    )
}

fn like_escaped(s: &str) -> String {
    s.chars().fold(String::new(), |mut out, c| {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
        out
    })
}

fn wanted(req: &RelatedRequest, relation: &str, kind: &str) -> bool {
    req.kinds.is_empty() || req.kinds.iter().any(|k| k == relation || k == kind)
}

pub fn related(conn: &Connection, req: &RelatedRequest) -> Result<Related, RetrievalError> {
    let entity = req.entity.trim();
    if entity.is_empty() {
        return Err(RetrievalError::Invalid(
            "entity must name a file, symbol, command, error or concept".into(),
        ));
    }
    let found = matches(conn, req)?;
    let mut related: Vec<Neighbour> = Vec::new();
    let mut edges = conn.prepare_cached(
        "SELECT r.id, r.kind AS relation, r.src = ?1 AS outgoing, o.kind, o.name FROM relations r
         JOIN entities o ON o.id = CASE WHEN r.src = ?1 THEN r.dst ELSE r.src END
         WHERE r.src = ?1 OR r.dst = ?1",
    )?;
    let mut evidence = conn.prepare_cached(
        "SELECT o.id, o.created_at_epoch, o.stale_at_epoch IS NOT NULL FROM relation_evidence x
         JOIN observations o ON o.id = x.observation_id
         WHERE x.relation_id = ?1 AND o.quarantined = 0 ORDER BY o.id",
    )?;
    for (id, _) in &found {
        let rows: Vec<(i64, String, bool, String, String)> = edges
            .query_map([id], |r| {
                Ok((r.get("id")?, r.get("relation")?, r.get("outgoing")?, r.get("kind")?, r.get("name")?))
            })?
            .collect::<Result<_, _>>()?;
        for (rel, relation, outgoing, kind, name) in rows {
            // A name read from a tool's output that reads as an instruction is never handed on.
            if !wanted(req, &relation, &kind) || crate::pipeline::instruction::screen(&name).is_some() {
                continue;
            }
            let ev: Vec<(i64, i64, bool)> = evidence
                .query_map([rel], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                .collect::<Result<_, _>>()?;
            if ev.is_empty() {
                continue;
            }
            related.push(Neighbour {
                entity: name,
                kind,
                relation,
                direction: if outgoing { "out" } else { "in" },
                strength: ev.len(),
                last_seen: iso(ev.iter().map(|e| e.1).max().unwrap_or(0)),
                stale: ev.iter().all(|e| e.2),
                evidence: ev.into_iter().map(|e| e.0).collect(),
            });
        }
    }
    related.sort_by(|a, b| {
        b.strength
            .cmp(&a.strength)
            .then(b.last_seen.cmp(&a.last_seen))
            .then(a.entity.cmp(&b.entity))
    });
    related.truncate(req.limit.clamp(1, MAX_LIMIT));
    Ok(Related {
        entity: entity.to_string(),
        matched: found.into_iter().map(|(_, m)| m).collect(),
        related,
    })
}
