//! The extractive observer (`docs/spec/pipeline.md` §16): deterministic
//! observations and summaries built from the tool events alone, used when no
//! LLM provider is available or usable. Same input → same output (hence the
//! same content hashes on re-processing).
//!
//! Events are grouped W (successful writes), F (failures), X (shell and any
//! other tool), R (reads and searches); one observation per non-empty group
//! in that order — R when it read a file or when W, F and X are all empty.
//! Each observation's `files_read` / `files_modified` come from its own
//! events only (issue 15: not the whole batch's). Titles say what happened:
//! a failure by its salient line (`salient`), a test run by its totals, an
//! edit by the identifiers it added, a read by the file's definitions.

pub(crate) mod changes;
pub(crate) mod describe;
pub(crate) use describe::change_text;
pub(crate) mod salient;
pub(crate) mod symbols;

use super::evidence::{self, Evidence, WRITE_TOOLS};
use super::tool_names::as_claude_tool;
use super::types::{ObservationDraft, SummaryDraft, ToolEvent};
use describe::{cut, display_name, is_interrupted, join_tool, result_line};

/// Tools of group R when successful: reads and searches, by their Claude Code name
/// (`tool_names`), and Gemini CLI's `read_many_files`, which has no Claude Code twin.
const READ_GROUP: &[&str] = &[
    "Read",
    "NotebookRead",
    "Glob",
    "Grep",
    "LS",
    "WebFetch",
    "WebSearch",
    "read_many_files",
];
const MAX_FACTS: usize = 10;
const FACT_MAX: usize = 300;
const TITLE_MAX: usize = 200;
const SUBTITLE_MAX: usize = 300;

/// Concepts named after what changed, per observation (beside the mode's concept).
const MAX_NAME_CONCEPTS: usize = 6;

/// One group's result before mode mapping: type, concept, title, facts, and the names of what
/// it changed or found failing (they become concepts too).
struct Built {
    obs_type: &'static str,
    concept: &'static str,
    title: String,
    facts: Vec<String>,
    names: Vec<String>,
}

/// Observations for one batch of events (§16). `type_ids` / `concept_ids`
/// are the mode's ids in order; a type not in the mode becomes the first mode
/// type, a concept not in the mode is omitted. Every observation carries the
/// write evidence of its own events as `files_modified` and their read
/// evidence as `files_read`.
pub fn observe(events: &[ToolEvent], project_root: &str, type_ids: &[&str], concept_ids: &[&str]) -> Vec<ObservationDraft> {
    let (mut w, mut f, mut x, mut r) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for e in events {
        let name = as_claude_tool(&e.tool_name);
        if e.is_error {
            f.push(e);
        } else if WRITE_TOOLS.contains(&name) {
            w.push(e);
        } else if READ_GROUP.contains(&name) {
            r.push(e);
        } else {
            x.push(e);
        }
    }
    // Each group's own file evidence, collected once: its title and its files come from it.
    let own = |g: &[&ToolEvent]| evidence::collect(g.iter().copied(), project_root);
    let mut built: Vec<(Built, &[&ToolEvent], Evidence)> = Vec::new();
    if !w.is_empty() {
        let ev = own(&w);
        built.push((write_group(&w, project_root, &ev), &w, ev));
    }
    if !f.is_empty() {
        built.push((fail_group(&f, project_root), &f, own(&f)));
    }
    if !x.is_empty() {
        built.push((exec_group(&x, project_root), &x, own(&x)));
    }
    let ev = own(&r);
    if !r.is_empty() && (built.is_empty() || !ev.read.is_empty()) {
        built.push((read_group(&r, project_root, &ev), &r, ev));
    }
    built
        .into_iter()
        .map(|(b, group, ev)| finish(b, group, &ev, type_ids, concept_ids))
        .collect()
}

/// Extractive summary (§16): request = the prompt (≤ 500 chars), investigated
/// = the observation titles joined `; ` (≤ 600), completed = the first
/// paragraph of the last assistant message (≤ 600). `None` when request and
/// completed are both empty.
pub fn summarize(prompt: Option<&str>, observation_titles: &[String], last_assistant_message: &str) -> Option<SummaryDraft> {
    let request = prompt.map(str::trim).filter(|p| !p.is_empty()).map(|p| cut(p, 500));
    let titles: Vec<&str> = observation_titles.iter().map(|t| t.trim()).filter(|t| !t.is_empty()).collect();
    let investigated = (!titles.is_empty()).then(|| cut(&titles.join("; "), 600));
    let completed = describe::first_paragraph(last_assistant_message).map(|p| cut(&p, 600));
    if request.is_none() && completed.is_none() {
        return None;
    }
    Some(SummaryDraft {
        request,
        investigated,
        learned: None,
        completed,
        next_steps: None,
        notes: Some("extractive summary (no LLM)".to_owned()),
    })
}

/// Group W: successful writes.
fn write_group(events: &[&ToolEvent], root: &str, ev: &Evidence) -> Built {
    let mut all_created = true;
    // A fact per edit naming what it changed (definitions first); up to 3 names in the title,
    // all as concepts.
    let mut names: Vec<String> = Vec::new();
    let mut shown: Vec<String> = Vec::new();
    let mut facts: Vec<String> = Vec::new();
    for e in events {
        let (fact, created) = describe::write_fact(e, root);
        all_created &= created;
        let (old, new) = describe::change_text(&e.tool_input);
        let path = evidence::event_paths(e, root).into_iter().next().unwrap_or_default();
        let c = changes::changed(&old, &new, &path);
        facts.push(if c.is_empty() { fact } else { format!("{fact}; {}", c.describe()) });
        for n in c.renamed.iter().map(|(_, to)| to).chain(&c.added) {
            if shown.len() < 3 && !shown.contains(n) {
                shown.push(n.clone());
            }
        }
        for n in c.names() {
            if !names.contains(&n) {
                names.push(n);
            }
        }
    }
    let title = match ev.modified.as_slice() {
        [] => "Edited files (paths unknown)".to_owned(),
        [p] if all_created => format!("Created {p}"),
        [p] => format!("Edited {p}"),
        many => format!("Edited {} files: {}", many.len(), list_two(many, ", ")),
    };
    let title = match shown.is_empty() {
        true => title,
        false => format!("{title}: {}", shown.join(", ")),
    };
    let obs_type = if all_created { "feature" } else { "change" };
    Built {
        obs_type,
        concept: "what-changed",
        title,
        facts,
        names,
    }
}

/// Group F: failed calls.
fn fail_group(events: &[&ToolEvent], root: &str) -> Built {
    let headline = |e: &ToolEvent| {
        let interrupted = is_interrupted(e);
        let line = salient::failure_line(&describe::error_text(e));
        let tool = display_name(&e.tool_name);
        match (interrupted, line) {
            (true, _) => format!("{tool} interrupted"),
            (false, Some(l)) => format!("{tool} failed: {}", cut(&l, 100)),
            (false, None) => format!("{tool} failed"),
        }
    };
    let title = match events {
        [] => String::new(),
        [one] => headline(one),
        [first, ..] => format!("{} tool calls failed; first: {}", events.len(), headline(first)),
    };
    let facts = events
        .iter()
        .map(|e| {
            let interrupted = is_interrupted(e);
            let line = salient::failure_line(&describe::error_text(e));
            let mut fact = join_tool(e, root);
            if let Some(l) = line {
                fact = format!("{fact}: {}", cut(&l, 160));
            }
            if interrupted {
                fact.push_str(" (interrupted)");
            }
            fact
        })
        .collect();
    let (facts, names) = with_failed_tests(facts, events);
    Built {
        obs_type: "discovery",
        concept: "gotcha",
        title,
        facts,
        names,
    }
}

/// Group X: shell commands and any other tool.
fn exec_group(events: &[&ToolEvent], root: &str) -> Built {
    let labels: Vec<String> = events.iter().map(|e| describe::command_label(e, root)).collect();
    let totals = events
        .iter()
        .find_map(|e| salient::totals_line(&describe::output_text(&e.tool_response)));
    let title = match labels.as_slice() {
        [one] => format!("Ran {one}"),
        many => format!("Ran {} commands: {}", many.len(), list_two(many, "; ")),
    };
    let title = match totals {
        Some(t) => format!("{title}: {}", cut(&t, 80)),
        None => title,
    };
    let facts = events
        .iter()
        .zip(&labels)
        .map(|(e, label)| {
            let out = result_line(&e.tool_response).map_or_else(|| "(no output)".to_owned(), |l| cut(&l, 160));
            format!("`{label}` → {out}")
        })
        .collect();
    let (facts, names) = with_failed_tests(facts, events);
    Built {
        obs_type: "discovery",
        concept: "how-it-works",
        title,
        facts,
        names,
    }
}

/// Group R: reads and searches (when a file was read, or when nothing else happened). A read's
/// fact names the definitions of the file it read.
fn read_group(events: &[&ToolEvent], root: &str, ev: &Evidence) -> Built {
    let defined = |e: &ToolEvent| symbols::top_level_symbols(&describe::read_content(e));
    let title = match ev.read.as_slice() {
        [p] => match events.iter().map(|e| defined(e)).find(|d| !d.is_empty()) {
            Some(names) => format!("Read {p}: {}", list_two(&names, ", ")),
            None => format!("Read {p}"),
        },
        [] => match events.iter().find_map(|e| describe::search_term(e, root)) {
            Some(term) => format!("Searched for \"{term}\""),
            None => events.first().map(|e| join_tool(e, root)).unwrap_or_default(),
        },
        many => format!("Explored {} files: {}", many.len(), list_two(many, ", ")),
    };
    let facts = events
        .iter()
        .map(|e| match defined(e) {
            d if d.is_empty() => join_tool(e, root),
            d => format!("{} defines {}", join_tool(e, root), d.join(", ")),
        })
        .collect();
    Built {
        obs_type: "discovery",
        concept: "how-it-works",
        title,
        facts,
        names: Vec::new(),
    }
}

/// `facts` with, first, one naming the tests the group's runs report failed; and those names.
fn with_failed_tests(facts: Vec<String>, events: &[&ToolEvent]) -> (Vec<String>, Vec<String>) {
    let mut names: Vec<String> = Vec::new();
    for e in events {
        let out = format!("{}\n{}", describe::output_text(&e.tool_response), describe::error_text(e));
        for t in changes::failed_tests(&out) {
            if !names.contains(&t) && names.len() < changes::MAX_CHANGED {
                names.push(t);
            }
        }
    }
    if names.is_empty() {
        return (facts, names);
    }
    let mut all = vec![format!("failed tests: {}", names.join(", "))];
    all.extend(facts);
    (all, names)
}

/// Map a group result onto the mode and attach subtitle and evidence.
fn finish(b: Built, group: &[&ToolEvent], ev: &Evidence, type_ids: &[&str], concept_ids: &[&str]) -> ObservationDraft {
    let obs_type = if type_ids.contains(&b.obs_type) {
        b.obs_type
    } else {
        type_ids.first().copied().unwrap_or(b.obs_type)
    };
    let mut facts: Vec<String> = Vec::new();
    for fact in b.facts.iter().map(|f| cut(f.trim(), FACT_MAX)) {
        if facts.len() < MAX_FACTS && !fact.is_empty() && !facts.contains(&fact) {
            facts.push(fact);
        }
    }
    let mut counts: Vec<(String, usize)> = Vec::new();
    for e in group {
        let name = display_name(&e.tool_name);
        match counts.iter_mut().find(|(n, _)| *n == name) {
            Some((_, c)) => *c += 1,
            None => counts.push((name, 1)),
        }
    }
    let subtitle: Vec<String> = counts.iter().map(|(n, c)| format!("{n} ×{c}")).collect();
    ObservationDraft {
        obs_type: obs_type.to_owned(),
        title: Some(cut(&b.title, TITLE_MAX)).filter(|t| !t.is_empty()),
        subtitle: Some(cut(&subtitle.join(", "), SUBTITLE_MAX)).filter(|s| !s.is_empty()),
        facts,
        narrative: None,
        concepts: concept_ids
            .iter()
            .filter(|c| **c == b.concept)
            .map(|c| (*c).to_owned())
            .chain(b.names.iter().take(MAX_NAME_CONCEPTS).cloned())
            .collect(),
        files_read: ev.read.clone(),
        files_modified: ev.modified.clone(),
        relations: Vec::new(),
    }
}

/// `p1<sep>p2` plus `<sep>…` when there are more than two.
fn list_two(items: &[String], sep: &str) -> String {
    let mut s = items.iter().take(2).cloned().collect::<Vec<_>>().join(sep);
    if items.len() > 2 {
        s.push_str(sep);
        s.push('…');
    }
    s
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_writes;
