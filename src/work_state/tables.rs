//! Work state (issue 39; table `work_state` and `work_items`, schema v8): the task an agent is on,
//! its items and its notes, one state per project and git branch. Writes merge: a field left out
//! keeps its value, an empty string clears it, and an item written under a key replaces the item
//! of that key ("latest key wins"). Text arrives already cleaned by the privacy rules.

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use crate::store::StoreError;
use crate::store::record::record;

/// The statuses an item may have, in the order the section lists them.
pub const STATUSES: [&str; 4] = ["doing", "blocked", "todo", "done"];

/// Items one state keeps at most: beyond it, the oldest done items go first.
pub const ITEMS_KEPT: usize = 200;

/// One item as the agent writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkItemIn {
    pub key: String,
    pub text: String,
    pub status: String,
}

/// One write: None keeps a field, `Some("")` clears it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkWrite {
    pub project: String,
    pub branch: String,
    pub task: Option<String>,
    pub notes: Option<String>,
    pub items: Vec<WorkItemIn>,
    /// Keys of items to remove.
    pub remove: Vec<String>,
}

record! {
    /// One item of a work state (a row of `work_items`).
    #[derive(Eq)]
    pub struct WorkItem, ITEM_COLS = "i" {
        key: String = "key",
        text: String = "text",
        status: String = "status",
        #[serde(rename = "createdAt")]
        created_at_epoch: i64 = "created_at_epoch",
        #[serde(rename = "updatedAt")]
        updated_at_epoch: i64 = "updated_at_epoch",
    }
}

record! {
    /// A row of `work_state`: what one project and branch is about, without its items.
    #[derive(Eq)]
    pub struct WorkHead, HEAD_COLS = "w" {
        project: String = "project",
        branch: String = "branch",
        task: Option<String> = "task",
        notes: Option<String> = "notes",
        updated_at_epoch: i64 = "updated_at_epoch",
    }
}

/// The state of one project and branch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WorkState {
    pub project: String,
    pub branch: String,
    pub task: Option<String>,
    pub notes: Option<String>,
    #[serde(rename = "updatedAt")]
    pub updated_at_epoch: i64,
    pub items: Vec<WorkItem>,
}

impl WorkState {
    /// Items not done.
    pub fn open_items(&self) -> impl Iterator<Item = &WorkItem> {
        self.items.iter().filter(|i| i.status != "done")
    }
}

fn blank_to_none(v: &str) -> Option<&str> {
    Some(v.trim()).filter(|v| !v.is_empty())
}

/// Applies one write and answers the state after it (the writer runs it as one job: all or
/// nothing).
pub fn write(tx: &Connection, w: &WorkWrite, now: i64) -> Result<WorkState, StoreError> {
    tx.execute(
        "INSERT INTO work_state (project, branch, updated_at_epoch) VALUES (?1, ?2, ?3)
         ON CONFLICT (project, branch) DO UPDATE SET updated_at_epoch = excluded.updated_at_epoch",
        params![w.project, w.branch, now],
    )?;
    if let Some(task) = &w.task {
        tx.execute(
            "UPDATE work_state SET task = ?3 WHERE project = ?1 AND branch = ?2",
            params![w.project, w.branch, blank_to_none(task)],
        )?;
    }
    if let Some(notes) = &w.notes {
        tx.execute(
            "UPDATE work_state SET notes = ?3 WHERE project = ?1 AND branch = ?2",
            params![w.project, w.branch, blank_to_none(notes)],
        )?;
    }
    for key in &w.remove {
        tx.execute(
            "DELETE FROM work_items WHERE project = ?1 AND branch = ?2 AND key = ?3",
            params![w.project, w.branch, key],
        )?;
    }
    for item in &w.items {
        tx.execute(
            "INSERT INTO work_items (project, branch, key, text, status, created_at_epoch, updated_at_epoch)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)
             ON CONFLICT (project, branch, key) DO UPDATE SET text = excluded.text, status = excluded.status,
                 updated_at_epoch = excluded.updated_at_epoch",
            params![w.project, w.branch, item.key, item.text, item.status, now],
        )?;
    }
    tx.execute(
        &format!(
            "DELETE FROM work_items WHERE project = ?1 AND branch = ?2 AND status = 'done' AND key IN (
                SELECT key FROM work_items WHERE project = ?1 AND branch = ?2 AND status = 'done'
                ORDER BY updated_at_epoch ASC, key ASC
                LIMIT max(0, (SELECT count(*) FROM work_items WHERE project = ?1 AND branch = ?2) - {ITEMS_KEPT}))"
        ),
        params![w.project, w.branch],
    )?;
    read(tx, &w.project, &w.branch)?.ok_or_else(|| StoreError::Internal("work state vanished after its write".into()))
}

/// The state of `project` on `branch`, None when nothing was ever written.
pub fn read(conn: &Connection, project: &str, branch: &str) -> Result<Option<WorkState>, rusqlite::Error> {
    let head = conn
        .query_row(
            &format!("SELECT {HEAD_COLS} FROM work_state w WHERE w.project = ?1 AND w.branch = ?2"),
            params![project, branch],
            WorkHead::from_row,
        )
        .optional()?;
    let Some(head) = head else {
        return Ok(None);
    };
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {ITEM_COLS} FROM work_items i
         WHERE i.project = ?1 AND i.branch = ?2 ORDER BY i.updated_at_epoch DESC, i.key ASC"
    ))?;
    let items = stmt
        .query_map(params![project, branch], WorkItem::from_row)?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some(WorkState {
        project: head.project,
        branch: head.branch,
        task: head.task,
        notes: head.notes,
        updated_at_epoch: head.updated_at_epoch,
        items,
    }))
}

/// Every state, newest first (the viewer's list), at most `limit`.
pub fn list(conn: &Connection, project: Option<&str>, limit: usize) -> Result<Vec<WorkState>, rusqlite::Error> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {HEAD_COLS} FROM work_state w WHERE ?1 IS NULL OR w.project = ?1 ORDER BY w.updated_at_epoch DESC LIMIT ?2"
    ))?;
    let heads = stmt
        .query_map(params![project, limit as i64], WorkHead::from_row)?
        .collect::<Result<Vec<_>, _>>()?;
    let mut out = Vec::with_capacity(heads.len());
    for h in heads {
        out.extend(read(conn, &h.project, &h.branch)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db() -> Connection {
        let mut c = Connection::open_in_memory().unwrap();
        crate::store::migrations::migrate(&mut c, 0).unwrap();
        c
    }

    fn item(key: &str, text: &str, status: &str) -> WorkItemIn {
        WorkItemIn {
            key: key.into(),
            text: text.into(),
            status: status.into(),
        }
    }

    fn w(items: Vec<WorkItemIn>) -> WorkWrite {
        WorkWrite {
            project: "shop".into(),
            branch: "main".into(),
            items,
            ..Default::default()
        }
    }

    #[test]
    fn the_latest_write_of_a_key_wins_and_left_out_fields_keep_their_value() {
        let c = db();
        let mut first = w(vec![item("a", "write the parser", "todo"), item("b", "tests", "todo")]);
        first.task = Some("ship the export".into());
        first.notes = Some("front matter is YAML".into());
        write(&c, &first, 1_000).unwrap();
        let s = write(&c, &w(vec![item("a", "write the parser (half done)", "doing")]), 2_000).unwrap();
        assert_eq!(s.task.as_deref(), Some("ship the export"), "a field left out keeps its value");
        assert_eq!(s.notes.as_deref(), Some("front matter is YAML"));
        assert_eq!(s.items.len(), 2);
        let a = s.items.iter().find(|i| i.key == "a").unwrap();
        assert_eq!(
            (a.text.as_str(), a.status.as_str(), a.created_at_epoch, a.updated_at_epoch),
            ("write the parser (half done)", "doing", 1_000, 2_000)
        );
        let mut clear = w(vec![]);
        clear.task = Some(" ".into());
        clear.remove = vec!["b".into()];
        let s = write(&c, &clear, 3_000).unwrap();
        assert_eq!((s.task, s.items.len(), s.updated_at_epoch), (None, 1, 3_000));
    }

    #[test]
    fn projects_and_branches_are_apart_and_forgetting_a_project_removes_its_state() {
        let c = db();
        write(&c, &w(vec![item("a", "on main", "todo")]), 1).unwrap();
        let mut other = w(vec![item("a", "on a feature branch", "todo")]);
        other.branch = "feature".into();
        write(&c, &other, 2).unwrap();
        assert_eq!(read(&c, "shop", "main").unwrap().unwrap().items[0].text, "on main");
        assert_eq!(read(&c, "shop", "feature").unwrap().unwrap().items[0].text, "on a feature branch");
        assert!(read(&c, "shop", "").unwrap().is_none());
        assert_eq!(list(&c, None, 10).unwrap()[0].branch, "feature", "newest first");
        assert_eq!(list(&c, Some("other"), 10).unwrap().len(), 0);
    }

    #[test]
    fn beyond_the_cap_the_oldest_done_items_go_first() {
        let c = db();
        for n in 0..ITEMS_KEPT {
            write(&c, &w(vec![item(&format!("d{n}"), "finished", "done")]), n as i64).unwrap();
        }
        let s = write(
            &c,
            &w(vec![item("open", "still to do", "todo"), item("open2", "also", "todo")]),
            10_000,
        )
        .unwrap();
        assert_eq!(s.items.len(), ITEMS_KEPT);
        assert!(s.items.iter().any(|i| i.key == "open") && s.items.iter().any(|i| i.key == "open2"));
        assert!(
            !s.items.iter().any(|i| i.key == "d0" || i.key == "d1"),
            "the two oldest done items went"
        );
    }
}
