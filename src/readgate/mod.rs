//! The read gate (issue 39, opt-in `MEMD_READ_GATE`): a whole-file `Read` of a large code file
//! memd has seen before is answered, in the PreToolUse hook's reply, with the file's outline from
//! the stored evidence and the suggestion to read by offset/limit; reads with offset or limit,
//! small files, non-code files and files without history pass untouched, and a second whole read
//! of the same file in a session passes. Pure: the decision's inputs and the reason text.

pub mod estimate;
pub mod outline;
pub mod rows;
pub mod storage;

use outline::{CODE_EXTENSIONS, Symbol};

use crate::text::lines::{one_line, thousands};

/// Outline lines shown at most.
pub const OUTLINE_MAX: usize = 60;

/// Whether a Read asks for the whole file (no `offset`, no `limit`).
pub fn whole_read(tool_input: &serde_json::Value) -> bool {
    tool_input.get("offset").is_none_or(|v| v.is_null()) && tool_input.get("limit").is_none_or(|v| v.is_null())
}

/// Whether the path names a code file (by extension).
pub fn is_code(path: &str) -> bool {
    let ext = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
    !path.ends_with('/') && CODE_EXTENSIONS.contains(&ext.as_str())
}

/// The reason the hook gives: the outline and how to read a part.
pub fn reason(path: &str, bytes: u64, lines: usize, seen_at: &str, symbols: &[Symbol]) -> String {
    let mut out = format!(
        "memd read gate: {} is {} bytes ({} lines), too large to read whole by default. Its outline from memd's record of it ({}; the file may have changed since):\n",
        one_line(path, 300),
        thousands(bytes as i64),
        thousands(lines as i64),
        one_line(seen_at, 40)
    );
    for s in symbols.iter().take(OUTLINE_MAX) {
        out.push_str(&format!("  {:>5}-{:<5} {} {}\n", s.start, s.end, s.kind, one_line(&s.name, 100)));
    }
    if symbols.len() > OUTLINE_MAX {
        out.push_str(&format!("  … {} more\n", symbols.len() - OUTLINE_MAX));
    }
    let example = symbols
        .get(symbols.len() / 2)
        .map_or((1, 200), |s| (s.start, (s.end + 1 - s.start).max(20)));
    out.push_str(&format!(
        "Read the part you need with offset and limit (for example offset={}, limit={}). Reading the whole file again is allowed.",
        example.0, example.1
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_whole_reads_of_code_files_are_candidates() {
        assert!(whole_read(&json!({"file_path": "/a.rs"})));
        assert!(whole_read(&json!({"file_path": "/a.rs", "offset": null})));
        assert!(!whole_read(&json!({"file_path": "/a.rs", "offset": 10})));
        assert!(!whole_read(&json!({"file_path": "/a.rs", "limit": 50})));
        assert!(is_code("/w/src/lib.rs") && is_code("App.TSX"));
        assert!(!is_code("/w/README.md") && !is_code("/w/data.json") && !is_code("Makefile"));
    }

    #[test]
    fn the_reason_lists_the_outline_and_an_example_range() {
        let symbols = outline::outline("fn a() {\n}\nfn b() {\n  1\n}\n");
        let r = reason("/w/src/lib.rs", 40_000, 1_200, "2026-12-04", &symbols);
        assert!(r.starts_with("memd read gate: /w/src/lib.rs is 40,000 bytes (1,200 lines)"), "{r}");
        assert!(r.contains("      1-2     fn a\n") && r.contains("      3-5     fn b\n"), "{r}");
        assert!(r.contains("offset=3, limit=20"), "{r}");
    }
}
