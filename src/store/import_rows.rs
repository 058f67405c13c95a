//! `import_chunk`: one transaction per ≤ 1,000 claude-mem rows, with their `import_map` rows
//! (docs/spec/storage.md §7). Rows arrive already cleaned (privacy, bounds); this decides what is
//! new, what was mapped before, and what is a duplicate or tombstoned (skipped, never reinforced).

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension, params};

use super::StoreError;
use super::import_insert::{ImportObservation, ImportSummary};
use crate::clock::iso;

#[derive(Debug, Clone)]
pub struct ImportSession {
    pub src_id: i64,
    pub content_session_id: String,
    pub memory_session_id: String,
    pub platform_source: String,
    pub project: String,
    pub custom_title: Option<String>,
    pub user_prompt: Option<String>,
    pub started_at_epoch: i64,
    pub completed_at_epoch: Option<i64>,
    pub status: String,
}

#[derive(Debug, Clone)]
pub struct ImportPrompt {
    pub src_id: i64,
    pub src_session_id: i64,
    pub prompt_number: i64,
    pub text: String,
    pub is_private: bool,
    pub created_at_epoch: i64,
}

#[derive(Debug, Clone)]
pub enum ImportChunk {
    Sessions(Vec<ImportSession>),
    Prompts(Vec<ImportPrompt>),
    Observations(Vec<ImportObservation>),
    Summaries(Vec<ImportSummary>),
}

/// Per-chunk outcome counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ChunkOutcome {
    pub imported: u64,
    pub mapped_before: u64,
    pub duplicate: u64,
    pub invalid: u64,
}

struct Target {
    id: i64,
    msid: String,
    platform: String,
}

fn mapped(conn: &Connection, source: &str, kind: &str, src_id: i64) -> Result<bool, StoreError> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM import_map WHERE source = ?1 AND kind = ?2 AND source_id = ?3")?
        .query_row(params![source, kind, src_id], |_| Ok(()))
        .optional()?
        .is_some())
}

fn record(conn: &Connection, source: &str, kind: &str, src_id: i64, target: Option<i64>) -> Result<(), StoreError> {
    conn.prepare_cached("INSERT OR IGNORE INTO import_map(source, kind, source_id, target_id) VALUES (?1, ?2, ?3, ?4)")?
        .execute(params![source, kind, src_id, target])?;
    Ok(())
}

fn target<'a>(
    conn: &Connection,
    source: &str,
    src_session: i64,
    cache: &'a mut HashMap<i64, Option<Target>>,
) -> Result<Option<&'a Target>, StoreError> {
    if let std::collections::hash_map::Entry::Vacant(slot) = cache.entry(src_session) {
        let t = conn
            .query_row(
                "SELECT s.id, s.memory_session_id, s.platform_source FROM import_map m JOIN sdk_sessions s ON s.id = m.target_id
                 WHERE m.source = ?1 AND m.kind = 'session' AND m.source_id = ?2",
                params![source, src_session],
                |r| {
                    Ok(Target {
                        id: r.get(0)?,
                        msid: r.get(1)?,
                        platform: r.get(2)?,
                    })
                },
            )
            .optional()?;
        slot.insert(t);
    }
    Ok(cache.get(&src_session).and_then(Option::as_ref))
}

/// Later children move the session's last event and prompt counter forward.
fn bump_session(conn: &Connection, id: i64, epoch: i64, prompt_number: Option<i64>) -> Result<(), StoreError> {
    conn.prepare_cached(
        "UPDATE sdk_sessions SET last_event_epoch = max(last_event_epoch, ?2), prompt_counter = max(prompt_counter, coalesce(?3, 0)) WHERE id = ?1",
    )?
    .execute(params![id, epoch, prompt_number])?;
    Ok(())
}

fn session(conn: &Connection, source: &str, s: &ImportSession, out: &mut ChunkOutcome) -> Result<(), StoreError> {
    let existing: Option<i64> = conn
        .query_row(
            "SELECT id FROM sdk_sessions WHERE platform_source = ?1 AND content_session_id = ?2",
            params![s.platform_source, s.content_session_id],
            |r| r.get(0),
        )
        .optional()?;
    let id = match existing {
        Some(id) => id,
        None => {
            let msid_taken = conn
                .query_row(
                    "SELECT 1 FROM sdk_sessions WHERE memory_session_id = ?1",
                    [&s.memory_session_id],
                    |_| Ok(()),
                )
                .optional()?
                .is_some();
            let msid = if msid_taken {
                format!("claude-mem-{}", s.src_id)
            } else {
                s.memory_session_id.clone()
            };
            let last = s.completed_at_epoch.unwrap_or(s.started_at_epoch).max(s.started_at_epoch);
            conn.execute(
                "INSERT INTO sdk_sessions(content_session_id, memory_session_id, platform_source, project, user_prompt, custom_title, status,
                   origin, started_at, started_at_epoch, last_event_epoch, completed_at, completed_at_epoch)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'import', ?8, ?9, ?10, ?11, ?12)",
                params![
                    s.content_session_id,
                    msid,
                    s.platform_source,
                    s.project,
                    s.user_prompt,
                    s.custom_title,
                    s.status,
                    iso(s.started_at_epoch),
                    s.started_at_epoch,
                    last,
                    s.completed_at_epoch.map(iso),
                    s.completed_at_epoch
                ],
            )?;
            conn.last_insert_rowid()
        }
    };
    record(conn, source, "session", s.src_id, Some(id))?;
    out.imported += 1;
    Ok(())
}

/// Writes one chunk; rows mapped by an earlier run are counted and left alone.
pub fn write_chunk(conn: &Connection, source: &str, chunk: &ImportChunk) -> Result<ChunkOutcome, StoreError> {
    let mut out = ChunkOutcome::default();
    let mut cache = HashMap::new();
    match chunk {
        ImportChunk::Sessions(rows) => {
            for s in rows {
                if mapped(conn, source, "session", s.src_id)? {
                    out.mapped_before += 1;
                } else {
                    session(conn, source, s, &mut out)?;
                }
            }
        }
        ImportChunk::Prompts(rows) => {
            for p in rows {
                if mapped(conn, source, "prompt", p.src_id)? {
                    out.mapped_before += 1;
                    continue;
                }
                let Some(t) = target(conn, source, p.src_session_id, &mut cache)? else {
                    out.invalid += 1;
                    continue;
                };
                let (sid, platform) = (t.id, t.platform.clone());
                let inserted: Option<i64> = conn
                    .query_row(
                        "INSERT INTO user_prompts(session_db_id, content_session_id, platform_source, project, prompt_number, prompt_text,
                           is_private, created_at, created_at_epoch)
                         SELECT id, content_session_id, ?2, project, ?3, ?4, ?5, ?6, ?7 FROM sdk_sessions WHERE id = ?1
                         ON CONFLICT(session_db_id, prompt_number) DO NOTHING RETURNING id",
                        params![
                            sid,
                            platform,
                            p.prompt_number,
                            p.text,
                            p.is_private,
                            iso(p.created_at_epoch),
                            p.created_at_epoch
                        ],
                        |r| r.get(0),
                    )
                    .optional()?;
                match inserted {
                    Some(_) => {
                        out.imported += 1;
                        bump_session(conn, sid, p.created_at_epoch, Some(p.prompt_number))?;
                    }
                    None => out.duplicate += 1,
                }
                record(conn, source, "prompt", p.src_id, inserted)?;
            }
        }
        ImportChunk::Observations(rows) => {
            for o in rows {
                if mapped(conn, source, "observation", o.src_id)? {
                    out.mapped_before += 1;
                    continue;
                }
                let Some(t) = target(conn, source, o.src_session_id, &mut cache)? else {
                    out.invalid += 1;
                    continue;
                };
                let (sid, msid, platform) = (t.id, t.msid.clone(), t.platform.clone());
                let id = super::import_insert::observation(conn, o, &msid, &platform)?;
                match id {
                    Some(_) => {
                        out.imported += 1;
                        bump_session(conn, sid, o.created_at_epoch, o.prompt_number)?;
                    }
                    None => out.duplicate += 1,
                }
                record(conn, source, "observation", o.src_id, id)?;
            }
        }
        ImportChunk::Summaries(rows) => {
            for s in rows {
                if mapped(conn, source, "summary", s.src_id)? {
                    out.mapped_before += 1;
                    continue;
                }
                let Some(t) = target(conn, source, s.src_session_id, &mut cache)? else {
                    out.invalid += 1;
                    continue;
                };
                let (sid, msid, platform) = (t.id, t.msid.clone(), t.platform.clone());
                let id = super::import_insert::summary(conn, s, &msid, &platform)?;
                match id {
                    Some(_) => {
                        out.imported += 1;
                        bump_session(conn, sid, s.created_at_epoch, s.prompt_number)?;
                    }
                    None => out.duplicate += 1,
                }
                record(conn, source, "summary", s.src_id, id)?;
            }
        }
    }
    Ok(out)
}

/// Dry run: counts rows mapped before; every other row counts as importable. Reads only.
pub fn dry_chunk(conn: &Connection, source: &str, chunk: &ImportChunk) -> Result<ChunkOutcome, StoreError> {
    let (kind, ids): (&str, Vec<i64>) = match chunk {
        ImportChunk::Sessions(r) => ("session", r.iter().map(|x| x.src_id).collect()),
        ImportChunk::Prompts(r) => ("prompt", r.iter().map(|x| x.src_id).collect()),
        ImportChunk::Observations(r) => ("observation", r.iter().map(|x| x.src_id).collect()),
        ImportChunk::Summaries(r) => ("summary", r.iter().map(|x| x.src_id).collect()),
    };
    let mut out = ChunkOutcome::default();
    for id in ids {
        if mapped(conn, source, kind, id)? {
            out.mapped_before += 1;
        } else {
            out.imported += 1;
        }
    }
    Ok(out)
}
