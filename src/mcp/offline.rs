//! `search` and `timeline` when no worker answers and none can be started (`MEMD_AUTOSTART=false`,
//! a worker that fails to start): the same request parsing and rendering as `GET /api/search` and
//! `GET /api/timeline`, run on a read-only connection to `<data>/memd.db` (search keyword only),
//! with a line saying so. Recall must not depend on the worker being up.

use axum::http::HeaderMap;

use crate::data_dir::DataDir;
use crate::ingress::read_params::Params;
use crate::ingress::search_routes::{search_request, timeline_request, timeline_text};
use crate::modes::Mode;
use crate::retrieval::Zone;
use crate::retrieval::search_render::render_index;

/// The line appended to an answer read directly from the database.
pub const OFFLINE_NOTE: &str = "(memd worker not running: answered from the database, keyword only)";

fn params(pairs: &[(&str, String)]) -> Params {
    Params(
        pairs
            .iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
    )
}

fn open(dir: &DataDir) -> Option<rusqlite::Connection> {
    let path = dir.db();
    if !path.is_file() {
        return None;
    }
    crate::store::open::open_reader(&path)
        .map_err(|e| tracing::warn!(error = %e, "offline read: cannot open the database"))
        .ok()
}

/// The search answer for the query `pairs`, or None when the database cannot be read or the
/// request is invalid (the caller reports the worker error then).
pub fn search(dir: &DataDir, mode: &Mode, pairs: &[(&str, String)]) -> Option<String> {
    let req = search_request(&params(pairs), &HeaderMap::new()).ok()?;
    let conn = open(dir)?;
    let res = crate::retrieval::search(&conn, &req)
        .map_err(|e| tracing::warn!(error = %e, "offline search failed"))
        .ok()?;
    Some(format!("{}\n{OFFLINE_NOTE}", render_index(&req, &res, mode, &Zone::Local)))
}

/// The timeline answer for the query `pairs` (None as for [`search`]).
pub fn timeline(dir: &DataDir, mode: &Mode, pairs: &[(&str, String)]) -> Option<String> {
    let req = timeline_request(&params(pairs), &HeaderMap::new()).ok()?;
    let conn = open(dir)?;
    let res = crate::retrieval::timeline(&conn, &req)
        .map_err(|e| tracing::warn!(error = %e, "offline timeline failed"))
        .ok()?;
    Some(format!("{}\n{OFFLINE_NOTE}", timeline_text(&req, res.as_ref(), mode)))
}
