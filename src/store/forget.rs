//! `forget`: deleting observations, summaries and prompts (docs/spec/api.md §5.2–§5.3, storage §5).
//!
//! An observation gets a `tombstones` row (its `(memory_session_id, content_hash)`) before it is
//! deleted, so neither re-processing nor an import brings it back. Triggers remove the full-text
//! entries, the file index and the embedded vectors; foreign keys remove its sources.

use rusqlite::{Connection, OptionalExtension, params};

use super::StoreError;

/// Which table a record id belongs to (`123`, `S12`, `P7` in docs/spec/retrieval.md §0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordKind {
    Observation,
    Summary,
    Prompt,
}

impl RecordKind {
    pub fn name(self) -> &'static str {
        match self {
            RecordKind::Observation => "observation",
            RecordKind::Summary => "summary",
            RecordKind::Prompt => "prompt",
        }
    }
    /// The API path of one record of this kind (`DELETE` forgets it).
    pub fn path(self) -> &'static str {
        use crate::protocol::paths;
        match self {
            RecordKind::Observation => paths::OBSERVATION,
            RecordKind::Summary => paths::SUMMARY,
            RecordKind::Prompt => paths::PROMPT,
        }
    }
    fn table(self) -> &'static str {
        match self {
            RecordKind::Observation => "observations",
            RecordKind::Summary => "session_summaries",
            RecordKind::Prompt => "user_prompts",
        }
    }
    /// `#12`, `#S12`, `#P12`.
    pub fn label(self, id: i64) -> String {
        match self {
            RecordKind::Observation => format!("#{id}"),
            RecordKind::Summary => format!("#S{id}"),
            RecordKind::Prompt => format!("#P{id}"),
        }
    }
}

/// A record reference: kind and positive id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordRef {
    pub kind: RecordKind,
    pub id: i64,
}

impl RecordRef {
    /// Parses `12`, `"12"`, `"#12"`, `"S12"`, `"#S12"`, `"P7"`, `"#P7"` (case-insensitive letter).
    pub fn parse(s: &str) -> Option<Self> {
        let s = s.trim();
        let s = s.strip_prefix('#').unwrap_or(s);
        let (kind, digits) = match s.chars().next()? {
            'S' | 's' => (RecordKind::Summary, &s[1..]),
            'P' | 'p' => (RecordKind::Prompt, &s[1..]),
            _ => (RecordKind::Observation, s),
        };
        let id: i64 = digits.parse().ok().filter(|n| *n > 0)?;
        (!digits.starts_with('+')).then_some(Self { kind, id })
    }
}

/// Counts of forgotten (or, in a dry run, forgettable) records.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ForgetCounts {
    pub observations: usize,
    pub summaries: usize,
    pub prompts: usize,
}

/// What a bulk forget selects (exactly one selector).
#[derive(Debug, Clone)]
pub enum ForgetSelector {
    /// Every record of that host session; `platform` narrows it when given.
    Session {
        content_session_id: String,
        platform: Option<String>,
    },
    /// Every record whose `project` or `merged_into_project` is `project`, older than `before` when
    /// given, of that provenance when given (prompts are the user's own).
    Project {
        project: String,
        before: Option<i64>,
        provenance: Option<super::quarantine::Provenance>,
    },
    Ids(Vec<RecordRef>),
}

/// Deletes one record; `false` when it does not exist.
pub fn forget_one(conn: &Connection, r: RecordRef, reason: Option<&str>, now: i64) -> Result<bool, StoreError> {
    if r.kind == RecordKind::Observation {
        let key: Option<(String, String)> = conn
            .query_row(
                "SELECT memory_session_id, content_hash FROM observations WHERE id = ?1",
                [r.id],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()?;
        let Some((msid, hash)) = key else { return Ok(false) };
        super::raw_index::unindex_sources_of(conn, r.id)?;
        // That it was shown, and used, goes with it (issue 53).
        conn.execute("DELETE FROM injections WHERE observation_id = ?1", [r.id])?;
        conn.execute("DELETE FROM record_use WHERE observation_id = ?1", [r.id])?;
        conn.execute(
            "INSERT OR REPLACE INTO tombstones(memory_session_id, content_hash, observation_id, reason, deleted_at_epoch)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![msid, hash, r.id, reason, now],
        )?;
    }
    let sql = format!("DELETE FROM {} WHERE id = ?1", r.kind.table());
    Ok(conn.execute(&sql, [r.id])? > 0)
}

/// Ids of every record the selector matches, per kind.
fn select(conn: &Connection, sel: &ForgetSelector) -> Result<Vec<RecordRef>, StoreError> {
    let mut out = Vec::new();
    let mut collect = |kind: RecordKind, sql: &str, p: &[&dyn rusqlite::ToSql]| -> Result<(), StoreError> {
        let mut stmt = conn.prepare(sql)?;
        let ids = stmt.query_map(p, |r| r.get::<_, i64>(0))?;
        for id in ids {
            out.push(RecordRef { kind, id: id? });
        }
        Ok(())
    };
    match sel {
        ForgetSelector::Session {
            content_session_id,
            platform,
        } => {
            let sessions =
                "SELECT memory_session_id FROM sdk_sessions WHERE content_session_id = ?1 AND (?2 IS NULL OR platform_source = ?2)";
            let p: [&dyn rusqlite::ToSql; 2] = [content_session_id, platform];
            collect(
                RecordKind::Observation,
                &format!("SELECT id FROM observations WHERE memory_session_id IN ({sessions}) ORDER BY id"),
                &p,
            )?;
            collect(
                RecordKind::Summary,
                &format!("SELECT id FROM session_summaries WHERE memory_session_id IN ({sessions}) ORDER BY id"),
                &p,
            )?;
            collect(
                RecordKind::Prompt,
                "SELECT id FROM user_prompts WHERE content_session_id = ?1 AND (?2 IS NULL OR platform_source = ?2) ORDER BY id",
                &p,
            )?;
        }
        ForgetSelector::Project {
            project,
            before,
            provenance,
        } => {
            let before = before.unwrap_or(i64::MAX);
            let wanted = provenance.map(|p| p.as_str());
            let p: [&dyn rusqlite::ToSql; 3] = [project, &before, &wanted];
            let scoped =
                "(project = ?1 OR merged_into_project = ?1) AND created_at_epoch < ?2 AND (?3 IS NULL OR provenance = ?3) ORDER BY id";
            collect(RecordKind::Observation, &format!("SELECT id FROM observations WHERE {scoped}"), &p)?;
            collect(RecordKind::Summary, &format!("SELECT id FROM session_summaries WHERE {scoped}"), &p)?;
            collect(
                RecordKind::Prompt,
                "SELECT id FROM user_prompts WHERE project = ?1 AND created_at_epoch < ?2 AND (?3 IS NULL OR ?3 = 'user') ORDER BY id",
                &p,
            )?;
        }
        ForgetSelector::Ids(refs) => {
            for r in refs {
                let sql = format!("SELECT id FROM {} WHERE id = ?1", r.kind.table());
                collect(r.kind, &sql, &[&r.id])?;
            }
        }
    }
    Ok(out)
}

fn count(refs: &[RecordRef]) -> ForgetCounts {
    let mut c = ForgetCounts::default();
    for r in refs {
        match r.kind {
            RecordKind::Observation => c.observations += 1,
            RecordKind::Summary => c.summaries += 1,
            RecordKind::Prompt => c.prompts += 1,
        }
    }
    c
}

/// Bulk forget; with `dry_run` only counts.
pub fn forget_bulk(
    conn: &Connection,
    sel: &ForgetSelector,
    dry_run: bool,
    reason: Option<&str>,
    now: i64,
) -> Result<ForgetCounts, StoreError> {
    let mut refs = select(conn, sel)?;
    refs.dedup();
    if dry_run {
        return Ok(count(&refs));
    }
    let mut done = Vec::with_capacity(refs.len());
    for r in refs {
        if forget_one(conn, r, reason, now)? {
            done.push(r);
        }
    }
    // Forgetting a whole project forgets what it was working on (issue 39: the work state's tables
    // are the feature's, but forgetting is the store's promise, so it deletes their rows here) and its graph's names
    // (issue 41; relations of other forgets lose their evidence with the observations).
    if let ForgetSelector::Project {
        project,
        before: None,
        provenance: None,
    } = sel
    {
        conn.execute("DELETE FROM work_items WHERE project = ?1", [project])?;
        conn.execute("DELETE FROM work_state WHERE project = ?1", [project])?;
        super::graph::forget_project(conn, project)?;
        // The action index (issue 53) holds commands, failure lines and file names of the project.
        for table in ["action_failures", "action_edits", "action_file_notes", "injections", "memory_use"] {
            conn.execute(&format!("DELETE FROM {table} WHERE project = ?1"), [project])?;
        }
    }
    // Forgetting a session forgets what memd showed it and what its calls taught the action index.
    if let ForgetSelector::Session { content_session_id, .. } = sel {
        conn.execute("DELETE FROM injections WHERE content_session_id = ?1", [content_session_id])?;
        conn.execute("DELETE FROM action_failures WHERE failed_session = ?1", [content_session_id])?;
        conn.execute("DELETE FROM action_file_notes WHERE session = ?1", [content_session_id])?;
        conn.execute("DELETE FROM action_edits WHERE session = ?1", [content_session_id])?;
    }
    Ok(count(&done))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::memory::{ManualMemory, save_memory};

    fn save(conn: &Connection, text: &str, now: i64) -> i64 {
        save_memory(conn, &ManualMemory::by_user("shop", text, text), now).unwrap().id
    }

    #[test]
    fn parses_every_id_form() {
        let obs = |id| {
            Some(RecordRef {
                kind: RecordKind::Observation,
                id,
            })
        };
        assert_eq!(RecordRef::parse("12"), obs(12));
        assert_eq!(RecordRef::parse("#12"), obs(12));
        assert_eq!(RecordRef::parse("#S3").map(|r| (r.kind, r.id)), Some((RecordKind::Summary, 3)));
        assert_eq!(RecordRef::parse("p7").map(|r| (r.kind, r.id)), Some((RecordKind::Prompt, 7)));
        for bad in ["", "#", "S", "0", "-1", "+5", "12x", "X12"] {
            assert_eq!(RecordRef::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn forgetting_leaves_a_tombstone_and_no_fts_hit() {
        let conn = crate::store::test_conn();
        let id = save(&conn, "flaky upload retried", 1_000);
        assert!(
            forget_one(
                &conn,
                RecordRef {
                    kind: RecordKind::Observation,
                    id
                },
                Some("test"),
                2_000
            )
            .unwrap()
        );
        assert!(
            !forget_one(
                &conn,
                RecordRef {
                    kind: RecordKind::Observation,
                    id
                },
                None,
                2_000
            )
            .unwrap()
        );
        let hits: i64 = conn
            .query_row(
                "SELECT count(*) FROM observations_fts WHERE observations_fts MATCH 'flaky'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(hits, 0);
        let tomb: i64 = conn.query_row("SELECT count(*) FROM tombstones", [], |r| r.get(0)).unwrap();
        assert_eq!(tomb, 1);
        // Ids are never reused (AUTOINCREMENT).
        assert!(save(&conn, "another", 3_000) > id);
    }

    #[test]
    fn bulk_by_project_before_and_dry_run() {
        let conn = crate::store::test_conn();
        save(&conn, "old", 1_000);
        save(&conn, "new", 5_000);
        let sel = ForgetSelector::Project {
            provenance: None,
            project: "shop".into(),
            before: Some(2_000),
        };
        let dry = forget_bulk(&conn, &sel, true, None, 9_000).unwrap();
        assert_eq!(dry.observations, 1);
        assert_eq!(forget_bulk(&conn, &sel, false, None, 9_000).unwrap(), dry);
        let left: i64 = conn.query_row("SELECT count(*) FROM observations", [], |r| r.get(0)).unwrap();
        assert_eq!(left, 1);
        let by_session = ForgetSelector::Session {
            content_session_id: "manual-content-shop".into(),
            platform: None,
        };
        assert_eq!(forget_bulk(&conn, &by_session, false, None, 9_000).unwrap().observations, 1);
    }

    fn action_rows(conn: &Connection, session: &str, project: &str) {
        conn.execute(
            "INSERT INTO action_failures(project, command_key, command, failed_session, failed_at_epoch, open)
             VALUES (?1, 'cargo test ' || ?2, 'cargo test', ?2, 1, 1)",
            [project, session],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO action_file_notes(project, file, kind, session, at_epoch) VALUES (?1, 'src/' || ?2, 'edit_failed', ?2, 1)",
            [project, session],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO action_edits(project, session, file, tool_use_row_id, at_epoch) VALUES (?1, ?2, 'src/a.rs', 1, 1)",
            [project, session],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO injections(content_session_id, project, source, item, at_epoch) VALUES (?2, ?1, 'action', 'command:x', 1)",
            [project, session],
        )
        .unwrap();
    }

    fn rows_of(conn: &Connection, project: &str) -> i64 {
        ["action_failures", "action_file_notes", "action_edits", "injections"]
            .iter()
            .map(|t| {
                conn.query_row(&format!("SELECT count(*) FROM {t} WHERE project = ?1"), [project], |r| {
                    r.get::<_, i64>(0)
                })
                .unwrap()
            })
            .sum()
    }

    #[test]
    fn forgetting_a_project_or_session_forgets_its_action_memory() {
        let conn = crate::store::test_conn();
        let id = save(&conn, "shown", 1_000);
        action_rows(&conn, "s1", "shop");
        action_rows(&conn, "s2", "shop");
        action_rows(&conn, "s3", "other");
        conn.execute(
            "INSERT INTO injections(content_session_id, project, source, observation_id, item, at_epoch) VALUES ('s9', 'other', 'index', ?1, ?1, 1)",
            [id],
        )
        .unwrap();
        let one = RecordRef {
            kind: RecordKind::Observation,
            id,
        };
        assert!(forget_one(&conn, one, None, 2_000).unwrap());
        assert_eq!(rows_of(&conn, "other"), 4, "the injection of the forgotten record went with it");
        let by_session = ForgetSelector::Session {
            content_session_id: "s1".into(),
            platform: None,
        };
        forget_bulk(&conn, &by_session, false, None, 9_000).unwrap();
        assert_eq!(rows_of(&conn, "shop"), 4, "s2's rows stay");
        let whole = ForgetSelector::Project {
            project: "shop".into(),
            before: None,
            provenance: None,
        };
        forget_bulk(&conn, &whole, false, None, 9_000).unwrap();
        assert_eq!(rows_of(&conn, "shop"), 0);
        assert_eq!(rows_of(&conn, "other"), 4);
    }
}
