//! Lexical path normalisation for file evidence (`docs/spec/pipeline.md` §14
//! item 1): `\` → `/`, relative paths joined to a base directory, `.`/`..`
//! folded without touching the filesystem, and paths under the project root
//! made relative to it. Windows drive roots (`C:/…`) are absolute too; the
//! drive letter is compared and written in upper case.

/// Normalise `path` (§14 item 1): `\` → `/`; a relative path is joined to
/// `base`; `.`/`..` folded lexically; a path under `project_root` becomes
/// relative to it, anything else stays absolute. `None` for a blank path.
pub(crate) fn normalize(path: &str, base: &str, project_root: &str) -> Option<String> {
    let path = path.trim().replace('\\', "/");
    if path.is_empty() {
        return None;
    }
    let joined = if split_root(&path).0.is_empty() {
        let base = base.trim().replace('\\', "/");
        if base.is_empty() { path } else { format!("{base}/{path}") }
    } else {
        path
    };
    let full = fold(&joined);
    let root = fold(&project_root.trim().replace('\\', "/"));
    Some(relativize(full, &root))
}

/// Split a `/`-separated path into its root (`/`, `C:/` with an uppercase
/// drive letter, or empty for a relative path) and the rest.
fn split_root(path: &str) -> (String, &str) {
    let bytes = path.as_bytes();
    if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
        let drive = char::from(bytes[0].to_ascii_uppercase());
        let rest = path.get(2..).unwrap_or_default();
        return (format!("{drive}:/"), rest.trim_start_matches('/'));
    }
    if let Some(rest) = path.strip_prefix('/') {
        return ("/".to_owned(), rest.trim_start_matches('/'));
    }
    (String::new(), path)
}

/// Lexically fold `.`, `..` and empty components; `..` never climbs above an
/// absolute root. A relative path that folds to nothing becomes `.`.
fn fold(path: &str) -> String {
    let (root, rest) = split_root(path);
    let mut parts: Vec<&str> = Vec::new();
    for part in rest.split('/') {
        match part {
            "" | "." => {}
            ".." => match parts.last() {
                Some(&last) if last != ".." => {
                    parts.pop();
                }
                _ if !root.is_empty() => {}
                _ => parts.push(".."),
            },
            _ => parts.push(part),
        }
    }
    let joined = parts.join("/");
    if root.is_empty() && joined.is_empty() {
        ".".to_owned()
    } else {
        root + &joined
    }
}

/// `path` relative to `root` when it lies under it (component-wise), else
/// unchanged. A relative (unknown) root leaves every path unchanged.
fn relativize(path: String, root: &str) -> String {
    if split_root(root).0.is_empty() {
        return path;
    }
    if path == root {
        return ".".to_owned();
    }
    let prefix = if root.ends_with('/') { root.to_owned() } else { format!("{root}/") };
    match path.strip_prefix(&prefix) {
        Some(rest) if !rest.is_empty() => rest.to_owned(),
        _ => path,
    }
}
