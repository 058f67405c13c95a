//! The evidence memd's note on a Claude Code memory file is made from (issue 39): memories in
//! scope superseded by one written after `since`, and observations after `since` that changed
//! files.

use rusqlite::{Connection, params_from_iter};

use super::note::{Changed, Evidence, Superseded};
use crate::retrieval::RetrievalError;
use crate::retrieval::records::json_list;
use crate::retrieval::scope::{Conditions, Scope};

const ROWS_MAX: usize = 200;

pub fn memory_evidence(conn: &Connection, scope: &Scope, since: i64) -> Result<Evidence, RetrievalError> {
    let mut c = Conditions::default();
    scope.conditions("o", true, &mut c);
    c.push("o.quarantined = 0", []);
    let sql = format!(
        "SELECT coalesce(o.title, '') || ' ' || coalesce(o.narrative, '') AS old_text, n.id, coalesce(n.title, '') AS new_title,
                n.created_at
         FROM observations o JOIN observations n ON n.id = o.superseded_by
         WHERE n.created_at_epoch > {since} AND n.quarantined = 0{} ORDER BY n.created_at_epoch DESC LIMIT {ROWS_MAX}",
        c.sql
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let superseded = stmt
        .query_map(params_from_iter(c.params.iter()), |r| {
            Ok(Superseded {
                old_text: r.get("old_text")?,
                new_id: r.get("id")?,
                new_title: r.get("new_title")?,
                new_date: r.get("created_at")?,
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    let sql = format!(
        "SELECT o.id, coalesce(o.title, '') AS title, o.created_at, o.files_modified FROM observations o
         WHERE o.created_at_epoch > {since} AND o.files_modified <> '[]'{} ORDER BY o.created_at_epoch DESC LIMIT {ROWS_MAX}",
        c.sql
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let changed = stmt
        .query_map(params_from_iter(c.params.iter()), |r| {
            Ok(Changed {
                id: r.get("id")?,
                title: r.get("title")?,
                date: r.get("created_at")?,
                files: json_list(&r.get::<_, String>("files_modified")?),
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Evidence { superseded, changed })
}
