//! Search execution (docs/spec/retrieval.md §4): per kind, records matching all terms first (bm25),
//! then the natural-mode fill (stopwords dropped, stems as prefixes, OR-ed); kinds interleave by
//! rank within a tier (no vectors yet); `orderBy` date re-sorts the matched set; paging last.

use std::collections::{HashMap, HashSet};

use rusqlite::Connection;

use super::RetrievalError;
use super::fusion::{Fusion, Near};
use super::ids::{RecordId, fetch_records};
use super::query::{ParsedQuery, natural, parse_query};
use super::raw_search::{merge_raw, raw_search};
use super::record_kind::Kind;
use super::search_sql::{CANDIDATES, COUNT_CAP, Candidate, Filters, MatchSpec, candidates, count, counts_while_ranking};
use super::search_types::Ranked;
pub use super::search_types::{Order, SearchRequest, SearchResult};

fn kind_index(k: Kind) -> usize {
    match k {
        Kind::Observation => 0,
        Kind::Summary => 1,
        Kind::Prompt => 2,
    }
}

/// The matches of one kind's tiers seen while fetching candidates, so the total often needs no
/// count query: a list shorter than its limit holds every match of its tier, and a list read up
/// to the count cap counts its tier.
#[derive(Default)]
struct Tally {
    ids: HashSet<i64>,
    /// Some tier's matches are not all in `ids`.
    partial: bool,
    /// Some tier alone has more matches than the cap.
    capped: bool,
}

impl Tally {
    /// The top `limit` candidates of a tier. Where ranking reads every match anyway (a joined or
    /// newest-first query), up to COUNT_CAP + 1 rows are read so the list counts the tier too.
    fn fetch(&mut self, conn: &Connection, k: Kind, m: &MatchSpec, f: &Filters, limit: usize) -> Result<Vec<Candidate>, RetrievalError> {
        let whole = counts_while_ranking(k, m, f);
        let mut hits = candidates(conn, k, m, f, if whole { COUNT_CAP + 1 } else { limit })?;
        if whole || hits.len() < limit {
            self.ids.extend(hits.iter().map(|c| c.id));
            self.capped |= hits.len() > COUNT_CAP;
        } else {
            self.partial = true;
        }
        hits.truncate(limit);
        Ok(hits)
    }

    /// The total (capped at COUNT_CAP + 1) when the lists tell it.
    fn total(&self) -> Option<usize> {
        if self.capped {
            Some(COUNT_CAP + 1)
        } else if self.partial {
            None
        } else {
            Some(self.ids.len().min(COUNT_CAP + 1))
        }
    }
}

/// Runs a keyword-only search on a read connection.
pub fn search(conn: &Connection, req: &SearchRequest) -> Result<SearchResult, RetrievalError> {
    search_with(conn, req, None, &Fusion::default())
}

/// Runs a search; `vector` (rows nearest to the query, best first, one entry per row) joins the
/// keyword lists by weighted reciprocal-rank fusion (spec §4.5, [`Fusion`]).
pub fn search_with(
    conn: &Connection,
    req: &SearchRequest,
    vector: Option<&[Near]>,
    fusion: &Fusion,
) -> Result<SearchResult, RetrievalError> {
    let phase = keyword_phase(conn, req)?;
    finish(conn, req, phase, vector, fusion)
}

/// The keyword half of a search: every kind's ranked candidates and totals. It needs nothing from
/// the vector half, so the route runs the two side by side and then calls [`finish`].
#[derive(Default)]
pub struct KeywordPhase {
    all: Vec<Ranked>,
    totals: [usize; 3],
    /// The query has no searchable term: the result is empty.
    nothing: bool,
    /// Observations a raw tool call matched, with that call's row id.
    calls: HashMap<RecordId, i64>,
}

/// Runs the keyword half of `req`.
pub fn keyword_phase(conn: &Connection, req: &SearchRequest) -> Result<KeywordPhase, RetrievalError> {
    let parsed: ParsedQuery = parse_query(&req.query);
    let filter_only = req.query.trim().is_empty();
    let mut totals = [0usize; 3];
    let mut all: Vec<Ranked> = Vec::new();
    if !filter_only && parsed.is_empty() {
        return Ok(KeywordPhase {
            nothing: true,
            ..KeywordPhase::default()
        });
    }
    let exact = MatchSpec {
        words: parsed.words_expr(),
        trigrams: parsed.trigram_expr(),
        likes: parsed.like_patterns(),
        groups: Vec::new(),
    };
    let nat = natural(&req.query);
    let fill = [
        MatchSpec {
            words: nat.words.clone(),
            groups: nat.groups.clone(),
            ..MatchSpec::default()
        },
        MatchSpec {
            trigrams: nat.trigrams,
            ..MatchSpec::default()
        },
    ];
    let fill: Vec<&MatchSpec> = if filter_only {
        Vec::new()
    } else {
        fill.iter().filter(|m| !m.is_empty()).collect()
    };
    let want = req.offset + req.limit;
    let mut calls = HashMap::new();
    // The raw search's rarest word, asked again when nothing matched.
    let mut rarest: Option<String> = None;
    for kind in req.effective_kinds() {
        let mut seen = HashSet::new();
        let mut push = |list: Vec<Candidate>, tier: u8, all: &mut Vec<Ranked>| {
            let mut rank = 0;
            for c in list {
                if seen.insert(c.id) {
                    rank += 1;
                    all.push(Ranked {
                        rid: RecordId { kind, id: c.id },
                        at_ms: c.at_ms,
                        tier,
                        rank,
                    });
                }
            }
        };
        let first_limit = if filter_only { want } else { CANDIDATES.max(want) };
        let mut tally = Tally::default();
        let exact_hits = tally.fetch(conn, kind, &exact, &req.filters, first_limit)?;
        // The fill only matters when this kind's AND tier cannot fill the page by itself; when it
        // can, the total counts the AND matches (a later page may then count fill rows too).
        let needs_fill = exact_hits.len() < want;
        push(exact_hits, 0, &mut all);
        let mut matches: Vec<&MatchSpec> = vec![&exact];
        if needs_fill {
            for (i, m) in fill.iter().enumerate() {
                let hits = tally.fetch(conn, kind, m, &req.filters, CANDIDATES.max(want))?;
                push(hits, 1 + i as u8, &mut all);
            }
            matches.extend(fill.iter().copied());
        }
        totals[kind_index(kind)] = match tally.total() {
            Some(n) => n,
            None => count(conn, kind, &matches, &req.filters)?,
        };
        if kind == Kind::Observation && !filter_only {
            let (raw, word) = raw_search(conn, &req.query, &req.filters, CANDIDATES.max(want))?;
            rarest = word;
            totals[0] = (totals[0] + merge_raw(&mut all, &raw)).min(COUNT_CAP + 1);
            calls.extend(raw.iter().map(|h| (RecordId { kind, id: h.id }, h.call)));
        }
    }
    // Nothing matched: the newest calls that hold the query's rarest word (issue 54: a word a
    // stored call holds is never answered with an empty list).
    if all.is_empty() && rarest.is_some() {
        let raw = super::raw_search::raw_fallback(conn, rarest.as_deref(), &req.filters, CANDIDATES.max(want))?;
        totals[0] = merge_raw(&mut all, &raw).min(COUNT_CAP + 1);
        calls.extend(raw.iter().map(|h| {
            (
                RecordId {
                    kind: Kind::Observation,
                    id: h.id,
                },
                h.call,
            )
        }));
    }
    Ok(KeywordPhase {
        all,
        totals,
        nothing: false,
        calls,
    })
}

/// The keyword-only order: kinds interleave by rank; at equal rank an observation comes before a
/// summary before a prompt, then the newer row (issue 15: newest-first put each session's summary,
/// which repeats every title of the session, above the observation that answers).
fn keyword_order(a: &Ranked, b: &Ranked) -> std::cmp::Ordering {
    (a.tier.min(1), a.rank, a.tier)
        .cmp(&(b.tier.min(1), b.rank, b.tier))
        .then(a.rid.kind.cmp(&b.rid.kind))
        .then(b.at_ms.cmp(&a.at_ms))
}

/// Fuses the keyword half with `vector` (when given), orders, pages and loads the records.
pub fn finish(
    conn: &Connection,
    req: &SearchRequest,
    phase: KeywordPhase,
    vector: Option<&[Near]>,
    fusion: &Fusion,
) -> Result<SearchResult, RetrievalError> {
    let filter_only = req.query.trim().is_empty();
    let order = req.order.unwrap_or(if filter_only { Order::DateDesc } else { Order::Relevance });
    let KeywordPhase {
        mut all,
        mut totals,
        nothing,
        calls,
    } = phase;
    if nothing {
        return Ok(SearchResult {
            records: Vec::new(),
            totals,
            order,
            filter_only,
            similarity: Vec::new(),
            matched_calls: Vec::new(),
        });
    }
    let keyword_first = all.iter().min_by(|a, b| keyword_order(a, b)).map(|r| r.rid);
    let fused = match vector {
        Some(v) if !filter_only && !v.is_empty() => Some((super::fusion::fuse(conn, req, &mut all, &mut totals, v, fusion)?, v)),
        _ => None,
    };
    match (order, fused) {
        (Order::Relevance, Some((scores, v))) => super::fusion::sort(&mut all, &scores, keyword_first, v, fusion),
        (Order::Relevance, None) => all.sort_by(keyword_order),
        (Order::DateDesc, _) => all.sort_by(|a, b| {
            b.at_ms
                .cmp(&a.at_ms)
                .then(a.rid.kind.cmp(&b.rid.kind))
                .then(b.rid.id.cmp(&a.rid.id))
        }),
        (Order::DateAsc, _) => all.sort_by(|a, b| {
            a.at_ms
                .cmp(&b.at_ms)
                .then(a.rid.kind.cmp(&b.rid.kind))
                .then(a.rid.id.cmp(&b.rid.id))
        }),
    }
    if order == Order::Relevance {
        demote_outdated(conn, &mut all)?;
    }
    let page: Vec<RecordId> = all.iter().skip(req.offset).take(req.limit).map(|r| r.rid).collect();
    let mut found = fetch_records(conn, &page, &super::scope::Scope::default())?;
    let near = |rid: &RecordId| vector.and_then(|v| v.iter().find(|n| n.rid == *rid)).map(|n| n.similarity);
    let (records, rest): (Vec<_>, Vec<_>) = page
        .iter()
        .filter_map(|rid| found.remove(rid).map(|r| (r, (near(rid), calls.get(rid).copied()))))
        .unzip();
    let (similarity, matched_calls) = rest.into_iter().unzip();
    Ok(SearchResult {
        records,
        totals,
        order,
        filter_only,
        similarity,
        matched_calls,
    })
}

/// Stale and superseded observations go below every current result, in their order (issue 38).
fn demote_outdated(conn: &Connection, all: &mut Vec<Ranked>) -> Result<(), RetrievalError> {
    let ids: Vec<i64> = all.iter().filter(|r| r.rid.kind == Kind::Observation).map(|r| r.rid.id).collect();
    if ids.is_empty() {
        return Ok(());
    }
    let mut outdated = HashSet::new();
    for chunk in ids.chunks(500) {
        let sql = format!(
            "SELECT id FROM observations WHERE id IN ({}) AND (stale_commit IS NOT NULL OR superseded_by IS NOT NULL)",
            super::scope::placeholders(chunk.len())
        );
        let mut stmt = conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(rusqlite::params_from_iter(chunk.iter()), |r| r.get::<_, i64>(0))?;
        for id in rows {
            outdated.insert(id?);
        }
    }
    if !outdated.is_empty() {
        let is_old = |r: &Ranked| r.rid.kind == Kind::Observation && outdated.contains(&r.rid.id);
        let (current, old): (Vec<Ranked>, Vec<Ranked>) = all.drain(..).partition(|r| !is_old(r));
        all.extend(current);
        all.extend(old);
    }
    Ok(())
}

#[cfg(test)]
mod tests;
