//! The corpus tools (issue 41), claude-mem's names and arguments: `build_corpus`, `list_corpora`,
//! `prime_corpus`, `query_corpus`, `rebuild_corpus`, `reprime_corpus`, each a call of
//! `/api/corpus…`. A build's project defaults to the caller's (`*` = every project). Priming and
//! querying wait for the model (up to [`MODEL_WAIT`]).

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::caller::{CallerContext, ToolError, ToolText, Unanswered, bad, fail, ok};
use super::params::{Bounded, Words, words};
use crate::protocol::paths;
use crate::text::sink::inline;

/// How long a prime or a query may take (a large corpus is a long first call).
const MODEL_WAIT: Duration = Duration::from_secs(900);

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct BuildCorpusParams {
    /// the corpus's name: letters, digits, . _ -
    pub name: String,
    /// what this corpus is about
    pub description: Option<String>,
    /// default: this project; * = every project
    pub project: Option<String>,
    /// observation types (decision, bugfix, feature, refactor, discovery, change, …)
    pub types: Option<Words>,
    pub concepts: Option<Words>,
    /// files read or modified (a path or the end of one)
    pub files: Option<Words>,
    /// words to match (keyword and semantic search); none = the newest observations
    pub query: Option<String>,
    /// ISO date or date-time
    #[serde(rename = "dateStart", alias = "date_start")]
    pub date_start: Option<String>,
    #[serde(rename = "dateEnd", alias = "date_end")]
    pub date_end: Option<String>,
    /// at most this many observations (default 500)
    pub limit: Option<Bounded<1, 2000>>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct ListCorporaParams {}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct CorpusNameParams {
    /// the corpus's name
    pub name: String,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct QueryCorpusParams {
    /// the corpus's name
    pub name: String,
    /// the question; answered only from the corpus, citing observation ids
    pub question: String,
}

fn corpus_path(template: &str, name: &str) -> Result<String, ToolError> {
    crate::knowledge::corpus::check_name(name).map_err(|e| bad(e.to_string()))?;
    Ok(template.replace("{name}", name))
}

impl CallerContext {
    fn corpus_call(&self, method: &str, path: &str, body: Option<&Value>) -> Result<Result<Value, Unanswered>, ToolError> {
        match self.link.call_with_timeout(method, path, body, MODEL_WAIT) {
            Err(e) => Ok(Err(Unanswered::Link(e))),
            Ok(a) if a.status == 400 => Err(bad(a.detail())),
            Ok(a) if a.status >= 300 => Ok(Err(Unanswered::Status(a.detail()))),
            Ok(a) => Ok(Ok(a.json().unwrap_or(Value::Null))),
        }
    }
}

/// One line about a corpus's contents.
pub fn built_text(v: &Value) -> String {
    let s = &v["stats"];
    let (q, sup) = (
        v["excluded"]["quarantined"].as_u64().unwrap_or(0),
        v["excluded"]["superseded"].as_u64().unwrap_or(0),
    );
    let left_out = match q + sup {
        0 => String::new(),
        _ => format!(" Left out: {q} quarantined, {sup} superseded."),
    };
    format!(
        "Corpus {}: {} observations, about {} tokens, {} to {}.{left_out} Next: prime_corpus, then query_corpus.",
        inline(v["name"].as_str().unwrap_or("")),
        s["observation_count"].as_u64().unwrap_or(0),
        s["token_estimate"].as_u64().unwrap_or(0),
        s["date_range"]["earliest"].as_str().unwrap_or("").get(..10).unwrap_or("-"),
        s["date_range"]["latest"].as_str().unwrap_or("").get(..10).unwrap_or("-"),
    )
}

pub fn build_corpus(ctx: &CallerContext, p: BuildCorpusParams) -> Result<ToolText, ToolError> {
    let project = match p.project.as_deref().map(str::trim) {
        Some("*") => None,
        Some(given) if !given.is_empty() => Some(given.to_string()),
        _ => ctx.chain.last().cloned(),
    };
    let body = json!({
        "name": p.name, "description": p.description, "project": project, "types": words(&p.types),
        "concepts": words(&p.concepts), "files": words(&p.files), "query": p.query,
        "dateStart": p.date_start, "dateEnd": p.date_end, "limit": p.limit.map(|l| l.0),
    });
    match ctx.corpus_call("POST", paths::CORPORA, Some(&body))? {
        Ok(v) => ok(built_text(&v)),
        Err(e) => fail(e),
    }
}

pub fn list_corpora(ctx: &CallerContext, _p: ListCorporaParams) -> Result<ToolText, ToolError> {
    let v = match ctx.corpus_call("GET", paths::CORPORA, None)? {
        Ok(v) => v,
        Err(e) => return fail(e),
    };
    let rows = v["corpora"].as_array().cloned().unwrap_or_default();
    if rows.is_empty() {
        return ok("No corpora yet. build_corpus makes one from a filter (project, types, concepts, files, query, dates).");
    }
    let lines: Vec<String> = rows
        .iter()
        .map(|c| {
            let primed = if c["session_id"].is_string() { "primed" } else { "not primed" };
            format!(
                "- {}: {} observations, ~{} tokens, {primed}. {}",
                inline(c["name"].as_str().unwrap_or("")),
                c["stats"]["observation_count"].as_u64().unwrap_or(0),
                c["stats"]["token_estimate"].as_u64().unwrap_or(0),
                inline(c["description"].as_str().unwrap_or("")),
            )
        })
        .collect();
    ok(lines.join("\n"))
}

pub fn rebuild_corpus(ctx: &CallerContext, p: CorpusNameParams) -> Result<ToolText, ToolError> {
    match ctx.corpus_call("POST", &corpus_path(paths::CORPUS_REBUILD, &p.name)?, None)? {
        Ok(v) => ok(format!("Rebuilt. {} (reprime_corpus loads the new contents.)", built_text(&v))),
        Err(e) => fail(e),
    }
}

fn primed(ctx: &CallerContext, template: &str, name: &str) -> Result<ToolText, ToolError> {
    match ctx.corpus_call("POST", &corpus_path(template, name)?, None)? {
        Ok(v) => ok(format!(
            "Corpus {} primed (session {}). The agent says: {}",
            inline(name),
            v["session_id"].as_str().unwrap_or(""),
            inline(v["acknowledgement"].as_str().unwrap_or("")),
        )),
        Err(e) => fail(e),
    }
}

pub fn prime_corpus(ctx: &CallerContext, p: CorpusNameParams) -> Result<ToolText, ToolError> {
    primed(ctx, paths::CORPUS_PRIME, &p.name)
}

pub fn reprime_corpus(ctx: &CallerContext, p: CorpusNameParams) -> Result<ToolText, ToolError> {
    primed(ctx, paths::CORPUS_REPRIME, &p.name)
}

/// The answer, then what it cites and any id it cites from outside the corpus.
pub fn answer_text(v: &Value) -> String {
    let ids = |k: &str| -> Vec<String> {
        v[k].as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_i64)
            .map(|i| format!("#{i}"))
            .collect()
    };
    let mut out = v["answer"].as_str().unwrap_or("").trim().to_string();
    let cited = ids("cited");
    out.push_str(&match cited.is_empty() {
        true => "\n\n(The answer cites no observation of the corpus.)".to_string(),
        false => format!("\n\nCited: {} (get_observations for the records).", cited.join(" ")),
    });
    let outside = ids("outside_corpus");
    if !outside.is_empty() {
        out.push_str(&format!(
            "\nWarning: {} are not in the corpus; do not trust what the answer says about them.",
            outside.join(" ")
        ));
    }
    out
}

pub fn query_corpus(ctx: &CallerContext, p: QueryCorpusParams) -> Result<ToolText, ToolError> {
    if p.question.trim().is_empty() {
        return Err(bad("question is required"));
    }
    let body = json!({"question": p.question});
    match ctx.corpus_call("POST", &corpus_path(paths::CORPUS_QUERY, &p.name)?, Some(&body))? {
        Ok(v) => ok(answer_text(&v)),
        Err(e) => fail(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_lists_its_citations_and_warns_of_ids_outside_the_corpus() {
        let t = answer_text(&json!({"answer": "Because of #4.", "cited": [4], "outside_corpus": [99]}));
        assert!(t.contains("Cited: #4") && t.contains("Warning: #99 are not in the corpus"), "{t}");
        assert!(answer_text(&json!({"answer": "I do not know."})).contains("cites no observation"));
    }

    #[test]
    fn a_build_is_summed_up_with_what_was_left_out() {
        let t = built_text(&json!({"name": "n", "stats": {"observation_count": 3, "token_estimate": 120,
            "date_range": {"earliest": "2026-01-02T00:00:00Z", "latest": "2026-01-05T00:00:00Z"}},
            "excluded": {"quarantined": 1, "superseded": 0}}));
        assert!(
            t.contains("3 observations") && t.contains("2026-01-02 to 2026-01-05") && t.contains("1 quarantined"),
            "{t}"
        );
        assert!(corpus_path(paths::CORPUS_QUERY, "../x").is_err());
        assert_eq!(corpus_path(paths::CORPUS_QUERY, "a.b").unwrap(), "/api/corpus/a.b/query");
    }
}
