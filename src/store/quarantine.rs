//! Provenance and quarantine (issue 36): where a record's content came from, and the write-time
//! screen that quarantines instruction-shaped content from anyone but the user
//! ([`crate::pipeline::instruction`]). A quarantined record is kept and searchable, never
//! injected on its own; a person releases or forgets it (`memd doctor` lists them, the viewer
//! and `POST /api/observations/:id/release` release one).

use rusqlite::{Connection, OptionalExtension, params};

use super::StoreError;
use super::observation_record::ObservationRecord;
use crate::pipeline::instruction::screen;

/// Where a record's content came from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Provenance {
    /// The user's own words: a prompt, `memd remember`, the viewer.
    User,
    /// An agent's own note (`save_memory` over MCP, an API caller that does not say).
    #[default]
    Agent,
    /// An LLM observer's summary of tool calls.
    Observer,
    /// Extracted from tool output by the deterministic observer.
    ToolOutput,
    /// Imported (claude-mem, another host, a team member), with its source.
    Import,
}

impl Provenance {
    pub const ALL: [Provenance; 5] = [Self::User, Self::Agent, Self::Observer, Self::ToolOutput, Self::Import];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Agent => "agent",
            Self::Observer => "observer",
            Self::ToolOutput => "tool_output",
            Self::Import => "import",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.as_str() == s.trim())
    }

    /// The provenance a row's `origin` implies.
    pub fn of_origin(origin: &str) -> Self {
        match origin {
            "extractive" => Self::ToolOutput,
            "import" => Self::Import,
            "manual" => Self::User,
            _ => Self::Observer,
        }
    }

    /// How far content of this source is trusted: the user most, then the agent, an LLM's summary,
    /// an import, and text captured from a tool's output least.
    pub fn trust(self) -> u8 {
        match self {
            Self::User => 4,
            Self::Agent => 3,
            Self::Observer => 2,
            Self::Import => 1,
            Self::ToolOutput => 0,
        }
    }

    /// The less trusted of two sources (a record is as trusted as its least trusted source).
    pub fn min(self, other: Self) -> Self {
        if other.trust() < self.trust() { other } else { self }
    }

    /// The compact label injected beside an item.
    pub fn label(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Agent => "agent",
            Self::Observer => "llm",
            Self::ToolOutput => "tool",
            Self::Import => "import",
        }
    }
}

/// The text a screen reads of an observation: every field a person or agent is shown.
fn record_text(r: &ObservationRecord) -> String {
    [
        r.title.as_deref().unwrap_or(""),
        r.subtitle.as_deref().unwrap_or(""),
        r.narrative.as_deref().unwrap_or(""),
        &list_text(&r.facts),
        &list_text(&r.concepts),
    ]
    .join("\n")
}

/// A JSON array column's items, one per line (a plain string when it is not an array).
fn list_text(json: &str) -> String {
    match serde_json::from_str::<Vec<String>>(json) {
        Ok(items) => items.join("\n"),
        Err(_) => json.to_owned(),
    }
}

/// (quarantined, reason) of a record: user content is never quarantined.
pub fn screen_record(r: &ObservationRecord) -> (bool, Option<String>) {
    if Provenance::parse(&r.provenance) == Some(Provenance::User) {
        return (false, None);
    }
    match screen(&record_text(r)) {
        Some(reason) => (true, Some(reason.to_owned())),
        None => (false, None),
    }
}

/// How far apart two records of one session may be written and still be screened as one text.
pub const SPLIT_WINDOW_MS: i64 = 10 * 60_000;
/// Records of the session looked at with a new one.
const SPLIT_NEIGHBOURS: i64 = 4;

/// Screens stored record `id` together with each record of its session written within
/// [`SPLIT_WINDOW_MS`] before or after it (issue 51: an instruction split between two memories,
/// or a title and the next record's narrative, reads as one to a model that sees them side by
/// side). When a rule's match runs across the two, both are quarantined, each naming the other
/// (a record quarantined on its own keeps its own reason).
pub fn screen_with_neighbours(conn: &Connection, id: i64, rec: &ObservationRecord) -> rusqlite::Result<bool> {
    if Provenance::parse(&rec.provenance) == Some(Provenance::User) {
        return Ok(false);
    }
    let sql = format!(
        "SELECT {} FROM observations o WHERE o.memory_session_id = ?1 AND o.id <> ?2
           AND o.created_at_epoch BETWEEN ?3 AND ?4 AND o.provenance <> 'user' ORDER BY o.id DESC LIMIT ?5",
        super::observation_record::OBS_COLS
    );
    let mut st = conn.prepare_cached(&sql)?;
    let near: Vec<(i64, ObservationRecord)> = st
        .query_map(
            params![
                rec.memory_session_id,
                id,
                rec.created_at_epoch - SPLIT_WINDOW_MS,
                rec.created_at_epoch + SPLIT_WINDOW_MS,
                SPLIT_NEIGHBOURS
            ],
            |r| Ok((r.get("id")?, ObservationRecord::from_row(r)?)),
        )?
        .collect::<Result<_, _>>()?;
    let mine = record_text(rec);
    let mut found = false;
    for (other, o) in near {
        let (first, second) = if other < id {
            (record_text(&o), mine.clone())
        } else {
            (mine.clone(), record_text(&o))
        };
        if let Some(reason) = crate::pipeline::instruction::spans_boundary(&first, &second) {
            for (a, b) in [(id, other), (other, id)] {
                conn.execute(
                    "UPDATE observations SET quarantined = 1, quarantine_reason = coalesce(CASE WHEN quarantined = 1 THEN quarantine_reason END, ?2) WHERE id = ?1",
                    params![a, format!("{reason} (split with #{b})")],
                )?;
            }
            found = true;
        }
    }
    Ok(found)
}

/// Screens observation `id` (its fields as stored, e.g. after an edit) and records the outcome.
pub fn screen_observation(conn: &Connection, id: i64) -> rusqlite::Result<bool> {
    let sql = format!("SELECT {} FROM observations o WHERE o.id = ?1", super::observation_record::OBS_COLS);
    let Some(rec) = conn.query_row(&sql, [id], ObservationRecord::from_row).optional()? else {
        return Ok(false);
    };
    let (q, reason) = screen_record(&rec);
    conn.execute(
        "UPDATE observations SET quarantined = ?2, quarantine_reason = ?3 WHERE id = ?1",
        params![id, q, reason],
    )?;
    Ok(q)
}

/// Screens summary `id` (its fields as stored) and records the outcome.
pub fn screen_summary(conn: &Connection, id: i64) -> rusqlite::Result<bool> {
    let text: Option<String> = conn
        .query_row(
            "SELECT concat_ws(char(10), request, investigated, learned, completed, next_steps, notes) FROM session_summaries WHERE id = ?1",
            [id],
            |r| r.get(0),
        )
        .optional()?;
    let reason = text.as_deref().and_then(screen);
    conn.execute(
        "UPDATE session_summaries SET quarantined = ?2, quarantine_reason = ?3 WHERE id = ?1",
        params![id, reason.is_some(), reason],
    )?;
    Ok(reason.is_some())
}

/// Releases a quarantined observation (a person read it and trusts it); false when there is none.
pub fn release(conn: &Connection, observation_id: i64) -> rusqlite::Result<bool> {
    Ok(conn.execute(
        "UPDATE observations SET quarantined = 0, quarantine_reason = NULL WHERE id = ?1 AND quarantined = 1",
        [observation_id],
    )? > 0)
}

/// A quarantined record as `memd doctor` and the viewer list it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Quarantined {
    pub kind: &'static str,
    pub id: i64,
    pub project: String,
    pub provenance: String,
    pub reason: String,
    pub title: String,
}

/// The newest `limit` quarantined observations and summaries, and how many there are in all.
pub fn list(conn: &Connection, limit: usize) -> rusqlite::Result<(Vec<Quarantined>, i64)> {
    let total: i64 = conn.query_row(
        "SELECT (SELECT count(*) FROM observations WHERE quarantined = 1) + (SELECT count(*) FROM session_summaries WHERE quarantined = 1)",
        [],
        |r| r.get(0),
    )?;
    let mut st = conn.prepare(
        "SELECT 'observation', id, project, provenance, coalesce(quarantine_reason, '') AS reason,
                coalesce(title, '') AS title FROM observations WHERE quarantined = 1
         UNION ALL
         SELECT 'summary', id, project, provenance, coalesce(quarantine_reason, ''), coalesce(request, '') FROM session_summaries WHERE quarantined = 1
         ORDER BY 2 DESC LIMIT ?1",
    )?;
    let rows = st.query_map([limit as i64], |r| {
        let kind: String = r.get(0)?;
        Ok(Quarantined {
            kind: if kind == "summary" { "summary" } else { "observation" },
            id: r.get(1)?,
            project: r.get(2)?,
            provenance: r.get("provenance")?,
            reason: r.get("reason")?,
            title: r.get("title")?,
        })
    })?;
    Ok((rows.collect::<Result<_, _>>()?, total))
}

const MARKER: &str = "quarantine_screen_after";
const CHUNK: i64 = 500;

/// Screens the rows stored before v6, resumably (the marker in `meta` moves with each chunk and is
/// removed at the end); nothing to do once it is gone. Returns how many were quarantined.
pub fn finish_screen(conn: &mut Connection) -> Result<usize, StoreError> {
    let mut flagged = 0;
    loop {
        let tx = conn.transaction()?;
        let after: Option<String> = tx
            .query_row("SELECT value FROM meta WHERE key = ?1", [MARKER], |r| r.get(0))
            .optional()?;
        let Some(after) = after.map(|a| a.parse::<i64>().unwrap_or(0)) else {
            return Ok(flagged);
        };
        let sql = format!(
            "SELECT {} FROM observations o WHERE o.id > ?1 ORDER BY o.id LIMIT ?2",
            super::observation_record::OBS_COLS
        );
        let rows: Vec<(i64, ObservationRecord)> = {
            let mut st = tx.prepare(&sql)?;
            st.query_map(params![after, CHUNK], |r| Ok((r.get("id")?, ObservationRecord::from_row(r)?)))?
                .collect::<Result<_, _>>()?
        };
        for (id, rec) in &rows {
            let (q, reason) = screen_record(rec);
            if q {
                flagged += 1;
                tx.execute(
                    "UPDATE observations SET quarantined = 1, quarantine_reason = ?2 WHERE id = ?1",
                    params![id, reason],
                )?;
            }
        }
        match rows.last() {
            Some((last, _)) => tx.execute("UPDATE meta SET value = ?2 WHERE key = ?1", params![MARKER, last.to_string()])?,
            None => {
                let ids: Vec<i64> = {
                    let mut st = tx.prepare("SELECT id FROM session_summaries")?;
                    st.query_map([], |r| r.get(0))?.collect::<Result<_, _>>()?
                };
                for id in ids {
                    flagged += usize::from(screen_summary(&tx, id)?);
                }
                tx.execute("DELETE FROM meta WHERE key = ?1", [MARKER])?
            }
        };
        let done = rows.is_empty();
        tx.commit()?;
        if done {
            if flagged > 0 {
                tracing::warn!(
                    flagged,
                    "stored records read as instructions to an agent: quarantined (see `memd doctor`)"
                );
            }
            return Ok(flagged);
        }
    }
}

#[cfg(test)]
mod tests;
