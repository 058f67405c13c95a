//! The read tools when no worker answers and none can be started (`MEMD_AUTOSTART=false`, a worker
//! that fails to start): the same request parsing and rendering as `GET /api/search`,
//! `GET /api/timeline` and `POST /api/observations/batch`, run on a read-only connection to
//! `<data>/memd.db` (search keyword only); text answers end with a line saying so. Recall must not
//! depend on the worker being up.

use crate::data_dir::DataDir;
use crate::modes::Mode;
use crate::protocol::search::{SearchParams, TimelineParams};
use crate::retrieval::Zone;
use crate::retrieval::requests::{search_request, timeline_request, timeline_text};
use crate::retrieval::search_render::render_index;

/// The line appended to an answer read directly from the database.
pub const OFFLINE_NOTE: &str = "(memd worker not running: answered from the database, keyword only)";

fn open(dir: &DataDir) -> Option<rusqlite::Connection> {
    let path = dir.db();
    if !path.is_file() {
        return None;
    }
    crate::store::open::open_reader(&path)
        .map_err(|e| tracing::warn!(error = %e, "offline read: cannot open the database"))
        .ok()
}

/// The search answer for `p`, or None when the database cannot be read or the request is invalid
/// (the caller reports the worker error then).
pub fn search(dir: &DataDir, mode: &Mode, p: &SearchParams) -> Option<String> {
    let req = search_request(p, None).ok()?;
    let conn = open(dir)?;
    let res = crate::retrieval::search(&conn, &req)
        .map_err(|e| tracing::warn!(error = %e, "offline search failed"))
        .ok()?;
    Some(format!("{}\n{OFFLINE_NOTE}", render_index(&req, &res, mode, &Zone::Local)))
}

/// The timeline answer for `p` (None as for [`search`]).
pub fn timeline(dir: &DataDir, mode: &Mode, p: &TimelineParams) -> Option<String> {
    let req = timeline_request(p, None).ok()?;
    let conn = open(dir)?;
    let res = crate::retrieval::timeline(&conn, &req)
        .map_err(|e| tracing::warn!(error = %e, "offline timeline failed"))
        .ok()?;
    Some(format!("{}\n{OFFLINE_NOTE}", timeline_text(&req, res.as_ref(), mode)))
}

/// The rows of `POST /api/observations/batch` for `ids` (labels as the tool sends them), oldest
/// first; None as for [`search`].
pub fn batch_rows(dir: &DataDir, req: &crate::retrieval::record_request::RecordsParams) -> Option<Vec<serde_json::Value>> {
    let conn = open(dir)?;
    let found = crate::retrieval::fetch_records(&conn, &req.ids.0, &crate::retrieval::Scope::default())
        .map_err(|e| tracing::warn!(error = %e, "offline records failed"))
        .ok()?;
    let mut records: Vec<_> = found.into_values().collect();
    records.sort_by_key(|r| (r.at_ms(), r.kind(), r.id()));
    Some(records.iter().map(|r| r.to_json_with_kind()).collect())
}

/// An observation's tool uses straight from the database (None when it cannot be read or there
/// is no such observation).
pub fn tool_uses(dir: &DataDir, id: i64) -> Option<serde_json::Value> {
    let conn = open(dir)?;
    let uses = crate::retrieval::browse::tool_uses_of(&conn, id).ok()?;
    serde_json::to_value(uses).ok()
}
