//! The `search` tool when no worker answers and none can be started (`MEMD_AUTOSTART=false`, a
//! worker that fails to start): the same request parsing and rendering as `GET /api/search`, run
//! on a read-only connection to `<data>/memd.db`, keyword only, with a line saying so. Recall must
//! not depend on the worker being up.

use axum::http::HeaderMap;

use crate::data_dir::DataDir;
use crate::ingress::read_params::Params;
use crate::ingress::search_routes::search_request;
use crate::modes::Mode;
use crate::retrieval::Zone;
use crate::retrieval::search_render::render_index;

/// The line appended to an answer read directly from the database.
pub const OFFLINE_NOTE: &str = "(memd worker not running: answered from the database, keyword only)";

/// The search answer for the query `pairs`, or None when the database cannot be read or the
/// request is invalid (the caller reports the worker error then).
pub fn search(dir: &DataDir, mode: &Mode, pairs: &[(&str, String)]) -> Option<String> {
    let path = dir.db();
    if !path.is_file() {
        return None;
    }
    let params = Params(
        pairs
            .iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
    );
    let req = search_request(&params, &HeaderMap::new()).ok()?;
    let conn = crate::store::open::open_reader(&path)
        .map_err(|e| tracing::warn!(error = %e, "offline search: cannot open the database"))
        .ok()?;
    let res = crate::retrieval::search(&conn, &req)
        .map_err(|e| tracing::warn!(error = %e, "offline search failed"))
        .ok()?;
    Some(format!("{}\n{OFFLINE_NOTE}", render_index(&req, &res, mode, &Zone::Local)))
}
