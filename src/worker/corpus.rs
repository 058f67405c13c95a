//! Corpora's use-cases (issue 41, `docs/spec/corpus.md`), called by the routes, the MCP tools
//! (through the routes) and the CLI alike: build (the search use-case over the filter, then the
//! trust rules of injection: no quarantined or superseded observation, every text redacted again),
//! rebuild, prime, reprime and query through the provider actor (budget, breakers, call cap, token
//! accounting), list, show and delete.

use std::time::Duration;

use ractor::rpc::CallResult;

use super::Services;
use super::search::{Halves, search};
use crate::actors::provider::ProviderMsg;
use crate::actors::provider_conversation::{Conversation, Refused};
use crate::clock::iso;
use crate::knowledge::KnowledgeError;
use crate::knowledge::agent::{prime_request, query_request, remember};
use crate::knowledge::corpus::{BuildRequest, CorpusFile, CorpusObservation, Excluded, stats_of};
use crate::knowledge::files::{CorpusFiles, KeptConversation};
use crate::knowledge::render::{Citations, citations, system_prompt, token_estimate};
use crate::providers::{LlmReply, LlmRequest};
use crate::retrieval::params::Params;
use crate::retrieval::scope::parse_chain;
use crate::retrieval::search::SearchRequest;
use crate::retrieval::search_sql::Filters;
use crate::retrieval::{Kind, Record, RetrievalError, Scope, Zone};
use crate::store::observation_record::json_list;

/// The longest a turn may wait for a call slot and its answer.
const TURN_TIMEOUT: Duration = Duration::from_secs(900);

#[derive(Debug, thiserror::Error)]
pub enum CorpusError {
    #[error(transparent)]
    Knowledge(#[from] KnowledgeError),
    #[error("search failed: {0}")]
    Search(#[from] RetrievalError),
    #[error(transparent)]
    Refused(#[from] Refused),
    #[error("the provider is not running; try again in a moment")]
    NoProvider,
    #[error("the provider answered without a session id; cannot keep the conversation")]
    NoSession,
}

/// A query's answer and what memd checked of it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Answer {
    pub answer: String,
    pub session_id: String,
    #[serde(flatten)]
    pub citations: Citations,
    /// The answer cites an id that is not in the corpus.
    pub flagged: bool,
    /// The session was (re)primed to answer: not primed before, or its session was lost.
    pub primed: bool,
    pub usage: Usage,
}

#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Usage {
    pub input_tokens: i64,
    pub cached_input_tokens: i64,
    pub output_tokens: i64,
}

impl From<&LlmReply> for Usage {
    fn from(r: &LlmReply) -> Self {
        Self {
            input_tokens: r.input_tokens,
            cached_input_tokens: r.cached_input_tokens,
            output_tokens: r.output_tokens,
        }
    }
}

pub fn files(svc: &Services) -> CorpusFiles {
    CorpusFiles::new(svc.settings.get().data_dir.clone())
}

/// Builds (or rebuilds, keeping `created_at`) a corpus and writes its file.
pub async fn build(svc: &Services, req: BuildRequest, now: i64) -> Result<CorpusFile, CorpusError> {
    let known = svc.mode.type_ids();
    if let Some(t) = req.filter.types.iter().find(|t| !known.contains(&t.as_str())) {
        let msg = format!("unknown observation type {t:?}; known: {}", known.join(", "));
        return Err(KnowledgeError::BadRequest(msg).into());
    }
    let search_req = search_request(&req)?;
    let found = search(svc, &search_req, Halves::HYBRID).await?.result;
    let redactor = svc.ingest.pipeline.privacy.redactor();
    let (mut observations, mut excluded) = (Vec::new(), Excluded::default());
    for r in found.records {
        let Record::Observation(o) = r else { continue };
        if o.quarantined {
            excluded.quarantined += 1;
        } else if o.superseded_by.is_some() {
            excluded.superseded += 1;
        } else {
            observations.push(corpus_observation(&o, &|s: &str| redactor.redact(s).0));
        }
    }
    observations.sort_by_key(|o| (o.created_at_epoch, o.id));
    let files = files(svc);
    let created_at = files
        .read(&req.name)
        .ok()
        .flatten()
        .map(|c| c.created_at)
        .unwrap_or_else(|| iso(now));
    let mut c = CorpusFile {
        version: 1,
        name: req.name,
        description: req.description,
        created_at,
        updated_at: iso(now),
        filter: req.filter,
        stats: stats_of(&observations),
        excluded,
        observations,
        ..Default::default()
    };
    c.system_prompt = system_prompt(&c);
    c.stats.token_estimate = token_estimate(&c);
    files.forget_conversation(&c.name)?;
    files.write(&c)?;
    tracing::info!(corpus = %c.name, observations = c.stats.observation_count, tokens = c.stats.token_estimate, "corpus built");
    Ok(c)
}

/// Re-runs a corpus's stored filter; the session is kept apart (reprime to load the new one).
pub async fn rebuild(svc: &Services, name: &str, now: i64) -> Result<CorpusFile, CorpusError> {
    let old = files(svc).get(name)?;
    let req = BuildRequest {
        name: old.name,
        description: old.description,
        filter: old.filter,
    };
    build(svc, req, now).await
}

fn search_request(req: &BuildRequest) -> Result<SearchRequest, CorpusError> {
    let f = &req.filter;
    let dates: Vec<(String, String)> = [("date_start", &f.date_start), ("date_end", &f.date_end)]
        .into_iter()
        .filter_map(|(k, v)| Some((k.to_string(), v.clone()?)))
        .collect();
    let p = Params(dates);
    let bad = |e: RetrievalError| CorpusError::Knowledge(KnowledgeError::BadRequest(e.to_string()));
    Ok(SearchRequest {
        query: f.query.clone().unwrap_or_default(),
        kinds: vec![Kind::Observation],
        filters: Filters {
            scope: Scope::new(parse_chain(f.project.as_deref()), None),
            obs_types: f.types.clone(),
            concepts: f.concepts.clone(),
            files: f.files.clone(),
            date_start: p.time(&["date_start"], &Zone::Local, false).map_err(bad)?,
            date_end: p.time(&["date_end"], &Zone::Local, true).map_err(bad)?,
            provenance: Vec::new(),
            origin: None,
        },
        limit: f.effective_limit() as usize,
        offset: 0,
        order: None,
    })
}

fn corpus_observation(o: &crate::retrieval::records::Observation, clean: &dyn Fn(&str) -> String) -> CorpusObservation {
    let opt = |s: &Option<String>| s.as_deref().filter(|s| !s.is_empty()).map(clean);
    let list = |s: &str| json_list(s).iter().map(|x| clean(x)).collect();
    CorpusObservation {
        id: o.id,
        obs_type: o.obs_type.clone(),
        title: clean(o.title.as_deref().unwrap_or("")),
        subtitle: opt(&o.subtitle),
        narrative: opt(&o.narrative),
        facts: list(&o.facts),
        concepts: list(&o.concepts),
        files_read: list(&o.files_read),
        files_modified: list(&o.files_modified),
        project: o.project.clone(),
        created_at: o.created_at.clone(),
        created_at_epoch: o.created_at_epoch,
        provenance: o.provenance.clone(),
        stale: o.stale_commit.is_some(),
    }
}

/// One turn through the provider actor.
async fn converse(svc: &Services, request: LlmRequest, resume: Option<String>) -> Result<LlmReply, CorpusError> {
    let provider = svc.handles.provider().ok_or(CorpusError::NoProvider)?;
    let sent = provider.call(
        |reply| ProviderMsg::Converse(Box::new(Conversation { request, resume, reply })),
        Some(TURN_TIMEOUT),
    );
    match sent.await {
        Ok(CallResult::Success(r)) => Ok(r?),
        _ => Err(CorpusError::NoProvider),
    }
}

/// The provider's name and whether it keeps conversations itself.
async fn provider_kind(svc: &Services) -> Result<(String, bool), CorpusError> {
    let provider = svc.handles.provider().ok_or(CorpusError::NoProvider)?;
    match provider.call(ProviderMsg::Status, Some(Duration::from_secs(10))).await {
        Ok(CallResult::Success(s)) => {
            let keeps = s.name == "claude-cli";
            Ok((s.name, keeps))
        }
        _ => Err(CorpusError::NoProvider),
    }
}

/// A fresh session loaded with the corpus; returns the corpus as written and the prime's reply.
pub async fn prime(svc: &Services, name: &str) -> Result<(CorpusFile, LlmReply), CorpusError> {
    let files = files(svc);
    let mut c = files.get(name)?;
    let (provider, keeps) = provider_kind(svc).await?;
    let request = prime_request(&c, keeps);
    let first_turn = request.turns[0].text.clone();
    let reply = converse(svc, request, None).await?;
    let session_id = match keeps {
        true => reply.session_id.clone().ok_or(CorpusError::NoSession)?,
        false => format!("memd-{}", crate::store::random_id()),
    };
    files.forget_conversation(name)?;
    if !keeps {
        let kept = KeptConversation {
            session_id: session_id.clone(),
            provider: provider.clone(),
            turns: vec![("user".into(), first_turn), ("assistant".into(), reply.text.clone())],
        };
        files.keep_conversation(name, &kept)?;
    }
    c.session_id = Some(session_id);
    c.session_provider = Some(provider);
    files.write(&c)?;
    Ok((c, reply))
}

/// Asks a corpus's session; primes it first when it has none (or one of another provider), and
/// re-primes once when the session cannot be resumed.
pub async fn query(svc: &Services, name: &str, question: &str) -> Result<Answer, CorpusError> {
    let question = question.trim();
    if question.is_empty() {
        return Err(KnowledgeError::BadRequest("question is required".into()).into());
    }
    let files = files(svc);
    let mut c = files.get(name)?;
    let (provider, keeps) = provider_kind(svc).await?;
    let mut primed = false;
    if c.session_id.is_none() || c.session_provider.as_deref() != Some(provider.as_str()) {
        c = prime(svc, name).await?.0;
        primed = true;
    }
    loop {
        let session = c.session_id.clone().unwrap_or_default();
        let kept = match keeps {
            true => None,
            false => files.conversation(name)?.filter(|k| k.session_id == session),
        };
        let lost = !keeps && kept.is_none();
        let result = match lost {
            true => None,
            false => Some(
                converse(
                    svc,
                    query_request(&c, kept.as_ref(), question, keeps),
                    keeps.then_some(session.clone()),
                )
                .await,
            ),
        };
        match result {
            Some(Ok(reply)) => {
                let session_id = reply.session_id.clone().filter(|_| keeps).unwrap_or(session);
                if let Some(mut k) = kept {
                    remember(&mut k, question, &reply.text);
                    files.keep_conversation(name, &k)?;
                }
                if c.session_id.as_deref() != Some(session_id.as_str()) {
                    c.session_id = Some(session_id.clone());
                    files.write(&c)?;
                }
                let cited = citations(&reply.text, &c);
                return Ok(Answer {
                    flagged: !cited.outside_corpus.is_empty(),
                    citations: cited,
                    answer: reply.text.clone(),
                    session_id,
                    primed,
                    usage: Usage::from(&reply),
                });
            }
            Some(Err(CorpusError::Refused(Refused::Failed(e)))) if e.is_lost_session() && !primed => {}
            Some(Err(e)) => return Err(e),
            None if !primed => {}
            None => return Err(CorpusError::NoSession),
        }
        tracing::info!(corpus = %name, "knowledge session lost; priming again once");
        c = prime(svc, name).await?.0;
        primed = true;
    }
}
