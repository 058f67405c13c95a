//! The types of a search: the validated request, its result page, and a ranked match — shared by
//! the search execution (`search`) and the hybrid fusion (`fusion`).

use super::ids::RecordId;
use super::record_kind::{Kind, Record};
use super::scope::Scope;
use super::search_sql::Filters;

/// Result order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    Relevance,
    DateDesc,
    DateAsc,
}

impl Order {
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim() {
            "relevance" => Some(Order::Relevance),
            "date_desc" => Some(Order::DateDesc),
            "date_asc" => Some(Order::DateAsc),
            _ => None,
        }
    }
    /// `by relevance`, `newest first`, `oldest first`.
    pub fn describe(self) -> &'static str {
        match self {
            Order::Relevance => "by relevance",
            Order::DateDesc => "newest first",
            Order::DateAsc => "oldest first",
        }
    }
}

/// A search request (docs/spec/retrieval.md §4.1), already validated.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchRequest {
    /// The query text (empty → filter-only listing).
    pub query: String,
    /// Kinds searched (observation filters imply observations only; files exclude prompts).
    pub kinds: Vec<Kind>,
    pub filters: Filters,
    pub limit: usize,
    pub offset: usize,
    /// None → relevance with a query, else newest first.
    pub order: Option<Order>,
}

impl SearchRequest {
    /// A query over every kind in `scope`: the first 20 results, default order.
    pub fn new(query: &str, scope: Scope) -> Self {
        Self {
            query: query.into(),
            kinds: vec![Kind::Observation, Kind::Summary, Kind::Prompt],
            filters: Filters {
                scope,
                ..Filters::default()
            },
            limit: 20,
            offset: 0,
            order: None,
        }
    }

    /// Kinds left after the filters that exclude some (§4.1).
    pub fn effective_kinds(&self) -> Vec<Kind> {
        let f = &self.filters;
        self.kinds
            .iter()
            .copied()
            .filter(|k| *k == Kind::Observation || (f.obs_types.is_empty() && f.concepts.is_empty()))
            .filter(|k| *k != Kind::Prompt || f.files.is_empty())
            .collect()
    }
}

/// One page of results.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchResult {
    pub records: Vec<Record>,
    /// Matches per kind (each capped at 10,001).
    pub totals: [usize; 3],
    pub order: Order,
    pub filter_only: bool,
    /// Each record's cosine similarity to the query, when the vector half found it (same order as
    /// `records`).
    pub similarity: Vec<Option<f32>>,
    /// For a record a raw tool call matched (issue 35), that call's row id (same order as `records`).
    pub matched_calls: Vec<Option<i64>>,
}

impl SearchResult {
    pub fn total(&self) -> usize {
        self.totals.iter().sum()
    }
}

/// A matched row: its keyword tier (0 = all terms, 1.. = natural fill) and rank within the tier.
pub(crate) struct Ranked {
    pub rid: RecordId,
    pub at_ms: i64,
    pub tier: u8,
    pub rank: usize,
}
