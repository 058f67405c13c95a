use super::*;
use serde_json::json;
use std::path::PathBuf;

fn builtin(id: &str) -> Mode {
    let (mode, warnings) = load_mode(id, &[]);
    assert!(warnings.is_empty(), "{id}: {warnings:?}");
    mode
}

/// A fresh, empty directory under the system temp dir (no tempfile dependency here).
fn scratch_dir(tag: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let dir = std::env::temp_dir().join(format!("memd-modes-{tag}-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

#[test]
fn builtin_code_parses_with_nine_types_and_seven_concepts() {
    let mode = builtin("code");
    assert_eq!(mode.id, "code");
    assert_eq!(mode.name, "Code Development");
    assert_eq!(
        mode.type_ids(),
        [
            "bugfix",
            "feature",
            "refactor",
            "change",
            "discovery",
            "decision",
            "security_alert",
            "security_note",
            "sensitive"
        ]
    );
    assert_eq!(
        mode.concept_ids(),
        [
            "how-it-works",
            "why-it-exists",
            "what-changed",
            "problem-solution",
            "gotcha",
            "pattern",
            "trade-off"
        ]
    );
    assert_eq!(mode.default_type(), "bugfix");
    assert_eq!(mode.glyph("discovery"), "○");
    assert_eq!(mode.work_glyph("discovery"), "⌕");
    assert_eq!(mode.work_glyph("bugfix"), "⚒");
    assert_eq!(mode.glyph("sensitive"), "⊘");
    assert_eq!(mode.glyph("nonsense"), UNKNOWN_TYPE_GLYPH);
    assert_eq!(mode.type_label("security_alert"), "Security Alert");
    for t in &mode.observation_types {
        for glyph in [&t.emoji, &t.work_emoji] {
            assert_eq!(glyph.chars().count(), 1, "{}", t.id);
            assert!(glyph.chars().all(|c| (c as u32) < 0x10000), "{} not BMP", t.id);
        }
    }
    for key in PROMPT_KEYS {
        assert!(mode.prompts.contains_key(*key), "missing prompt key {key}");
        if *key != "format_examples" {
            assert!(!mode.prompt(key).trim().is_empty(), "empty prompt {key}");
        }
    }
    assert_eq!(mode.prompt("format_examples"), "");
    assert_eq!(mode.prompt("no_such_key"), "");
    // Mode texts must never contain the redaction marker (it switches on reply rule 5).
    assert!(mode.prompts.values().all(|p| !p.contains("<redacted type=")));
}

#[test]
fn every_builtin_resolves_without_warnings() {
    for (id, _) in BUILTIN_MODES {
        let mode = builtin(id);
        assert_eq!(mode.id, *id);
        assert_eq!(mode.observation_types.len(), 9, "{id}");
    }
}

#[test]
fn shipped_language_files_extend_the_parent_texts() {
    let code = builtin("code");
    for (lang, language) in [
        ("zh", "Chinese"),
        ("ja", "Japanese"),
        ("de", "German"),
        ("fr", "French"),
        ("es", "Spanish"),
    ] {
        let mode = builtin(&format!("code--{lang}"));
        assert_eq!(mode.name, format!("Code Development ({language})"));
        assert_eq!(mode.type_ids(), code.type_ids());
        assert_eq!(mode.concept_ids(), code.concept_ids());
        for key in ["footer", "continuation_instruction", "summary_footer"] {
            let text = mode.prompt(key);
            assert!(text.starts_with(&format!("{}\n", code.prompt(key))), "{lang} {key}");
            assert!(text.contains(language), "{lang} {key}");
        }
        let mut same = mode.prompts.clone();
        for key in ["footer", "continuation_instruction", "summary_footer"] {
            same.insert(key.into(), code.prompt(key).into());
        }
        assert_eq!(same, code.prompts, "{lang}: only three keys differ");
    }
}

#[test]
fn deep_merge_merges_objects_and_replaces_arrays_and_scalars() {
    let mut base = json!({
        "name": "P", "version": "1",
        "list": [1, 2, 3],
        "prompts": {"a": "A", "b": "B", "nested": {"x": 1, "y": 2}}
    });
    deep_merge(
        &mut base,
        json!({
            "version": 2,
            "list": [9],
            "prompts": {"b": "B2", "c": "C", "nested": {"y": 3}},
            "extra": {"k": true}
        }),
    );
    assert_eq!(
        base,
        json!({
            "name": "P", "version": 2,
            "list": [9],
            "prompts": {"a": "A", "b": "B2", "c": "C", "nested": {"x": 1, "y": 3}},
            "extra": {"k": true}
        })
    );
    let mut scalar = json!({"a": {"b": 1}});
    deep_merge(&mut scalar, json!({"a": "flat"}));
    assert_eq!(scalar, json!({"a": "flat"}));
}

#[test]
fn chill_differs_from_code_only_in_two_prompt_keys() {
    let code = builtin("code");
    let chill = builtin("code--chill");
    let differing: Vec<&str> = PROMPT_KEYS.iter().copied().filter(|k| code.prompt(k) != chill.prompt(k)).collect();
    assert_eq!(differing, ["recording_focus", "skip_guidance"]);
    let mut restored = chill.clone();
    restored.id = code.id.clone();
    for key in differing {
        restored.prompts.insert(key.into(), code.prompt(key).into());
    }
    assert_eq!(restored, code);
}

#[test]
fn language_variant_without_file_is_synthesised() {
    let code = builtin("code");
    let ko = builtin("code--ko");
    assert_eq!(ko.id, "code--ko");
    assert_eq!(ko.name, "Code Development (Korean)");
    assert_eq!(ko.observation_types, code.observation_types);
    assert_eq!(ko.observation_concepts, code.observation_concepts);
    for key in PROMPT_KEYS {
        if ["footer", "continuation_instruction", "summary_footer"].contains(key) {
            let text = ko.prompt(key);
            assert!(text.starts_with(code.prompt(key)), "{key}");
            assert!(
                text.ends_with(
                    "\nWrite all observation and summary text in Korean. Type ids, concept ids and XML tag names stay in English."
                ),
                "{key}"
            );
        } else {
            assert_eq!(ko.prompt(key), code.prompt(key), "{key}");
        }
    }
    assert_eq!(builtin("code--pt-br").name, "Code Development (Brazilian Portuguese)");
}

#[test]
fn invalid_id_falls_back_to_code_with_a_warning() {
    for id in ["", "Code", "code--", "code---x", "../etc/passwd", "a--b--c", "code chill"] {
        let (mode, warnings) = load_mode(id, &[]);
        assert_eq!(mode.id, "code", "{id:?}");
        assert_eq!(warnings.len(), 1, "{id:?}: {warnings:?}");
        assert!(warnings[0].contains("invalid mode id"), "{warnings:?}");
    }
}

#[test]
fn missing_parent_falls_back_to_code_and_missing_override_to_parent() {
    let (mode, warnings) = load_mode("nosuch--zh", &[]);
    assert_eq!((mode.id.as_str(), mode.name.as_str()), ("code", "Code Development"));
    assert!(warnings.iter().any(|w| w.contains("\"nosuch\" not found")), "{warnings:?}");

    let (mode, warnings) = load_mode("code--nosuch", &[]);
    assert_eq!(mode.id, "code--nosuch");
    assert_eq!(mode.prompts, builtin("code").prompts);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
}

#[test]
fn directories_are_searched_in_order_before_builtins() {
    let first = scratch_dir("first");
    let second = scratch_dir("second");
    // A broken file is skipped with a warning; the next directory's copy is used.
    std::fs::write(first.join("code--mine.json"), "{ not json").unwrap();
    std::fs::write(
        second.join("code--mine.json"),
        r#"{"name": "Mine", "version": 3,
            "observation_types": [{"id": "note", "label": "Note", "emoji": "*"}],
            "prompts": {"footer": "custom footer", "unknown_key": {"ignored": true}}}"#,
    )
    .unwrap();
    let dirs = vec![first.clone(), second.clone()];
    let (mode, warnings) = load_mode("code--mine", &dirs);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("not valid JSON"));
    assert_eq!((mode.name.as_str(), mode.version.as_str()), ("Mine", "3"));
    assert_eq!(mode.type_ids(), ["note"], "arrays replace");
    assert_eq!(mode.work_glyph("note"), "*", "work glyph falls back to the legend glyph");
    assert_eq!(mode.concept_ids().len(), 7, "untouched keys come from the parent");
    assert_eq!(mode.prompt("footer"), "custom footer");
    assert_eq!(mode.prompt("system_identity"), builtin("code").prompt("system_identity"));
    assert!(!mode.prompts.contains_key("unknown_key"));

    // A directory copy of the parent wins over the built-in one.
    std::fs::write(
        first.join("code.json"),
        r#"{"name": "Local code", "observation_types": [{"id": "x"}]}"#,
    )
    .unwrap();
    let (mode, warnings) = load_mode("code--chill", &dirs);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(mode.name, "Local code");
    assert!(!mode.prompt("recording_focus").is_empty());

    // A parent that is not a valid mode falls back to the built-in code.
    std::fs::write(first.join("code.json"), r#"{"name": "No types"}"#).unwrap();
    let (mode, warnings) = load_mode("code", &dirs);
    assert_eq!(mode, builtin("code"));
    assert_eq!(warnings.len(), 1, "{warnings:?}");

    assert_eq!(
        mode_search_dirs(Some(" /m "), std::path::Path::new("/d")),
        [PathBuf::from("/m"), PathBuf::from("/d/modes")]
    );
    assert_eq!(mode_search_dirs(Some(""), std::path::Path::new("/d")), [PathBuf::from("/d/modes")]);
    let _ = std::fs::remove_dir_all(first);
    let _ = std::fs::remove_dir_all(second);
}
