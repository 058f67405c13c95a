//! The rows folder context files are made from (issue 39): injectable observations since a time
//! with the files they are about and their session's project root, newest first.

use rusqlite::{Connection, params};

use super::plan::FolderRow;
use crate::retrieval::RetrievalError;
use crate::retrieval::context::INJECTABLE;
use crate::retrieval::records::json_list;

pub fn folder_rows(conn: &Connection, since: i64, limit: usize) -> Result<Vec<FolderRow>, RetrievalError> {
    let sql = format!(
        "SELECT o.id, o.created_at_epoch, o.type, coalesce(o.title, '') AS title, o.files_read, o.files_modified, s.project_root
         FROM observations o JOIN sdk_sessions s ON s.memory_session_id = o.memory_session_id
         WHERE o.created_at_epoch >= ?1 AND o.quarantined = 0 AND s.project_root IS NOT NULL
           AND (o.files_read <> '[]' OR o.files_modified <> '[]') AND {INJECTABLE}
         ORDER BY o.created_at_epoch DESC, o.id DESC LIMIT ?2"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params![since, limit as i64], |r| {
        let (read, modified): (String, String) = (r.get("files_read")?, r.get("files_modified")?);
        let mut files = json_list(&modified);
        for f in json_list(&read) {
            if !files.contains(&f) {
                files.push(f);
            }
        }
        Ok(FolderRow {
            id: r.get("id")?,
            created_at_epoch: r.get("created_at_epoch")?,
            obs_type: r.get("type")?,
            title: r.get("title")?,
            project_root: r.get("project_root")?,
            files,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}
