//! Observations out and back in (issue 39, `memd export` / `memd import-md`): a page of whole
//! records with their id and session, and the import of one such record — the id kept when no
//! observation and no tombstone holds it, another id otherwise; nothing stored twice (the
//! `(memory_session_id, content_hash)` key) and nothing forgotten brought back. Supersession
//! links are set after every record is in, with the ids the import gave.

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};

use super::StoreError;
use super::observation_record::{OBS_COLS, ObservationRecord};

/// The session an exported observation belongs to (enough to recreate it).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ExportSession {
    pub content_session_id: String,
    pub platform_source: String,
    pub project: String,
    pub started_at_epoch: i64,
}

/// One observation as exported: its id, every column, its session.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExportedObservation {
    pub id: i64,
    #[serde(flatten)]
    pub record: ObservationRecord,
    #[serde(default)]
    pub session: ExportSession,
}

/// What importing one record did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "outcome", content = "id")]
pub enum Imported {
    /// Stored under its own id.
    Kept(i64),
    /// Stored under a new id (its own was taken).
    Remapped(i64),
    /// Already stored (same session and content), under this id.
    Duplicate(i64),
    /// Forgotten here before: not brought back.
    Forgotten,
}

impl Imported {
    /// The id the record has here, if it is here.
    pub fn id(self) -> Option<i64> {
        match self {
            Imported::Kept(id) | Imported::Remapped(id) | Imported::Duplicate(id) => Some(id),
            Imported::Forgotten => None,
        }
    }
}

/// Observations with id > `after`, oldest id first, of `project` and since `since` when given.
pub fn export_page(
    conn: &Connection,
    project: Option<&str>,
    since: Option<i64>,
    after: i64,
    limit: usize,
) -> Result<Vec<ExportedObservation>, rusqlite::Error> {
    let sql = format!(
        "SELECT {OBS_COLS}, s.content_session_id AS s_content, s.platform_source AS s_platform, s.project AS s_project,
                s.started_at_epoch AS s_started
         FROM observations o LEFT JOIN sdk_sessions s ON s.memory_session_id = o.memory_session_id
         WHERE o.id > ?1 AND (?2 IS NULL OR o.project = ?2 OR o.merged_into_project = ?2)
           AND (?3 IS NULL OR o.created_at_epoch >= ?3)
         ORDER BY o.id LIMIT ?4"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params![after, project, since, limit as i64], |r| {
        Ok(ExportedObservation {
            id: r.get("id")?,
            record: ObservationRecord::from_row(r)?,
            session: ExportSession {
                content_session_id: r.get::<_, Option<String>>("s_content")?.unwrap_or_default(),
                platform_source: r.get::<_, Option<String>>("s_platform")?.unwrap_or_default(),
                project: r.get::<_, Option<String>>("s_project")?.unwrap_or_default(),
                started_at_epoch: r.get::<_, Option<i64>>("s_started")?.unwrap_or_default(),
            },
        })
    })?;
    rows.collect()
}

/// Creates the record's session when it is not here (a clash of host session ids gets a
/// `import-<memory session>` host id).
fn ensure_session(conn: &Connection, e: &ExportedObservation) -> Result<(), rusqlite::Error> {
    let msid = &e.record.memory_session_id;
    let have: Option<i64> = conn
        .query_row("SELECT 1 FROM sdk_sessions WHERE memory_session_id = ?1", [msid], |r| r.get(0))
        .optional()?;
    if have.is_some() {
        return Ok(());
    }
    let s = &e.session;
    let platform = Some(s.platform_source.as_str())
        .filter(|p| !p.is_empty())
        .unwrap_or(&e.record.platform_source);
    let project = Some(s.project.as_str()).filter(|p| !p.is_empty()).unwrap_or(&e.record.project);
    let started = if s.started_at_epoch > 0 {
        s.started_at_epoch
    } else {
        e.record.created_at_epoch
    };
    let fallback = format!("import-{msid}");
    let content = Some(s.content_session_id.as_str()).filter(|c| !c.is_empty()).unwrap_or(&fallback);
    for content_id in [content, fallback.as_str()] {
        let n = conn.execute(
            "INSERT OR IGNORE INTO sdk_sessions (content_session_id, memory_session_id, platform_source, project, origin,
                 status, started_at, started_at_epoch, last_event_epoch)
             VALUES (?1, ?2, ?3, ?4, 'import', 'completed', ?5, ?6, ?6)",
            params![content_id, msid, platform, project, crate::clock::iso(started), started],
        )?;
        if n == 1 {
            return Ok(());
        }
    }
    Ok(())
}

fn id_taken(conn: &Connection, id: i64) -> Result<bool, rusqlite::Error> {
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM observations WHERE id = ?1) OR EXISTS (SELECT 1 FROM tombstones WHERE observation_id = ?1)",
        [id],
        |r| r.get(0),
    )
}

/// The highest id the store holds or has held (observations and the tombstones of forgotten ones).
fn highest_id(conn: &Connection) -> Result<i64, rusqlite::Error> {
    conn.query_row(
        "SELECT max(coalesce((SELECT max(id) FROM observations), 0), coalesce((SELECT max(observation_id) FROM tombstones), 0))",
        [],
        |r| r.get(0),
    )
}

/// Imports a chunk of records, each on its own (a savepoint each): one that fails is refused
/// with the reason and the rest are stored. An id is kept only when free and not above the
/// store's highest id plus the chunk's size, so no import can push the id sequence to its end.
pub fn import_all(conn: &Connection, rows: &[ExportedObservation]) -> Result<Vec<Result<Imported, StoreError>>, StoreError> {
    let ceiling = highest_id(conn)?.saturating_add(rows.len() as i64);
    let mut out = Vec::with_capacity(rows.len());
    for e in rows {
        conn.execute_batch("SAVEPOINT import_one")?;
        match import_one(conn, e, ceiling) {
            Ok(o) => {
                conn.execute_batch("RELEASE import_one")?;
                out.push(Ok(o));
            }
            Err(err) => {
                conn.execute_batch("ROLLBACK TO import_one; RELEASE import_one")?;
                out.push(Err(err));
            }
        }
    }
    Ok(out)
}

/// Ids at or above this are no store's own: an `observations` sequence there was pushed by an
/// import before ids were bounded, and every later insert would fail ("database or disk is full").
const SEQUENCE_POISONED: i64 = 1 << 62;

/// Sets a poisoned id sequence back to the highest id the store holds or has held (run at every
/// open); true when it did.
pub fn repair_sequence(conn: &Connection) -> Result<bool, rusqlite::Error> {
    let top = highest_id(conn)?;
    let n = conn.execute(
        "UPDATE sqlite_sequence SET seq = ?1 WHERE name = 'observations' AND seq >= ?2",
        params![top.min(SEQUENCE_POISONED - 1), SEQUENCE_POISONED],
    )?;
    Ok(n > 0)
}

/// Imports one record (its `superseded_by` is left for [`link`]); its id is kept when free and
/// not above `ceiling`.
pub fn import_one(conn: &Connection, e: &ExportedObservation, ceiling: i64) -> Result<Imported, StoreError> {
    let r = &e.record;
    let forgotten: Option<i64> = conn
        .query_row(
            "SELECT 1 FROM tombstones WHERE memory_session_id = ?1 AND content_hash = ?2",
            params![r.memory_session_id, r.content_hash],
            |r| r.get(0),
        )
        .optional()?;
    if forgotten.is_some() {
        return Ok(Imported::Forgotten);
    }
    let existing: Option<i64> = conn
        .query_row(
            "SELECT id FROM observations WHERE memory_session_id = ?1 AND content_hash = ?2",
            params![r.memory_session_id, r.content_hash],
            |r| r.get(0),
        )
        .optional()?;
    if let Some(id) = existing {
        return Ok(Imported::Duplicate(id));
    }
    ensure_session(conn, e)?;
    let mut rec = r.clone();
    rec.superseded_by = None;
    let quarantined_before = rec.quarantined;
    let kept = match e.id > 0 && e.id <= ceiling && !id_taken(conn, e.id)? {
        true => rec.insert_with_id(conn, e.id)?,
        false => None,
    };
    let (outcome, id) = match kept {
        Some(id) => (Imported::Kept(id), id),
        None => match rec.insert(conn)? {
            Some(id) => (Imported::Remapped(id), id),
            None => return Err(StoreError::Internal("an imported observation was neither stored nor found".into())),
        },
    };
    if quarantined_before {
        // Quarantined where it came from: it stays so here, whatever the screen says now.
        conn.execute(
            "UPDATE observations SET quarantined = 1, quarantine_reason = coalesce(quarantine_reason, ?2) WHERE id = ?1",
            params![id, r.quarantine_reason],
        )?;
    }
    Ok(outcome)
}

/// Sets `superseded_by` links between imported records (ids as stored here).
pub fn link(conn: &Connection, links: &[(i64, i64, Option<String>)]) -> Result<usize, StoreError> {
    let mut n = 0;
    for (id, by, reason) in links {
        n += conn.execute(
            "UPDATE observations SET superseded_by = ?2, supersede_reason = ?3
             WHERE id = ?1 AND superseded_by IS NULL AND EXISTS (SELECT 1 FROM observations WHERE id = ?2)",
            params![id, by, reason],
        )?;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::memory::{ManualMemory, save_memory};

    fn save(conn: &Connection, project: &str, text: &str, now: i64) -> i64 {
        save_memory(conn, &ManualMemory::by_user(project, text, &format!("{text}, in detail")), now)
            .unwrap()
            .id
    }

    fn all(conn: &Connection) -> Vec<ExportedObservation> {
        export_page(conn, None, None, 0, 1_000).unwrap()
    }

    #[test]
    fn an_export_imported_elsewhere_is_the_same_and_a_second_import_adds_nothing() {
        let src = crate::store::test_conn();
        let a = save(&src, "shop", "prices are cents", 1_000);
        let b = save(&src, "shop", "rounding is half-even", 2_000);
        save(&src, "blog", "posts are markdown", 3_000);
        src.execute(
            "UPDATE observations SET superseded_by = ?2, supersede_reason = 'replaced' WHERE id = ?1",
            [a, b],
        )
        .unwrap();
        let out = all(&src);
        assert_eq!(export_page(&src, Some("shop"), None, 0, 10).unwrap().len(), 2);
        assert_eq!(export_page(&src, None, Some(2_000), 0, 10).unwrap().len(), 2, "since");
        assert_eq!(export_page(&src, None, None, a, 1).unwrap()[0].id, b, "paged by id");

        let dst = crate::store::test_conn();
        let outcomes: Vec<Imported> = out.iter().map(|e| import_one(&dst, e, i64::MAX).unwrap()).collect();
        assert!(outcomes.iter().all(|o| matches!(o, Imported::Kept(_))), "{outcomes:?}");
        link(&dst, &[(a, b, Some("replaced".into()))]).unwrap();
        assert_eq!(all(&dst), out, "ids, every field and the sessions are the same");
        let again: Vec<Imported> = out.iter().map(|e| import_one(&dst, e, i64::MAX).unwrap()).collect();
        assert!(again.iter().all(|o| matches!(o, Imported::Duplicate(_))), "{again:?}");
        assert_eq!(all(&dst).len(), 3);
    }

    #[test]
    fn a_taken_id_is_remapped_and_a_forgotten_record_stays_forgotten() {
        let src = crate::store::test_conn();
        save(&src, "shop", "prices are cents", 1_000);
        let gone = save(&src, "shop", "a wrong memory", 2_000);
        let out = all(&src);
        let dst = crate::store::test_conn();
        let other = save(&dst, "elsewhere", "something else entirely", 500);
        assert_eq!(other, out[0].id, "the first id is taken here");
        assert_eq!(import_one(&dst, &out[0], i64::MAX).unwrap(), Imported::Remapped(other + 1));
        crate::store::forget::forget_one(
            &src,
            crate::store::forget::RecordRef {
                kind: crate::store::forget::RecordKind::Observation,
                id: gone,
            },
            None,
            3_000,
        )
        .unwrap();
        let tomb: (String, String) = src
            .query_row("SELECT memory_session_id, content_hash FROM tombstones", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        dst.execute(
            "INSERT INTO tombstones (memory_session_id, content_hash, observation_id, deleted_at_epoch) VALUES (?1, ?2, 99, 0)",
            [&tomb.0, &tomb.1],
        )
        .unwrap();
        assert_eq!(import_one(&dst, &out[1], i64::MAX).unwrap(), Imported::Forgotten);
    }
}
