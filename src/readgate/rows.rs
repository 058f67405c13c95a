//! The read gate's evidence (issue 39): the newest stored full text of a file — a whole-file Read's
//! response or a Write's content — among the tool calls of the observations about it, found
//! through the `observation_files` index (never a scan of the raw calls).

use rusqlite::{Connection, params_from_iter};

use super::estimate::full_text;
use crate::retrieval::RetrievalError;
use crate::retrieval::scope::{Conditions, Scope, placeholders, text_params};

/// (the text, when it was recorded in epoch ms), or None when memd has no full text of the file.
pub fn stored_text(conn: &Connection, paths: &[String], scope: &Scope) -> Result<Option<(String, i64)>, RetrievalError> {
    let mut c = Conditions::default();
    c.push(&format!("f.path IN ({})", placeholders(paths.len())), text_params(paths));
    scope.conditions("o", true, &mut c);
    c.push("o.quarantined = 0", []);
    let sql = format!(
        "SELECT t.tool_name, t.tool_input, t.tool_response, t.occurred_at_epoch
         FROM observation_files f JOIN observations o ON o.id = f.observation_id
         JOIN observation_sources s ON s.observation_id = o.id JOIN tool_uses t ON t.id = s.tool_use_row_id
         WHERE t.tool_name IN ('Read', 'Write') AND t.truncated = 0{} ORDER BY t.id DESC LIMIT 20",
        c.sql
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params_from_iter(c.params.iter()), |r| {
        Ok((
            r.get::<_, String>("tool_name")?,
            r.get::<_, String>("tool_input")?,
            r.get::<_, String>("tool_response")?,
            r.get::<_, i64>("occurred_at_epoch")?,
        ))
    })?;
    for row in rows {
        let (tool, input, response, at) = row?;
        let input: serde_json::Value = serde_json::from_str(&input).unwrap_or_default();
        let file = input["file_path"].as_str().unwrap_or_default();
        if !paths.iter().any(|p| file == p || file.ends_with(&format!("/{p}"))) {
            continue;
        }
        let response: serde_json::Value = serde_json::from_str(&response).unwrap_or_else(|_| serde_json::Value::String(response.clone()));
        if let Some(text) = full_text(&tool, &input, &response) {
            return Ok(Some((text.to_string(), at)));
        }
    }
    Ok(None)
}
