//! `memd corpus build|list|show|rebuild|prime|reprime|query|delete` (issue 41): corpora for a
//! person, through the same `/api/corpus…` routes as the MCP tools, with the tools' wording (the
//! next step named as a command). Priming and querying wait for the model.

use std::collections::HashMap;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, Subcommand};
use serde_json::{Value, json};

use super::client_context::CliContext;
use crate::mcp::corpus::{answer_text, built_text};
use crate::mcp::link::WorkerLink;
use crate::protocol::paths;

const MODEL_WAIT: Duration = Duration::from_secs(900);

#[derive(Debug, Args)]
pub struct CorpusArgs {
    #[command(subcommand)]
    pub command: CorpusCommand,
    /// Print the worker's answer as JSON.
    #[arg(long, global = true)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum CorpusCommand {
    /// Build (or replace) a corpus from a filter; with no filter, the newest 500 observations of this project.
    Build(BuildArgs),
    /// List the corpora.
    List,
    /// A corpus's metadata (and with --observations, its observations).
    Show {
        /// The corpus's name.
        name: String,
        /// Print the observations too.
        #[arg(long)]
        observations: bool,
    },
    /// Re-run a corpus's stored filter (then reprime to load it).
    Rebuild {
        /// The corpus's name.
        name: String,
    },
    /// Load a corpus into a fresh knowledge-agent session.
    Prime {
        /// The corpus's name.
        name: String,
    },
    /// Start the knowledge agent's session over, dropping earlier questions.
    Reprime {
        /// The corpus's name.
        name: String,
    },
    /// Ask a corpus a question; the answer cites observation ids.
    Query {
        /// The corpus's name.
        name: String,
        /// The question.
        #[arg(required = true, num_args = 1..)]
        question: Vec<String>,
    },
    /// Delete a corpus and its session.
    Delete {
        /// The corpus's name.
        name: String,
    },
}

#[derive(Debug, Args)]
pub struct BuildArgs {
    /// The corpus's name (letters, digits, . _ -).
    pub name: String,
    /// What the corpus is about.
    #[arg(long)]
    pub description: Option<String>,
    /// The project (default: this directory's; * for all).
    #[arg(long)]
    pub project: Option<String>,
    /// Observation types, comma-separated (decision, bugfix, feature, refactor, discovery, change, …).
    #[arg(long)]
    pub types: Option<String>,
    /// Concepts, comma-separated.
    #[arg(long)]
    pub concepts: Option<String>,
    /// Files read or modified, comma-separated (a path or its end).
    #[arg(long)]
    pub files: Option<String>,
    /// Words to match (keyword and semantic search).
    #[arg(long)]
    pub query: Option<String>,
    /// Oldest date (ISO date or date-time).
    #[arg(long)]
    pub date_start: Option<String>,
    /// Newest date (ISO date or date-time).
    #[arg(long)]
    pub date_end: Option<String>,
    /// At most this many observations (1-2000; default 500).
    #[arg(long)]
    pub limit: Option<u32>,
}

fn call(link: &WorkerLink, method: &str, path: &str, body: Option<&Value>) -> anyhow::Result<Value> {
    let ans = link
        .call_with_timeout(method, path, body, MODEL_WAIT)
        .context("asking the worker")?;
    if ans.status != 200 {
        anyhow::bail!("{}", ans.detail());
    }
    ans.json().context("the worker's answer is not JSON")
}

fn path_of(template: &str, name: &str) -> anyhow::Result<String> {
    crate::knowledge::corpus::check_name(name)?;
    Ok(template.replace("{name}", name))
}

/// The tools' next step as a command.
fn for_a_person(text: &str, name: &str) -> String {
    text.replace(
        "Next: prime_corpus, then query_corpus.",
        &format!("Next: memd corpus prime {name}, then memd corpus query {name} \"…\"."),
    )
    .replace("(get_observations for the records)", "(memd show <id> for the records)")
    .replace(
        "(reprime_corpus loads the new contents.)",
        &format!("(memd corpus reprime {name} loads them.)"),
    )
}

pub fn run(env: &HashMap<String, String>, args: CorpusArgs) -> anyhow::Result<ExitCode> {
    let ctx = CliContext::load(env, None);
    let link = ctx.link();
    let (v, text) = match args.command {
        CorpusCommand::Build(b) => {
            let project = match b.project.as_deref() {
                Some("*") => None,
                Some(p) => Some(p.to_string()),
                None => ctx.identity().chain.last().cloned(),
            };
            let body = json!({"name": b.name, "description": b.description, "project": project, "types": b.types,
                "concepts": b.concepts, "files": b.files, "query": b.query, "date_start": b.date_start,
                "date_end": b.date_end, "limit": b.limit});
            let v = call(&link, "POST", paths::CORPORA, Some(&body))?;
            let text = for_a_person(&built_text(&v), &b.name);
            (v, text)
        }
        CorpusCommand::List => {
            let v = call(&link, "GET", paths::CORPORA, None)?;
            let rows: Vec<String> = v["corpora"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| {
                    let primed = if c["session_id"].is_string() { "primed" } else { "not primed" };
                    let s = &c["stats"];
                    format!(
                        "{}  {} observations  ~{} tokens  {primed}  {}",
                        c["name"].as_str().unwrap_or(""),
                        s["observation_count"].as_u64().unwrap_or(0),
                        s["token_estimate"].as_u64().unwrap_or(0),
                        crate::text::sink::inline(c["description"].as_str().unwrap_or("")),
                    )
                })
                .collect();
            let text = if rows.is_empty() {
                "No corpora yet (memd corpus build <name>).".to_string()
            } else {
                rows.join("\n")
            };
            (v, text)
        }
        CorpusCommand::Show { name, observations } => {
            let suffix = if observations { "?observations=true" } else { "" };
            let v = call(&link, "GET", &format!("{}{suffix}", path_of(paths::CORPUS, &name)?), None)?;
            let text = serde_json::to_string_pretty(&v)?;
            (v, text)
        }
        CorpusCommand::Rebuild { name } => {
            let v = call(&link, "POST", &path_of(paths::CORPUS_REBUILD, &name)?, None)?;
            let text = for_a_person(
                &format!("Rebuilt. {} (reprime_corpus loads the new contents.)", built_text(&v)),
                &name,
            );
            (v, text)
        }
        CorpusCommand::Prime { name } | CorpusCommand::Reprime { name } => {
            let v = call(&link, "POST", &path_of(paths::CORPUS_PRIME, &name)?, None)?;
            let text = format!(
                "Primed {name} (session {}).\n{}",
                v["session_id"].as_str().unwrap_or(""),
                crate::text::sink::inline(v["acknowledgement"].as_str().unwrap_or(""))
            );
            (v, text)
        }
        CorpusCommand::Query { name, question } => {
            let body = json!({"question": question.join(" ")});
            let v = call(&link, "POST", &path_of(paths::CORPUS_QUERY, &name)?, Some(&body))?;
            let text = for_a_person(&answer_text(&v), &name);
            (v, text)
        }
        CorpusCommand::Delete { name } => {
            let v = call(&link, "DELETE", &path_of(paths::CORPUS, &name)?, None)?;
            (v, format!("Deleted corpus {name}."))
        }
    };
    match args.json {
        true => say_json!(&v),
        false => say!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}
