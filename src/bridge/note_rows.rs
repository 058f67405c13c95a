//! Markdown notes imported as memories (issue 39, `MEMD_NOTES_ROOTS`): one observation per file
//! (origin and provenance `import`, `imported_from = 'notes:<path>'`, in the project's `notes-…`
//! session); a changed file is imported again and its earlier memory marked superseded by the new
//! one — nothing imported is ever deleted, and a forgotten note stays forgotten.

use rusqlite::{Connection, OptionalExtension, params};

use crate::pipeline::hash::content_hash;
use crate::store::StoreError;
use crate::store::observation_record::ObservationRecord;

/// One note to import (text already cleaned).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteIn {
    pub path: String,
    pub project: String,
    pub title: String,
    pub text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoteOutcome {
    New(i64),
    Unchanged,
    /// Imported again: `new` supersedes `old`.
    Updated {
        old: i64,
        new: i64,
    },
    Forgotten,
}

fn ensure_session(conn: &Connection, project: &str, now: i64) -> Result<String, StoreError> {
    let msid = format!("notes-{project}");
    conn.execute(
        "INSERT OR IGNORE INTO sdk_sessions (content_session_id, memory_session_id, platform_source, project, origin, status,
             started_at, started_at_epoch, last_event_epoch)
         VALUES (?1, ?2, 'claude', ?3, 'import', 'completed', ?4, ?5, ?5)",
        params![format!("notes-content-{project}"), msid, project, crate::clock::iso(now), now],
    )?;
    Ok(msid)
}

pub fn import_note(conn: &Connection, n: &NoteIn, now: i64) -> Result<NoteOutcome, StoreError> {
    let msid = ensure_session(conn, &n.project, now)?;
    let source = format!("notes:{}", n.path);
    let hash = content_hash(&msid, Some(&n.title), Some(&n.text));
    let forgotten: Option<i64> = conn
        .query_row(
            "SELECT 1 FROM tombstones WHERE memory_session_id = ?1 AND content_hash = ?2",
            params![msid, hash],
            |r| r.get(0),
        )
        .optional()?;
    if forgotten.is_some() {
        return Ok(NoteOutcome::Forgotten);
    }
    let current: Option<(i64, String)> = conn
        .query_row(
            "SELECT id, content_hash FROM observations WHERE imported_from = ?1 AND superseded_by IS NULL ORDER BY id DESC LIMIT 1",
            [&source],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    if current.as_ref().is_some_and(|(_, h)| *h == hash) {
        return Ok(NoteOutcome::Unchanged);
    }
    let mut rec = ObservationRecord::new(&msid, &n.project, "claude", "discovery", "import").created(now);
    rec.title = Some(n.title.clone());
    rec.narrative = Some(n.text.clone());
    rec.content_hash = hash;
    rec.imported_from = Some(source);
    let Some(new) = rec.insert(conn)? else {
        // The same content is stored already (a file changed back): nothing new.
        return Ok(NoteOutcome::Unchanged);
    };
    Ok(match current {
        Some((old, _)) => {
            conn.execute(
                "UPDATE observations SET superseded_by = ?2, supersede_reason = 'note re-imported' WHERE id = ?1",
                params![old, new],
            )?;
            NoteOutcome::Updated { old, new }
        }
        None => NoteOutcome::New(new),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(text: &str) -> NoteIn {
        NoteIn {
            path: "/notes/deploys.md".into(),
            project: "shop".into(),
            title: "Deploys".into(),
            text: text.into(),
        }
    }

    #[test]
    fn a_note_is_imported_once_and_again_when_it_changes_never_deleting() {
        let c = crate::store::test_conn();
        let NoteOutcome::New(first) = import_note(&c, &note("staging first"), 1).unwrap() else {
            panic!()
        };
        assert_eq!(import_note(&c, &note("staging first"), 2).unwrap(), NoteOutcome::Unchanged);
        let NoteOutcome::Updated { old, new } = import_note(&c, &note("staging, then canary"), 3).unwrap() else {
            panic!()
        };
        assert_eq!(old, first);
        let (by, prov): (Option<i64>, String) = c
            .query_row("SELECT superseded_by, provenance FROM observations WHERE id = ?1", [first], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        assert_eq!((by, prov.as_str()), (Some(new), "import"));
        let n: i64 = c.query_row("SELECT count(*) FROM observations", [], |r| r.get(0)).unwrap();
        assert_eq!(n, 2, "the earlier note is kept");
    }
}
