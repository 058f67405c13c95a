//! The team's rows on this machine (issue 40): which observations went to the server (by global
//! id), which came from it (stored as `import` memories naming their origin), forgets waiting to
//! reach it, and the pull cursor. Everything here is one SQLite transaction per call, so a pulled
//! page and its cursor land together (exactly once) and a push is marked only after the server
//! committed it.

pub mod edits;
pub mod rows;
pub mod summaries;
pub mod work;

use rusqlite::{Connection, OptionalExtension, params};

use crate::pipeline::redact::Redactor;
use crate::store::StoreError;
use crate::store::observation_record::{OBS_COLS, ObservationRecord, json_array};
use edits::Known;
use rows::{Body, Incoming, LocalRef, Outgoing, body_of, observation_gid};

/// This data directory's id in global ids (random, made once).
pub fn install_id(conn: &Connection) -> Result<String, StoreError> {
    let found: Option<String> = conn
        .query_row("SELECT value FROM meta WHERE key = 'team_install_id'", [], |r| r.get(0))
        .optional()?;
    if let Some(id) = found {
        return Ok(id);
    }
    let id = crate::store::random_id().replace('-', "")[..16].to_string();
    conn.execute("INSERT INTO meta(key, value) VALUES ('team_install_id', ?1)", [&id])?;
    Ok(id)
}

/// `SELECT <select>` over the observations of `projects` waiting for their push.
fn waiting(projects: &[String], select: &str) -> String {
    let marks = vec!["?"; projects.len()].join(", ");
    format!(
        "SELECT {select} FROM observations o
         WHERE o.project IN ({marks}) AND o.quarantined = 0 AND coalesce(o.imported_from, '') NOT LIKE 'team:%'
           AND NOT EXISTS (SELECT 1 FROM team_rows t WHERE t.observation_id = o.id)"
    )
}

/// Observations of the shared projects not pushed yet, oldest first: never quarantined, never a
/// row that came from the team. A read: the writer is not held while a push waits on the server.
pub fn outgoing(
    conn: &Connection,
    projects: &[String],
    redactor: &Redactor,
    install: &str,
    limit: usize,
) -> Result<Vec<Outgoing>, StoreError> {
    if projects.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!("{} ORDER BY o.id LIMIT {limit}", waiting(projects, OBS_COLS));
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(rusqlite::params_from_iter(projects.iter()), |r| {
        Ok((r.get::<_, i64>("id")?, ObservationRecord::from_row(r)?))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (id, rec) = row?;
        let kind = if rec.origin == "manual" { "memory" } else { "observation" };
        out.push(Outgoing {
            gid: observation_gid(install, id),
            local: LocalRef::Observation(id),
            kind,
            project: rec.project.clone(),
            provenance: rec.provenance.clone(),
            content_hash: rec.content_hash.clone(),
            body: serde_json::to_value(body_of(&rec, redactor)).unwrap_or_default(),
            created_at_epoch: rec.created_at_epoch,
        });
    }
    if out.len() < limit {
        out.extend(work::outgoing(conn, projects, redactor, install, limit - out.len())?);
    }
    if out.len() < limit {
        out.extend(summaries::outgoing(conn, projects, redactor, install, limit - out.len())?);
    }
    Ok(out)
}

/// Marks rows the server committed.
pub fn mark_pushed(conn: &Connection, rows: &[(String, LocalRef)], origin: &str, now: i64) -> Result<(), StoreError> {
    let mut stmt = conn.prepare_cached(
        "INSERT INTO team_rows(gid, observation_id, summary_id, version, origin, mine, at_epoch) VALUES (?1, ?2, ?3, ?4, ?5, 1, ?6)
         ON CONFLICT(gid) DO UPDATE SET observation_id = excluded.observation_id, summary_id = excluded.summary_id,
           version = excluded.version",
    )?;
    for (gid, local) in rows {
        let (obs, sum, version) = match *local {
            LocalRef::Observation(id) => (Some(id), None, None),
            LocalRef::Summary(id) => (None, Some(id), None),
            LocalRef::Work(v) => (None, None, Some(v)),
        };
        stmt.execute(params![gid, obs, sum, version, origin, now])?;
    }
    Ok(())
}

pub fn tombstones_due(conn: &Connection, limit: usize) -> Result<Vec<String>, StoreError> {
    let mut stmt = conn.prepare_cached("SELECT gid FROM team_tombstones WHERE state = 'pending' ORDER BY at_epoch LIMIT ?1")?;
    let rows = stmt.query_map([limit as i64], |r| r.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

pub fn tombstone_done(conn: &Connection, gid: &str, refused: bool) -> Result<(), StoreError> {
    let state = if refused { "refused" } else { "sent" };
    conn.execute("UPDATE team_tombstones SET state = ?2 WHERE gid = ?1", params![gid, state])?;
    Ok(())
}

pub fn pull_cursor(conn: &Connection) -> Result<i64, StoreError> {
    let v: Option<String> = conn
        .query_row("SELECT value FROM meta WHERE key = 'team_pull_seq'", [], |r| r.get(0))
        .optional()?;
    Ok(v.and_then(|v| v.parse().ok()).unwrap_or(0))
}

pub(super) fn ensure_session(conn: &Connection, origin: &str, project: &str, now: i64) -> Result<String, StoreError> {
    let msid = format!("team-{origin}-{project}");
    conn.execute(
        "INSERT OR IGNORE INTO sdk_sessions (content_session_id, memory_session_id, platform_source, project, origin, status,
             started_at, started_at_epoch, last_event_epoch)
         VALUES (?1, ?2, 'claude', ?3, 'import', 'completed', ?4, ?5, ?5)",
        params![
            format!("team-content-{origin}-{project}"),
            msid,
            project,
            crate::clock::iso(now),
            now
        ],
    )?;
    Ok(msid)
}

/// Removes the local copy of a row its origin forgot.
fn remove_local(conn: &Connection, gid: &str, known: Option<Known>, now: i64) -> Result<bool, StoreError> {
    use crate::store::forget::{RecordKind, RecordRef, forget_one};
    let target = match known {
        Some(Known { observation: Some(id), .. }) => RecordRef {
            kind: RecordKind::Observation,
            id,
        },
        Some(Known { summary: Some(id), .. }) => RecordRef {
            kind: RecordKind::Summary,
            id,
        },
        _ => return Ok(false),
    };
    conn.execute(
        "UPDATE team_rows SET observation_id = NULL, summary_id = NULL WHERE gid = ?1",
        [gid],
    )?;
    forget_one(conn, target, Some("forgotten by its origin"), now)
}

/// What a pulled page did here.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Applied {
    pub added: usize,
    pub removed: usize,
    /// Rows whose origin edited them since they were pulled.
    pub edited: usize,
}

/// Stores a pulled page (others' rows as `import` memories, tombstones as removals; this
/// machine's own rows skipped) and moves the cursor past it, in one transaction.
pub fn apply_pulled(conn: &Connection, rows: &[Incoming], install: &str, projects: &[String], now: i64) -> Result<Applied, StoreError> {
    let mut done = Applied::default();
    for r in rows {
        // Only the projects this machine shares (issue 51: a row for another project never lands
        // in that project's SessionStart), and never dated after now.
        if r.gid.starts_with(&format!("{install}-")) || !projects.contains(&r.project) {
            continue;
        }
        let clamped;
        let r = if r.created_at_epoch > now {
            clamped = Incoming {
                created_at_epoch: now,
                ..r.clone()
            };
            &clamped
        } else {
            r
        };
        let known = edits::known(conn, &r.gid)?;
        if r.deleted {
            done.removed += usize::from(remove_local(conn, &r.gid, known, now)?);
            continue;
        }
        if let Some(k) = known {
            done.edited += usize::from(edits::apply_edit(conn, &k, r)?);
            continue;
        }
        if r.kind == "summary" {
            done.added += usize::from(summaries::apply(conn, r, now)?);
            continue;
        }
        if r.kind == "work_state" {
            done.edited += usize::from(work::apply(conn, r)?);
            continue;
        }
        let body: Body = serde_json::from_value(r.body.clone()).unwrap_or_default();
        let msid = ensure_session(conn, &r.origin, &r.project, now)?;
        let mut rec = ObservationRecord::new(&msid, &r.project, "claude", &body.obs_type, "import").created(r.created_at_epoch);
        rec.title = body.title;
        rec.subtitle = body.subtitle;
        rec.narrative = body.narrative;
        rec.facts = json_array(&body.facts);
        rec.concepts = json_array(&body.concepts);
        rec.files_read = json_array(&body.files_read);
        rec.files_modified = json_array(&body.files_modified);
        rec.content_hash = r.content_hash.clone();
        rec.imported_from = Some(format!("team:{}", r.origin));
        let id = rec.insert(conn)?;
        done.added += usize::from(id.is_some());
        conn.execute(
            "INSERT OR IGNORE INTO team_rows(gid, observation_id, origin, mine, seq, at_epoch) VALUES (?1, ?2, ?3, 0, ?4, ?5)",
            params![r.gid, id, r.origin, r.seq, now],
        )?;
    }
    if let Some(last) = rows.last() {
        conn.execute(
            "INSERT INTO meta(key, value) VALUES ('team_pull_seq', ?1) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [last.seq.to_string()],
        )?;
    }
    Ok(done)
}

/// Counts for status: pushed, pulled, waiting tombstones, refused tombstones.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TeamFigures {
    pub pushed: i64,
    pub pulled: i64,
    pub tombstones_waiting: i64,
    pub tombstones_refused: i64,
    pub pull_seq: i64,
    /// Observations and summaries of the shared projects waiting for their push.
    pub queue: i64,
}

/// The waiting rows of [`outgoing`], counted.
fn queue(conn: &Connection, projects: &[String]) -> Result<i64, StoreError> {
    if projects.is_empty() {
        return Ok(0);
    }
    let sql = waiting(projects, "count(*)");
    let observations: i64 = conn.query_row(&sql, rusqlite::params_from_iter(projects.iter()), |r| r.get(0))?;
    Ok(observations + summaries::queue(conn, projects)?)
}

pub fn figures(conn: &Connection, projects: &[String]) -> Result<TeamFigures, StoreError> {
    let n = |sql: &str| conn.query_row(sql, [], |r| r.get::<_, i64>(0));
    Ok(TeamFigures {
        queue: queue(conn, projects)?,
        pushed: n("SELECT count(*) FROM team_rows WHERE mine = 1")?,
        pulled: n("SELECT count(*) FROM team_rows WHERE mine = 0")?,
        tombstones_waiting: n("SELECT count(*) FROM team_tombstones WHERE state = 'pending'")?,
        tombstones_refused: n("SELECT count(*) FROM team_tombstones WHERE state = 'refused'")?,
        pull_seq: pull_cursor(conn)?,
    })
}
