//! What memd put into a session's context (issue 53; the `injections`, `memory_use` and
//! `record_use` tables of `store/schema_v13_action.sql`), written by the routes that inject, and
//! the running totals status reads without counting rows.

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};

/// Where an injected item came from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// A row of SessionStart's index.
    #[default]
    Index,
    /// Per-prompt context (UserPromptSubmit).
    Prompt,
    /// File context (PreToolUse Read).
    File,
    /// A warning before a command or edit (PreToolUse Bash/Edit/Write/MultiEdit).
    Action,
}

impl Source {
    pub const ALL: [Source; 4] = [Source::Index, Source::Prompt, Source::File, Source::Action];

    pub fn as_str(self) -> &'static str {
        match self {
            Source::Index => "index",
            Source::Prompt => "prompt",
            Source::File => "file",
            Source::Action => "action",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|x| x.as_str() == s)
    }
}

fn bump_injected(c: &Connection, project: &str, source: Source, n: usize) -> rusqlite::Result<()> {
    c.execute(
        "INSERT INTO memory_use(project, source, injected) VALUES (?1, ?2, ?3)
         ON CONFLICT(project, source) DO UPDATE SET injected = injected + excluded.injected",
        params![project, source.as_str(), n as i64],
    )?;
    Ok(())
}

/// One row of `injections` about to be written.
struct Injection<'a> {
    session: &'a str,
    project: &'a str,
    source: Source,
    item: &'a str,
    observation_id: Option<i64>,
    files: Option<&'a str>,
}

/// Inserts one injection unless the session already has it from this source.
fn insert_once(c: &Connection, row: Injection<'_>, now: i64) -> rusqlite::Result<bool> {
    let Injection {
        session,
        project,
        source,
        item,
        observation_id,
        files,
    } = row;
    Ok(c.execute(
        "INSERT INTO injections(content_session_id, project, source, observation_id, item, files, at_epoch)
         SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7
         WHERE NOT EXISTS (SELECT 1 FROM injections WHERE content_session_id = ?1 AND source = ?3 AND item = ?5)",
        params![session, project, source.as_str(), observation_id, item, files, now],
    )? > 0)
}

/// Whether `session` has `item` from `source` already.
pub fn claimed(c: &Connection, session: &str, source: Source, item: &str) -> rusqlite::Result<bool> {
    c.query_row(
        "SELECT EXISTS (SELECT 1 FROM injections WHERE content_session_id = ?1 AND source = ?2 AND item = ?3)",
        params![session, source.as_str(), item],
        |r| r.get(0),
    )
}

/// Records `item`, which names `files`, as injected into `session` unless it already was: true
/// when it is new (the once-per-session rule of the action warning).
pub fn claim(
    c: &Connection,
    session: &str,
    project: &str,
    source: Source,
    item: &str,
    files: &[String],
    now: i64,
) -> rusqlite::Result<bool> {
    let files = serde_json::Value::from(files.to_vec()).to_string();
    let row = Injection {
        session,
        project,
        source,
        item,
        observation_id: None,
        files: Some(&files),
    };
    let new = insert_once(c, row, now)?;
    if new {
        bump_injected(c, project, source, 1)?;
    }
    Ok(new)
}

/// Records the records `ids` as injected into `session` from `source` (a record already injected
/// into the session from the same source is not counted twice); the number newly recorded.
pub fn record(c: &Connection, session: &str, project: &str, source: Source, ids: &[i64], now: i64) -> rusqlite::Result<usize> {
    let mut new = 0;
    for id in ids {
        let item = id.to_string();
        let row = Injection {
            session,
            project,
            source,
            item: &item,
            observation_id: Some(*id),
            files: None,
        };
        if insert_once(c, row, now)? {
            c.execute(
                "INSERT INTO record_use(observation_id, injected) SELECT ?1, 1 WHERE EXISTS (SELECT 1 FROM observations WHERE id = ?1)
                 ON CONFLICT(observation_id) DO UPDATE SET injected = injected + 1",
                [id],
            )?;
            new += 1;
        }
    }
    if new > 0 {
        bump_injected(c, project, source, new)?;
    }
    Ok(new)
}

/// One injected item of a session, as the use check reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UseItem {
    pub injection_id: i64,
    pub source: Source,
    pub observation_id: Option<i64>,
    /// An action warning's key (`command:…` or `file:…`).
    pub item: Option<String>,
    pub delivered: Option<bool>,
    pub used: Option<bool>,
    /// The files the item names: a record's modified files; the files an action warning named
    /// (what fixed the failure, the warned file).
    pub files: Vec<String>,
}

/// What the use check decided for one item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UseMark {
    pub injection_id: i64,
    pub delivered: bool,
    pub used: bool,
}

fn json_strings(s: &str) -> Vec<String> {
    serde_json::from_str::<Vec<serde_json::Value>>(s)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|v| match v {
            serde_json::Value::String(s) => Some(s),
            serde_json::Value::Array(a) => a.first().and_then(|f| f.as_str()).map(str::to_string),
            _ => None,
        })
        .collect()
}

/// The transcript path a session reported and the items memd injected into it.
pub fn session_items(c: &Connection, session: &str) -> rusqlite::Result<(Option<String>, Vec<UseItem>)> {
    let path: Option<String> = c
        .query_row(
            "SELECT transcript_path FROM sdk_sessions WHERE content_session_id = ?1 AND transcript_path IS NOT NULL ORDER BY id DESC LIMIT 1",
            [session],
            |r| r.get(0),
        )
        .optional()?;
    let mut stmt = c.prepare_cached(
        "SELECT i.id, i.source, i.observation_id, i.item, i.delivered, i.used, i.files, o.files_modified
         FROM injections i LEFT JOIN observations o ON o.id = i.observation_id
         WHERE i.content_session_id = ?1 ORDER BY i.id",
    )?;
    let rows = stmt.query_map([session], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, Option<i64>>(2)?,
            r.get::<_, Option<String>>(3)?,
            r.get::<_, Option<bool>>(4)?,
            r.get::<_, Option<bool>>(5)?,
            r.get::<_, Option<String>>(6)?,
            r.get::<_, Option<String>>(7)?,
        ))
    })?;
    let mut items = Vec::new();
    for row in rows {
        let (injection_id, source, observation_id, item, delivered, used, named, modified) = row?;
        let Some(source) = Source::parse(&source) else { continue };
        let mut files = modified.as_deref().map(json_strings).unwrap_or_default();
        files.extend(named.as_deref().map(json_strings).unwrap_or_default());
        items.push(UseItem {
            injection_id,
            source,
            observation_id,
            item,
            delivered,
            used,
            files,
        });
    }
    Ok((path, items))
}

/// An injection before a mark: project, source, record, delivered, used.
type Before = (String, String, Option<i64>, Option<bool>, Option<bool>);

/// Records the use check's decisions: an item's `delivered` and `used` only move up (a later
/// check of the same session can find what an earlier one did not), and the totals move with them.
pub fn mark(c: &Connection, marks: &[UseMark], now: i64) -> rusqlite::Result<()> {
    for m in marks {
        let before: Option<Before> = c
            .query_row(
                "SELECT project, source, observation_id, delivered, used FROM injections WHERE id = ?1",
                [m.injection_id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
            )
            .optional()?;
        let Some((project, source, observation_id, delivered, used)) = before else {
            continue;
        };
        let newly_delivered = m.delivered && delivered != Some(true);
        let newly_used = m.used && used != Some(true);
        c.execute(
            "UPDATE injections SET delivered = max(coalesce(delivered, 0), ?2), used = max(coalesce(used, 0), ?3) WHERE id = ?1",
            params![m.injection_id, m.delivered, m.used],
        )?;
        if newly_delivered || newly_used {
            c.execute(
                "UPDATE memory_use SET delivered = delivered + ?3, used = used + ?4 WHERE project = ?1 AND source = ?2",
                params![project, source, newly_delivered as i64, newly_used as i64],
            )?;
        }
        if newly_delivered && let Some(id) = observation_id {
            c.execute("UPDATE record_use SET delivered = delivered + 1 WHERE observation_id = ?1", [id])?;
        }
        if newly_used && let Some(id) = observation_id {
            c.execute(
                "INSERT INTO record_use(observation_id, injected, used, last_used_epoch) SELECT ?1, 0, 1, ?2
                   WHERE EXISTS (SELECT 1 FROM observations WHERE id = ?1)
                 ON CONFLICT(observation_id) DO UPDATE SET used = used + 1, last_used_epoch = ?2",
                params![id, now],
            )?;
        }
    }
    Ok(())
}

/// The running totals per project and source.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UseTotals {
    pub project: String,
    pub source: Source,
    pub injected: i64,
    pub delivered: i64,
    pub used: i64,
}

/// Injected, delivered and used, for one source (or all).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UseCounts {
    pub injected: i64,
    pub delivered: i64,
    pub used: i64,
}

impl UseCounts {
    fn add(&mut self, t: &UseTotals) {
        self.injected += t.injected;
        self.delivered += t.delivered;
        self.used += t.used;
    }
}

/// "Injected N, used M" per source, in all and per project (`memd stats`, `memd status`, the
/// viewer).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryUse {
    pub sources: std::collections::BTreeMap<String, UseCounts>,
    pub projects: std::collections::BTreeMap<String, std::collections::BTreeMap<String, UseCounts>>,
}

impl MemoryUse {
    pub fn of(totals: &[UseTotals]) -> Self {
        let mut m = MemoryUse::default();
        for t in totals {
            m.sources.entry(t.source.as_str().to_string()).or_default().add(t);
            m.projects
                .entry(t.project.clone())
                .or_default()
                .entry(t.source.as_str().to_string())
                .or_default()
                .add(t);
        }
        m
    }

    /// One line: `index injected 12, used 3 · action injected 1, used 1` (empty: nothing yet).
    pub fn line(&self) -> String {
        self.sources
            .iter()
            .map(|(s, c)| format!("{s} injected {}, used {}", c.injected, c.used))
            .collect::<Vec<_>>()
            .join(" · ")
    }
}

/// Every project's and source's totals (a small table: one row per project and source).
pub fn totals(c: &Connection) -> rusqlite::Result<Vec<UseTotals>> {
    let mut stmt = c.prepare_cached("SELECT project, source, injected, delivered, used FROM memory_use ORDER BY project, source")?;
    let rows = stmt.query_map([], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (project, source, injected, delivered, used) = row?;
        if let Some(source) = Source::parse(&source) {
            out.push(UseTotals {
                project,
                source,
                injected,
                delivered,
                used,
            });
        }
    }
    Ok(out)
}
