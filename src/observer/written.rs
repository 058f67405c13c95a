//! The text a tool call *wrote* (issue 54): an edit's new strings, a written file's content, the
//! added lines of a patch — apart from the rest of its input (the path, the replaced text). Search
//! ranks a call that wrote a word above one that only showed it (a read, a grep, a test log), so
//! the raw index keeps the two in separate columns. Pure and total.

use serde_json::Value;

use super::evidence::patch_texts;
use super::tool_names::as_claude_tool;

/// Keys of a write tool's input (and of each `edits[]` item) that hold the text it wrote.
const WRITTEN_KEYS: &[&str] = &["new_string", "newString", "content", "new_source"];

/// The written text of a call to `tool` with `input`, and its input without that text; `None`
/// for a call that writes nothing (its whole input is the rest).
pub fn split(tool: &str, input: &Value) -> Option<(String, Value)> {
    match as_claude_tool(tool) {
        "Edit" | "MultiEdit" | "Write" | "NotebookEdit" => {
            let mut rest = input.clone();
            let mut written = Vec::new();
            take_written(&mut rest, &mut written);
            if let Some(edits) = rest.get_mut("edits").and_then(Value::as_array_mut) {
                for e in edits {
                    take_written(e, &mut written);
                }
            }
            Some((written.join("\n"), rest))
        }
        "apply_patch" => {
            let (mut added, mut other) = (Vec::new(), Vec::new());
            for text in patch_texts(input) {
                for line in text.lines() {
                    match line.strip_prefix('+').filter(|_| !line.starts_with("+++")) {
                        Some(l) => added.push(l.to_owned()),
                        None => other.push(line.to_owned()),
                    }
                }
            }
            Some((added.join("\n"), Value::String(other.join("\n"))))
        }
        _ => None,
    }
}

fn take_written(v: &mut Value, out: &mut Vec<String>) {
    let Some(map) = v.as_object_mut() else { return };
    for key in WRITTEN_KEYS {
        if let Some(Value::String(s)) = map.remove(*key) {
            out.push(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_edit_wrote_its_new_string_and_keeps_the_rest() {
        let (w, rest) = split(
            "Edit",
            &json!({"file_path": "/p/a.css", "old_string": "opacity: 0", "new_string": "transition: opacity"}),
        )
        .unwrap();
        assert_eq!(w, "transition: opacity");
        assert_eq!(rest, json!({"file_path": "/p/a.css", "old_string": "opacity: 0"}));
    }

    #[test]
    fn multi_edits_writes_patches_and_other_hosts_names() {
        let (w, rest) = split(
            "MultiEdit",
            &json!({"file_path": "f", "edits": [{"old_string": "a", "new_string": "b1"}, {"old_string": "c", "new_string": "d2"}]}),
        )
        .unwrap();
        assert_eq!(w, "b1\nd2");
        assert_eq!(rest["edits"], json!([{"old_string": "a"}, {"old_string": "c"}]));
        assert_eq!(
            split("write_file", &json!({"file_path": "f", "content": "hello"})).unwrap().0,
            "hello"
        );
        let patch = "*** Begin Patch\n*** Update File: a.rs\n-old line\n+new placeholder line\n*** End Patch";
        let (w, rest) = split("apply_patch", &json!({ "input": patch })).unwrap();
        assert_eq!(w, "new placeholder line");
        assert!(rest.as_str().unwrap().contains("-old line") && !rest.as_str().unwrap().contains("placeholder"));
        assert!(split("Read", &json!({"file_path": "f"})).is_none());
        assert!(split("Bash", &json!({"command": "echo placeholder"})).is_none());
    }
}
