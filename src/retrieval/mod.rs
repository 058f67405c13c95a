//! Retrieval: how stored memories reach the agent (docs/spec/retrieval.md). Every surface is one
//! function over a read-only `&Connection`, used alike by the HTTP routes, the MCP server and the
//! CLI. Reads never write.
//!
//! | file | concern |
//! |---|---|
//! | [`zone`] | time zones and the time formats of every text |
//! | [`render`] | shared rendering: titles, tokens, separators, day groups with ditto marks |
//! | [`records`] | observation / summary / prompt rows, read tokens, JSON rows |
//! | [`record_kind`] | record kinds and mixed-kind records |
//! | [`scope`] | project chain × platform as SQL conditions |
//! | [`ids`] | id forms (`412`, `#412`, `S12`, `P7`) and fetching records by id |
//! | [`reinforce`] | ACT-R ranking of context candidates |
//! | [`context`], [`context_render`] | SessionStart context injection (§1) |
//! | [`semantic`] | UserPromptSubmit related-work text (§2, keyword only for now) |
//! | [`file_context`] | observations of a file being read (§3) |
//! | [`words`] | stopwords and the light English stemmer |
//! | [`query`] | user query parsing and FTS5 expression building (§4.2–§4.4) |
//! | [`search_sql`] | per-kind keyword candidate queries with filters |
//! | [`search_prune`] | exact pruning of a natural-mode ranking: only rows matching two words, when a bound proves it |
//! | [`fusion`] | hybrid ranking: keyword and vector lists fused by RRF (k = 60) |
//! | [`search_types`] | the request, result page and ranked-match types of a search |
//! | [`search`] | search execution: AND tier, natural fill, paging, totals |
//! | [`search_render`] | the text index and JSON answer of a search (§4.6) |
//! | [`timeline`] | items around an anchor (§5) |
//! | [`vector_rows`] | the vector half of hybrid search: nearest rows of a query in scope, in rank order |
//! | [`overview`] | project list and database figures |
//! | [`feed`] | the live feed of `/stream`: rows stored after a per-table cursor |
//! | [`browse`] | the viewer's lists: sessions, one session in order, observation pages, tool uses, token usage per day |
//! | [`params`] | query-string pairs: aliases, ranged numbers, flags, lists, times |
//! | [`requests`] | search and timeline requests from those pairs; the timeline's text answer |

pub mod browse;
pub mod browse_rows;
pub mod context;
pub mod context_render;
pub mod feed;
pub mod file_context;
pub mod fusion;
pub mod graph_expand;
pub mod ids;
pub mod overview;
pub mod params;
pub mod query;
pub mod raw_search;
pub mod record_kind;
pub mod record_request;
pub mod records;
pub mod reinforce;
pub mod related;
pub mod render;
pub mod requests;
pub mod scope;
pub mod search;
pub mod search_prune;
pub mod search_render;
pub mod search_sql;
pub mod search_types;
pub mod semantic;
pub mod stats;
pub mod timeline;
pub mod vector_rows;
pub mod zone;

pub use context::{ContextRequest, context_inject};
pub use context_render::{RenderedContext, WELCOME};
pub use file_context::{FileContextRequest, file_context, observations_by_file};
pub use ids::{RecordId, fetch_records, parse_id, parse_ids};
pub use query::{ParsedQuery, Term, parse_query};
pub use record_kind::{Kind, Record};
pub use records::{Observation, Prompt, Summary};
pub use scope::Scope;
pub use search::{KeywordPhase, Order, SearchRequest, SearchResult, finish, keyword_phase, search, search_with};
pub use timeline::{Anchor, TimelineRequest, TimelineResult, timeline};
pub use zone::Zone;

/// A read on the embedded store's pool whose own errors are retrieval's (what every area trait's
/// SQLite implementation of a read runs).
pub fn read_on<T, F>(store: &crate::store::Store, f: F) -> crate::store::Op<'_, T, RetrievalError>
where
    T: Send + 'static,
    F: FnOnce(&rusqlite::Connection) -> Result<T, RetrievalError> + Send + 'static,
{
    Box::pin(async move { store.read(move |c| Ok(f(c))).await? })
}

#[derive(Debug, thiserror::Error)]
pub enum RetrievalError {
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The store could not run the read (closed, a task that died).
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    /// A request value out of range or malformed (HTTP 400, MCP −32602).
    #[error("{0}")]
    Invalid(String),
    /// The anchor or record is not in scope (HTTP 404).
    #[error("{0}")]
    NotFound(String),
}
