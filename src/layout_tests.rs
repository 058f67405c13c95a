//! The layout map of `lib.rs` held equal to the code (issue 52): every top-level module is in the
//! layer table, no module imports one of a higher layer, no two import each other in a cycle
//! (the same rules `scripts/import-graph.py --check` applies in CI), and the actor tree drawn in
//! `actors/mod.rs` names every child of the root.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Module → layer, from lib.rs's table.
fn layers() -> BTreeMap<String, u32> {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    let (band, row) = (
        regex::Regex::new(r"^//! \| \*\*(\d+) ").unwrap(),
        regex::Regex::new(r"^//! \| \[`(\w+)`\] \|").unwrap(),
    );
    let mut out = BTreeMap::new();
    let mut current = None;
    for line in lib.lines() {
        if let Some(c) = band.captures(line) {
            current = c[1].parse().ok();
        } else if let (Some(c), Some(l)) = (row.captures(line), current) {
            out.insert(c[1].to_string(), l);
        }
    }
    out
}

/// `text` without plain comments and `#[cfg(test)] mod … { … }` blocks (test code may reach
/// anywhere); doc comments stay, as their `crate::` links are paths rustdoc resolves.
fn without_tests(text: &str) -> String {
    let text = regex::Regex::new(r"(?s)/\*.*?\*/").unwrap().replace_all(text, "");
    let text: String = text
        .lines()
        .map(|l| match l.trim_start().starts_with("//!") || l.trim_start().starts_with("///") {
            true => l,
            false => l.split("//").next().unwrap_or(""),
        })
        .collect::<Vec<_>>()
        .join("\n");
    let start = regex::Regex::new(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{").unwrap();
    let (mut out, mut i) = (String::new(), 0);
    for m in start.find_iter(&text) {
        if m.start() < i {
            continue;
        }
        out.push_str(&text[i..m.start()]);
        let (mut depth, mut j) = (1, m.end());
        let bytes = text.as_bytes();
        while j < bytes.len() && depth > 0 {
            depth += match bytes[j] {
                b'{' => 1,
                b'}' => -1,
                _ => 0,
            };
            j += 1;
        }
        i = j;
    }
    out.push_str(&text[i..]);
    out
}

/// Top-level module → the top-level modules it imports (non-test code).
fn edges() -> BTreeMap<String, BTreeSet<String>> {
    let root = src();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let crate_path = regex::Regex::new(r"\bcrate::(\w+)").unwrap();
    let super_path = regex::Regex::new(r"\bsuper::(\w+)").unwrap();
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(&root).unwrap();
        let parts: Vec<String> = rel.with_extension("").iter().map(|c| c.to_string_lossy().into_owned()).collect();
        let stem = parts.last().cloned().unwrap_or_default();
        if stem == "tests" || stem.ends_with("_tests") || parts[..parts.len() - 1].iter().any(|p| p == "tests") {
            continue;
        }
        let module: Vec<&String> = parts.iter().filter(|p| !matches!(p.as_str(), "mod" | "lib" | "main")).collect();
        let Some(top) = module.first().map(|s| String::clone(s)) else {
            continue;
        };
        let text = without_tests(&std::fs::read_to_string(&f).unwrap());
        let mut targets: BTreeSet<String> = crate_path.captures_iter(&text).map(|c| c[1].to_string()).collect();
        // `super` of a top-level module's own file is the crate root.
        if module.len() == 1 {
            targets.extend(super_path.captures_iter(&text).map(|c| c[1].to_string()));
        }
        targets.remove(&top);
        out.entry(top).or_default().extend(targets);
    }
    out
}

#[test]
fn every_module_is_in_the_layer_table_and_every_edge_points_down() {
    let layer = layers();
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    let declared: BTreeSet<String> = regex::Regex::new(r"(?m)^pub mod (\w+);")
        .unwrap()
        .captures_iter(&lib)
        .map(|c| c[1].to_string())
        .collect();
    let listed: BTreeSet<String> = layer.keys().cloned().collect();
    assert_eq!(declared, listed, "lib.rs's `pub mod`s and its layer table differ");
    let edges = edges();
    let mut upward = Vec::new();
    for (a, targets) in &edges {
        for b in targets.iter().filter(|b| layer.contains_key(*b)) {
            if let Some(la) = layer.get(a)
                && layer[b] > *la
            {
                upward.push(format!("{a} (layer {la}) -> {b} (layer {})", layer[b]));
            }
        }
    }
    assert!(upward.is_empty(), "edges up the layers:\n{}", upward.join("\n"));
    // Within a layer: no cycle (a module reaching itself through others).
    for start in edges.keys() {
        let (mut seen, mut todo) = (BTreeSet::new(), vec![start.clone()]);
        while let Some(m) = todo.pop() {
            for t in edges.get(&m).into_iter().flatten() {
                assert!(t != start, "{start} imports itself through {m}");
                if seen.insert(t.clone()) {
                    todo.push(t.clone());
                }
            }
        }
    }
}

#[test]
fn the_actor_tree_picture_names_every_child_of_the_root() {
    let picture = std::fs::read_to_string(src().join("actors/mod.rs")).unwrap();
    for child in crate::actors::Child::ALL {
        assert!(
            picture.contains(&format!("─ {}", child.name())),
            "actors/mod.rs does not draw {}",
            child.name()
        );
    }
}
