//! `store_batch`: observations (with dedup and reinforcement), summary, provenance, token usage and
//! the deletion of the batch's pending rows, all in one transaction (docs/spec/pipeline.md §14–§15).

use rusqlite::{Connection, OptionalExtension, params};

use super::StoreError;
use super::observation_record::{ObservationRecord, json_array};
use crate::clock::{day, iso};
use crate::observer::types::SummaryDraft;
pub use crate::observer::types::{BatchMeta, BatchOutput, UsageDelta};
use crate::pipeline::hash::content_hash;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct StoredBatch {
    pub observation_ids: Vec<i64>,
    pub reinforced: usize,
    pub summary_id: Option<i64>,
    /// The session was `completing` and this batch emptied its queue.
    pub session_completed: bool,
}

const MAX_REINFORCEMENT_DATES: usize = 10;

pub fn store_batch(conn: &Connection, meta: &BatchMeta, out: &BatchOutput, now: i64) -> Result<StoredBatch, StoreError> {
    let mut stored = StoredBatch::default();
    let n = out.observations.len().max(1) as i64;
    let tokens = out.input_tokens + out.output_tokens;
    let prompt = (meta.prompt_number > 0).then_some(meta.prompt_number);
    for (i, o) in out.observations.iter().enumerate() {
        let share = tokens / n + if i == 0 { tokens % n } else { 0 };
        let hash = content_hash(&meta.memory_session_id, o.title.as_deref(), o.narrative.as_deref());
        let tomb: Option<i64> = conn
            .query_row(
                "SELECT 1 FROM tombstones WHERE memory_session_id = ?1 AND content_hash = ?2",
                params![meta.memory_session_id, hash],
                |r| r.get(0),
            )
            .optional()?;
        if tomb.is_some() {
            continue;
        }
        let record = ObservationRecord {
            title: o.title.clone(),
            subtitle: o.subtitle.clone(),
            narrative: o.narrative.clone(),
            facts: json_array(&o.facts),
            concepts: json_array(&o.concepts),
            files_read: json_array(&o.files_read),
            files_modified: json_array(&o.files_modified),
            prompt_number: prompt,
            discovery_tokens: share,
            content_hash: hash.clone(),
            generated_by_model: Some(out.model.clone()),
            agent_id: meta.agent_id.clone(),
            agent_type: meta.agent_type.clone(),
            ..ObservationRecord::new(
                &meta.memory_session_id,
                &meta.project,
                &meta.platform_source,
                &o.obs_type,
                out.origin,
            )
            .created(meta.oldest_epoch)
        };
        let inserted = record.insert(conn)?;
        let id = match inserted {
            Some(id) => {
                // A new claim may replace or contradict an older live one (issue 38).
                super::supersession::apply_rules(conn, id, now)?;
                id
            }
            None => {
                stored.reinforced += 1;
                reinforce(conn, &meta.memory_session_id, &hash, now)?
            }
        };
        for row in &out.source_rows {
            conn.execute(
                "INSERT OR IGNORE INTO observation_sources(observation_id, tool_use_row_id) SELECT ?1, id FROM tool_uses WHERE id = ?2",
                params![id, row],
            )?;
        }
        if !stored.observation_ids.contains(&id) {
            stored.observation_ids.push(id);
        }
    }
    if let Some(s) = &out.summary {
        stored.summary_id = Some(upsert_summary(conn, meta, out, s, prompt, tokens, now)?);
    }
    // The batch's calls become searchable with the observations made from them (issue 35),
    // through the queue: indexing waits while ingest is busy.
    if !stored.observation_ids.is_empty() {
        for row in &out.source_rows {
            super::raw_index::enqueue(conn, *row)?;
        }
        // The graph of what the calls show, with these observations as its evidence (issue 41).
        if super::graph::enabled() {
            let proposals: Vec<String> = out.observations.iter().flat_map(|o| o.relations.iter().cloned()).collect();
            let b = super::graph::GraphBatch {
                project: &meta.project,
                project_root: Some(meta.project_root.as_str()),
                session_db_id: meta.session_db_id,
                source_rows: &out.source_rows,
                observation_ids: &stored.observation_ids,
                proposals: &proposals,
            };
            super::graph::record_batch(conn, &b, now)?;
        }
    }
    conn.execute(
        "INSERT INTO token_usage(day, provider, model, calls, input_tokens, output_tokens, budget_tokens) VALUES (?1, ?2, ?3, 1, ?4, ?5, ?6)
         ON CONFLICT(day, provider, model) DO UPDATE SET calls = calls + 1, input_tokens = input_tokens + ?4,
           output_tokens = output_tokens + ?5, budget_tokens = budget_tokens + ?6",
        params![day(now), out.provider, out.model, out.input_tokens, out.output_tokens, if out.origin == "extractive" { 0 } else { tokens }],
    )?;
    for id in &meta.pending_ids {
        conn.execute("DELETE FROM pending_messages WHERE id = ?1", [id])?;
    }
    stored.session_completed = complete_if_drained(conn, meta.session_db_id, now)?;
    Ok(stored)
}

pub fn record_usage(conn: &Connection, d: &UsageDelta, now: i64) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO token_usage(day, provider, model, calls, failures, reasks, input_tokens, output_tokens, budget_tokens)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?7 + ?8)
         ON CONFLICT(day, provider, model) DO UPDATE SET calls = calls + ?4, failures = failures + ?5, reasks = reasks + ?6,
           input_tokens = input_tokens + ?7, output_tokens = output_tokens + ?8, budget_tokens = budget_tokens + ?7 + ?8",
        params![
            day(now),
            d.provider,
            d.model,
            d.calls,
            d.failures,
            d.reasks,
            d.input_tokens,
            d.output_tokens
        ],
    )?;
    Ok(())
}

/// Budget tokens spent today by the observer providers (docs/spec/storage.md `token_usage`: not
/// `extractive`, not the local `embeddings`).
pub fn tokens_today(conn: &Connection, now: i64) -> Result<i64, StoreError> {
    Ok(conn.query_row(
        "SELECT coalesce(sum(budget_tokens), 0) FROM token_usage WHERE day = ?1 AND provider NOT IN ('extractive', 'embeddings')",
        [day(now)],
        |r| r.get(0),
    )?)
}

/// A `completing` session whose queue is now empty becomes `completed`.
pub fn complete_if_drained(conn: &Connection, session_db_id: i64, now: i64) -> Result<bool, StoreError> {
    let changed = conn.execute(
        "UPDATE sdk_sessions SET status = 'completed', completed_at = ?2, completed_at_epoch = ?3
         WHERE id = ?1 AND status = 'completing'
           AND NOT EXISTS (SELECT 1 FROM pending_messages WHERE session_db_id = ?1 AND status != 'failed')",
        params![session_db_id, iso(now), now],
    )?;
    Ok(changed > 0)
}

fn reinforce(conn: &Connection, msid: &str, hash: &str, now: i64) -> Result<i64, StoreError> {
    let (id, dates): (i64, String) = conn.query_row(
        "SELECT id, reinforcement_dates FROM observations WHERE memory_session_id = ?1 AND content_hash = ?2",
        params![msid, hash],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let dates = add_reinforcement_date(&dates, &day(now));
    conn.execute(
        "UPDATE observations SET occurrence_count = occurrence_count + 1, last_reinforced_epoch = ?2, reinforcement_dates = ?3 WHERE id = ?1",
        params![id, now, dates],
    )?;
    Ok(id)
}

/// Appends `today` unless present, keeping the newest [`MAX_REINFORCEMENT_DATES`], ascending.
pub fn add_reinforcement_date(existing: &str, today: &str) -> String {
    let mut dates: Vec<String> = serde_json::from_str(existing).unwrap_or_default();
    if !dates.iter().any(|d| d == today) {
        dates.push(today.to_string());
    }
    dates.sort();
    let skip = dates.len().saturating_sub(MAX_REINFORCEMENT_DATES);
    json_array(&dates[skip..])
}

fn upsert_summary(
    conn: &Connection,
    meta: &BatchMeta,
    out: &BatchOutput,
    s: &SummaryDraft,
    prompt: Option<i64>,
    tokens: i64,
    now: i64,
) -> Result<i64, StoreError> {
    let (read, edited) = prompt_files(conn, &meta.memory_session_id, prompt)?;
    let id: i64 = conn.query_row(
        "INSERT INTO session_summaries(memory_session_id, project, platform_source, request, investigated, learned, completed, next_steps, notes,
           files_read, files_edited, prompt_number, discovery_tokens, origin, generated_by_model, created_at, created_at_epoch)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)
         ON CONFLICT(memory_session_id, prompt_number) DO UPDATE SET request = excluded.request, investigated = excluded.investigated,
           learned = excluded.learned, completed = excluded.completed, next_steps = excluded.next_steps, notes = excluded.notes,
           files_read = excluded.files_read, files_edited = excluded.files_edited, discovery_tokens = excluded.discovery_tokens,
           generated_by_model = excluded.generated_by_model, created_at = excluded.created_at, created_at_epoch = excluded.created_at_epoch
         RETURNING id",
        params![
            meta.memory_session_id,
            meta.project,
            meta.platform_source,
            s.request,
            s.investigated,
            s.learned,
            s.completed,
            s.next_steps,
            s.notes,
            read,
            edited,
            prompt,
            tokens,
            out.origin,
            out.model,
            iso(now),
            now
        ],
        |r| r.get(0),
    )?;
    super::quarantine::screen_summary(conn, id)?;
    Ok(id)
}

/// Union of `files_read` / `files_modified` over the prompt's observations, first-seen order.
fn prompt_files(conn: &Connection, msid: &str, prompt: Option<i64>) -> Result<(String, String), StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT files_read, files_modified FROM observations WHERE memory_session_id = ?1 AND prompt_number IS ?2 ORDER BY id",
    )?;
    let mut read: Vec<String> = Vec::new();
    let mut edited: Vec<String> = Vec::new();
    let rows = stmt.query_map(params![msid, prompt], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
    for row in rows {
        let (r, m) = row?;
        for (src, dst) in [(r, &mut read), (m, &mut edited)] {
            for f in serde_json::from_str::<Vec<String>>(&src).unwrap_or_default() {
                if !dst.contains(&f) {
                    dst.push(f);
                }
            }
        }
    }
    Ok((json_array(&read), json_array(&edited)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observer::types::ObservationDraft;
    use crate::store::sessions::{SessionKey, SessionSeed, touch};

    const DAY: i64 = 86_400_000;
    const AUG_18: i64 = 1_787_011_200_000; // 2026-08-18T00:00:00Z

    fn meta(conn: &Connection) -> BatchMeta {
        let seed = SessionSeed {
            key: SessionKey::new("claude", "s1"),
            project: "p".into(),
            project_root: None,
            transcript_path: None,
            custom_title: None,
        };
        let s = touch(conn, &seed, AUG_18).unwrap();
        BatchMeta::first_prompt((s.id, &s.memory_session_id, "s1"), "p", "/r", AUG_18)
    }

    fn output(title: &str) -> BatchOutput {
        let o = ObservationDraft {
            obs_type: "discovery".into(),
            title: Some(title.into()),
            narrative: Some("n".into()),
            ..Default::default()
        };
        BatchOutput::extractive(vec![o], None, vec![])
    }

    #[test]
    fn d1_duplicates_reinforce_one_row_once_per_day() {
        let conn = crate::store::test_conn();
        let m = meta(&conn);
        let first = store_batch(&conn, &m, &output("Fix login"), AUG_18).unwrap();
        store_batch(&conn, &m, &output("Fix login"), AUG_18 + DAY).unwrap();
        let third = store_batch(&conn, &m, &output("Fix login"), AUG_18 + DAY + 1000).unwrap();
        assert_eq!(first.observation_ids, third.observation_ids);
        assert_eq!(third.reinforced, 1);
        let (count, dates, n): (i64, String, i64) = conn
            .query_row(
                "SELECT occurrence_count, reinforcement_dates, (SELECT count(*) FROM observations) FROM observations",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        assert_eq!((count, dates.as_str(), n), (3, r#"["2026-08-19"]"#, 1));
    }

    #[test]
    fn m3_a_forgotten_observation_is_not_stored_again() {
        let conn = crate::store::test_conn();
        let m = meta(&conn);
        let id = store_batch(&conn, &m, &output("Secret plan"), AUG_18).unwrap().observation_ids[0];
        let hash = content_hash(&m.memory_session_id, Some("Secret plan"), Some("n"));
        conn.execute(
            "INSERT INTO tombstones(memory_session_id, content_hash, observation_id, deleted_at_epoch) VALUES (?1, ?2, ?3, 0)",
            params![m.memory_session_id, hash, id],
        )
        .unwrap();
        conn.execute("DELETE FROM observations WHERE id = ?1", [id]).unwrap();
        let again = store_batch(&conn, &m, &output("Secret plan"), AUG_18 + DAY).unwrap();
        assert!(again.observation_ids.is_empty());
        assert_eq!(
            conn.query_row("SELECT count(*) FROM observations", [], |r| r.get::<_, i64>(0))
                .unwrap(),
            0
        );
        // The FTS index forgot it too (external-content delete trigger).
        let hits: i64 = conn
            .query_row(
                "SELECT count(*) FROM observations_fts WHERE observations_fts MATCH 'secret'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(hits, 0);
    }

    #[test]
    fn reinforcement_dates_are_distinct_and_capped() {
        assert_eq!(add_reinforcement_date("[]", "2026-08-19"), r#"["2026-08-19"]"#);
        assert_eq!(add_reinforcement_date(r#"["2026-08-19"]"#, "2026-08-19"), r#"["2026-08-19"]"#);
        let mut d = "[]".to_string();
        for i in 1..=12 {
            d = add_reinforcement_date(&d, &format!("2026-09-{i:02}"));
        }
        let v: Vec<String> = serde_json::from_str(&d).unwrap();
        assert_eq!(v.len(), 10);
        assert_eq!(v[0], "2026-09-03");
    }

    #[test]
    fn the_daily_budget_leaves_out_local_embeddings() {
        let conn = crate::store::test_conn();
        let usage = |provider: &str, tokens: i64| UsageDelta {
            provider: provider.into(),
            model: "m".into(),
            calls: 1,
            input_tokens: tokens,
            ..UsageDelta::default()
        };
        record_usage(&conn, &usage("anthropic", 700), AUG_18).unwrap();
        record_usage(&conn, &usage("embeddings", 5_000), AUG_18).unwrap();
        assert_eq!(tokens_today(&conn, AUG_18).unwrap(), 700);
    }
}
