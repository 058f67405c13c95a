//! `save_memory`: an explicit note stored at once, no observer (docs/spec/pipeline.md §17, storage §5).
//! Gets or creates the project's manual session, then inserts the observation or reinforces the
//! existing one with the same content hash.

use rusqlite::{Connection, OptionalExtension, params};

use super::StoreError;
use super::batch::add_reinforcement_date;
use super::observation_record::{ObservationRecord, json_array};
use crate::clock::{day, iso};
use crate::pipeline::hash::content_hash;

/// A manual memory whose fields are already cleaned (tags, redaction) and bounded.
#[derive(Debug, Clone, Default)]
pub struct ManualMemory {
    pub platform_source: String,
    pub project: String,
    pub obs_type: String,
    pub title: String,
    pub narrative: String,
    pub concepts: Vec<String>,
    /// A JSON object, serialised.
    pub metadata: Option<String>,
    /// The user's own (`memd remember`, the viewer) or an agent's (`save_memory`).
    pub provenance: super::quarantine::Provenance,
    /// The memory this one replaces (`supersedes`; the caller checked it exists).
    pub supersedes: Option<i64>,
}

#[cfg(test)]
impl ManualMemory {
    /// A user's `discovery` memory in `project` (the store tests' common case; struct update
    /// syntax changes the rest).
    pub(crate) fn by_user(project: &str, title: &str, narrative: &str) -> Self {
        Self {
            platform_source: "claude".into(),
            project: project.into(),
            obs_type: "discovery".into(),
            title: title.into(),
            narrative: narrative.into(),
            provenance: super::quarantine::Provenance::User,
            ..Default::default()
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedMemory {
    pub id: i64,
    pub reinforced: bool,
    pub occurrence_count: i64,
}

/// `manual-<project>` for `claude`, `manual-<platform>-<project>` otherwise.
pub fn manual_memory_session_id(platform: &str, project: &str) -> String {
    if platform == "claude" {
        format!("manual-{project}")
    } else {
        format!("manual-{platform}-{project}")
    }
}

/// Gets or creates the manual session of `(platform, project)`; it is always `active`.
fn manual_session(conn: &Connection, platform: &str, project: &str, now: i64) -> Result<String, StoreError> {
    let content_id = format!("manual-content-{project}");
    let found: Option<String> = conn
        .query_row(
            "SELECT memory_session_id FROM sdk_sessions WHERE platform_source = ?1 AND content_session_id = ?2",
            params![platform, content_id],
            |r| r.get(0),
        )
        .optional()?;
    if let Some(msid) = found {
        conn.execute(
            "UPDATE sdk_sessions SET status = 'active', last_event_epoch = max(last_event_epoch, ?2) WHERE memory_session_id = ?1",
            params![msid, now],
        )?;
        return Ok(msid);
    }
    let msid = manual_memory_session_id(platform, project);
    conn.execute(
        "INSERT INTO sdk_sessions (content_session_id, memory_session_id, platform_source, project, origin, started_at,
           started_at_epoch, last_event_epoch)
         VALUES (?1, ?2, ?3, ?4, 'manual', ?5, ?6, ?6)",
        params![content_id, msid, platform, project, iso(now), now],
    )?;
    Ok(msid)
}

/// Stores one manual memory or reinforces its duplicate. An explicit save of a forgotten memory
/// stores it again (the user asked for it): its tombstone is removed.
pub fn save_memory(conn: &Connection, m: &ManualMemory, now: i64) -> Result<SavedMemory, StoreError> {
    let msid = manual_session(conn, &m.platform_source, &m.project, now)?;
    let hash = content_hash(&msid, Some(&m.title), Some(&m.narrative));
    conn.execute(
        "DELETE FROM tombstones WHERE memory_session_id = ?1 AND content_hash = ?2",
        params![msid, hash],
    )?;
    let record = ObservationRecord {
        title: Some(m.title.clone()),
        subtitle: Some("Manual memory".into()),
        narrative: Some(m.narrative.clone()),
        concepts: json_array(&m.concepts),
        content_hash: hash.clone(),
        metadata: m.metadata.clone(),
        ..ObservationRecord::new(&msid, &m.project, &m.platform_source, &m.obs_type, "manual")
            .by(m.provenance)
            .created(now)
    };
    let inserted = record.insert(conn)?;
    if let Some(id) = inserted {
        match m.supersedes {
            Some(old) => {
                super::supersession::supersede(conn, old, id, "explicit")?;
            }
            None => {
                super::supersession::apply_rules(conn, id, now)?;
            }
        }
        return Ok(SavedMemory {
            id,
            reinforced: false,
            occurrence_count: 1,
        });
    }
    let (id, dates, count): (i64, String, i64) = conn.query_row(
        "SELECT id, reinforcement_dates, occurrence_count FROM observations WHERE memory_session_id = ?1 AND content_hash = ?2",
        params![msid, hash],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )?;
    conn.execute(
        "UPDATE observations SET occurrence_count = occurrence_count + 1, last_reinforced_epoch = ?2, reinforcement_dates = ?3 WHERE id = ?1",
        params![id, now, add_reinforcement_date(&dates, &day(now))],
    )?;
    Ok(SavedMemory {
        id,
        reinforced: true,
        occurrence_count: count + 1,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory(text: &str) -> ManualMemory {
        ManualMemory::by_user("shop", "Prices", text)
    }

    #[test]
    fn saves_then_reinforces() {
        let conn = crate::store::test_conn();
        let a = save_memory(&conn, &memory("Prices are integer cents"), 1_000).unwrap();
        assert!(!a.reinforced);
        let b = save_memory(&conn, &memory("Prices are integer cents"), 2_000).unwrap();
        assert_eq!((b.id, b.reinforced, b.occurrence_count), (a.id, true, 2));
        let msid: String = conn
            .query_row("SELECT memory_session_id FROM observations WHERE id = ?1", [a.id], |r| r.get(0))
            .unwrap();
        assert_eq!(msid, "manual-shop");
        let c = save_memory(&conn, &memory("Other"), 3_000).unwrap();
        assert_ne!(c.id, a.id);
        let sessions: i64 = conn.query_row("SELECT count(*) FROM sdk_sessions", [], |r| r.get(0)).unwrap();
        assert_eq!(sessions, 1);
    }

    #[test]
    fn other_platforms_get_their_own_session() {
        assert_eq!(manual_memory_session_id("claude", "p"), "manual-p");
        assert_eq!(manual_memory_session_id("codex", "p"), "manual-codex-p");
    }
}
