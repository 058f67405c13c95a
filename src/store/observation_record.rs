//! The one observation record: every column of `observations` but `id`, in one list. From it
//! come [`ObservationRecord`] (what the observer's batches, manual memories and imports write,
//! and what retrieval, the feed, vectors and the viewer read back through
//! `retrieval::records::Observation`), the `SELECT` column list [`OBS_COLS`], the row reader (by
//! column name) and the one `INSERT`. Adding a column: the migration, one line here, and whatever
//! shows it.

use rusqlite::{Connection, OptionalExtension, Row};

pub use super::quarantine::Provenance;

macro_rules! observation_record {
    ($first:ident: $first_ty:ty = $first_col:literal $(, $field:ident: $ty:ty = $col:literal)* $(,)?) => {
        /// An observation row without its id (docs/spec/storage.md, table `observations`); its
        /// serialized form (field names as here) is what `memd export` writes.
        #[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
        #[serde(default)]
        pub struct ObservationRecord {
            pub $first: $first_ty,
            $(pub $field: $ty,)*
        }

        /// `o.id` and every column of the record, for `SELECT … FROM observations o`.
        pub const OBS_COLS: &str = concat!("o.id, o.", $first_col $(, ", o.", $col)*);

        const INSERT: &str = concat!(
            "INSERT INTO observations(", $first_col $(, ", ", $col)*, ") VALUES (?" $(, observation_record!(@q $col))*,
            ") ON CONFLICT(memory_session_id, content_hash) DO NOTHING RETURNING id"
        );

        const INSERT_WITH_ID: &str = concat!(
            "INSERT INTO observations(id, ", $first_col $(, ", ", $col)*, ") VALUES (?, ?" $(, observation_record!(@q $col))*,
            ") ON CONFLICT DO NOTHING RETURNING id"
        );

        impl ObservationRecord {
            /// The record of a row selected with [`OBS_COLS`] (other columns may follow).
            pub fn from_row(r: &Row) -> rusqlite::Result<Self> {
                Ok(Self {
                    $first: r.get($first_col)?,
                    $($field: r.get($col)?,)*
                })
            }

            /// Inserts the row as it is; None when `(memory_session_id, content_hash)` is stored.
            fn insert_as_is(&self, conn: &Connection) -> rusqlite::Result<Option<i64>> {
                conn.prepare_cached(INSERT)?
                    .query_row(rusqlite::params![self.$first $(, self.$field)*], |r| r.get(0))
                    .optional()
            }

            /// [`Self::insert_as_is`] under the id `id` (None: that id or the content is stored).
            fn insert_as_is_with_id(&self, conn: &Connection, id: i64) -> rusqlite::Result<Option<i64>> {
                conn.prepare_cached(INSERT_WITH_ID)?
                    .query_row(rusqlite::params![id, self.$first $(, self.$field)*], |r| r.get(0))
                    .optional()
            }
        }
    };
    (@q $col:literal) => {
        ", ?"
    };
}

observation_record! {
    memory_session_id: String = "memory_session_id",
    project: String = "project",
    merged_into_project: Option<String> = "merged_into_project",
    platform_source: String = "platform_source",
    obs_type: String = "type",
    title: Option<String> = "title",
    subtitle: Option<String> = "subtitle",
    narrative: Option<String> = "narrative",
    facts: String = "facts",
    concepts: String = "concepts",
    files_read: String = "files_read",
    files_modified: String = "files_modified",
    prompt_number: Option<i64> = "prompt_number",
    discovery_tokens: i64 = "discovery_tokens",
    content_hash: String = "content_hash",
    origin: String = "origin",
    generated_by_model: Option<String> = "generated_by_model",
    agent_id: Option<String> = "agent_id",
    agent_type: Option<String> = "agent_type",
    metadata: Option<String> = "metadata",
    occurrence_count: i64 = "occurrence_count",
    reinforcement_dates: String = "reinforcement_dates",
    last_reinforced_epoch: Option<i64> = "last_reinforced_epoch",
    created_at: String = "created_at",
    created_at_epoch: i64 = "created_at_epoch",
    provenance: String = "provenance",
    imported_from: Option<String> = "imported_from",
    quarantined: bool = "quarantined",
    quarantine_reason: Option<String> = "quarantine_reason",
    stale_commit: Option<String> = "stale_commit",
    stale_file: Option<String> = "stale_file",
    stale_at_epoch: Option<i64> = "stale_at_epoch",
    superseded_by: Option<i64> = "superseded_by",
    supersede_reason: Option<String> = "supersede_reason",
}

impl ObservationRecord {
    /// A new row's defaults: empty JSON arrays, seen once, no reinforcement, the provenance its
    /// origin implies (a manual memory is the user's until said otherwise: [`Self::by`]).
    pub fn new(memory_session_id: &str, project: &str, platform_source: &str, obs_type: &str, origin: &str) -> Self {
        Self {
            memory_session_id: memory_session_id.to_string(),
            project: project.to_string(),
            platform_source: platform_source.to_string(),
            obs_type: obs_type.to_string(),
            origin: origin.to_string(),
            provenance: Provenance::of_origin(origin).as_str().to_string(),
            facts: "[]".into(),
            concepts: "[]".into(),
            files_read: "[]".into(),
            files_modified: "[]".into(),
            occurrence_count: 1,
            reinforcement_dates: "[]".into(),
            ..Default::default()
        }
    }

    /// Sets who the content came from.
    pub fn by(mut self, p: Provenance) -> Self {
        self.provenance = p.as_str().to_string();
        self
    }

    /// Inserts the row, its title one line and screened ([`Self::screened`]) — alone, then with
    /// the session's records written just before it (an instruction split over two records);
    /// None when `(memory_session_id, content_hash)` is already stored.
    pub fn insert(&self, conn: &Connection) -> rusqlite::Result<Option<i64>> {
        let rec = self.clone().tidied().screened();
        let id = rec.insert_as_is(conn)?;
        if let Some(id) = id {
            super::quarantine::screen_with_neighbours(conn, id, &rec)?;
        }
        Ok(id)
    }

    /// [`Self::insert`] under a given id (an import keeping its ids); None when that id or
    /// `(memory_session_id, content_hash)` is already stored.
    pub fn insert_with_id(&self, conn: &Connection, id: i64) -> rusqlite::Result<Option<i64>> {
        let rec = self.clone().tidied().screened();
        let stored = rec.insert_as_is_with_id(conn, id)?;
        if let Some(id) = stored {
            super::quarantine::screen_with_neighbours(conn, id, &rec)?;
        }
        Ok(stored)
    }

    /// The title as one line without hidden characters (issue 51): what every reader is shown.
    pub fn tidied(mut self) -> Self {
        if let Some(t) = self.title.as_deref() {
            self.title = Some(crate::text::one_line(t)).filter(|t| !t.is_empty());
        }
        self
    }

    /// Screens the content (issue 36): a record not from the user that reads as an instruction to
    /// an agent is quarantined, with the reason. [`Self::insert`] applies it.
    pub fn screened(mut self) -> Self {
        let (q, reason) = super::quarantine::screen_record(&self);
        self.quarantined = q;
        self.quarantine_reason = reason;
        self
    }

    /// Stamps the creation time (epoch ms and its ISO-8601 form).
    pub fn created(mut self, epoch_ms: i64) -> Self {
        self.created_at = crate::clock::iso(epoch_ms);
        self.created_at_epoch = epoch_ms;
        self
    }
}

/// A list as the JSON array column stores it.
pub fn json_array(v: &[String]) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "[]".into())
}

/// A JSON array column as strings (malformed → empty).
pub fn json_list(s: &str) -> Vec<String> {
    serde_json::from_str::<Vec<serde_json::Value>>(s)
        .map(|v| v.into_iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_written_reads_back_whole_by_column_name() {
        let conn = crate::store::test_conn();
        conn.execute(
            "INSERT INTO sdk_sessions (content_session_id, memory_session_id, platform_source, project, started_at, started_at_epoch, last_event_epoch)
             VALUES ('c', 'm', 'claude', 'p', 'x', 0, 0)",
            [],
        )
        .unwrap();
        let mut rec = ObservationRecord::new("m", "p", "claude", "discovery", "observer").created(1_000);
        rec.title = Some("t".into());
        rec.facts = json_array(&["a".into()]);
        rec.content_hash = "h".into();
        let id = rec.insert(&conn).unwrap().expect("inserted");
        assert_eq!(rec.insert(&conn).unwrap(), None, "the same hash is not stored twice");
        let sql = format!("SELECT {OBS_COLS} FROM observations o WHERE o.id = ?1");
        let back = conn.query_row(&sql, [id], ObservationRecord::from_row).unwrap();
        assert_eq!(back, rec);
        assert!(OBS_COLS.starts_with("o.id, o.memory_session_id, ") && OBS_COLS.ends_with("o.supersede_reason"));
    }
}
