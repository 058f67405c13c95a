//! Builds a claude-mem database (schema of docs/spec/storage.md §7: current columns, or the old
//! `claude_session_id` / `sdk_session_id` variant) for import tests and the import benchmark.
#![allow(dead_code)]

use std::path::Path;

use rusqlite::{Connection, params};

pub const SECRET: &str = "AKIAIOSFODNN7EXAMPLE";
pub const BASE_EPOCH: i64 = 1_790_000_000_000;

fn schema(old: bool) -> String {
    let (content, memory) = if old {
        ("claude_session_id", "sdk_session_id")
    } else {
        ("content_session_id", "memory_session_id")
    };
    let extra_session = if old { "" } else { "platform_source TEXT, custom_title TEXT," };
    format!(
        "CREATE TABLE sdk_sessions (id INTEGER PRIMARY KEY AUTOINCREMENT, {content} TEXT UNIQUE NOT NULL, {memory} TEXT UNIQUE,
           project TEXT NOT NULL, {extra_session} user_prompt TEXT, started_at TEXT NOT NULL, started_at_epoch INTEGER NOT NULL,
           completed_at TEXT, completed_at_epoch INTEGER, status TEXT NOT NULL DEFAULT 'active', worker_port INTEGER,
           prompt_counter INTEGER DEFAULT 0);
         CREATE TABLE user_prompts (id INTEGER PRIMARY KEY AUTOINCREMENT, {content} TEXT NOT NULL, prompt_number INTEGER NOT NULL,
           prompt_text TEXT NOT NULL, created_at TEXT NOT NULL, created_at_epoch INTEGER NOT NULL);
         CREATE TABLE observations (id INTEGER PRIMARY KEY AUTOINCREMENT, {memory} TEXT NOT NULL, project TEXT NOT NULL, text TEXT,
           type TEXT NOT NULL, title TEXT, subtitle TEXT, facts TEXT, narrative TEXT, concepts TEXT, files_read TEXT, files_modified TEXT,
           prompt_number INTEGER, discovery_tokens INTEGER DEFAULT 0, created_at TEXT NOT NULL, created_at_epoch INTEGER NOT NULL,
           relevance_count INTEGER DEFAULT 0);
         CREATE TABLE session_summaries (id INTEGER PRIMARY KEY AUTOINCREMENT, {memory} TEXT NOT NULL, project TEXT NOT NULL,
           request TEXT, investigated TEXT, learned TEXT, completed TEXT, next_steps TEXT, files_read TEXT, files_edited TEXT, notes TEXT,
           prompt_number INTEGER, discovery_tokens INTEGER DEFAULT 0, created_at TEXT NOT NULL, created_at_epoch INTEGER NOT NULL);
         CREATE TABLE schema_versions (id INTEGER PRIMARY KEY, version INTEGER);"
    )
}

fn iso(ms: i64) -> String {
    memd::clock::iso(ms)
}

/// What the fixture holds, for assertions.
#[derive(Debug, Clone, Copy)]
pub struct Fixture {
    pub sessions: usize,
    pub prompts: usize,
    pub observations: usize,
    /// Distinct (session, prompt) summaries (one prompt gets two rows; the newest wins).
    pub summaries_rows: usize,
}

/// `sessions` sessions of project `acme`, each with 2 prompts, `per_session` observations and a
/// summary for prompt 1 (session 1 has two summary rows for prompt 1). Observation 1 carries an AWS
/// key in its narrative, observation 2 only legacy `text`, observation 3 broken JSON facts.
pub fn build(path: &Path, old: bool, sessions: usize, per_session: usize) -> Fixture {
    let mut conn = Connection::open(path).expect("fixture db");
    conn.execute_batch(&schema(old)).expect("fixture schema");
    let (content, memory) = if old {
        ("claude_session_id", "sdk_session_id")
    } else {
        ("content_session_id", "memory_session_id")
    };
    let tx = conn.transaction().expect("tx");
    let mut obs_n = 0usize;
    let mut summaries = 0usize;
    for s in 1..=sessions {
        let t0 = BASE_EPOCH + s as i64 * 3_600_000;
        tx.execute(
            &format!(
                "INSERT INTO sdk_sessions({content}, {memory}, project, user_prompt, started_at, started_at_epoch, status)
                 VALUES (?1, ?2, 'acme', 'fix the flaky upload', ?3, ?4, 'active')"
            ),
            params![format!("cs-{s}"), format!("ms-{s}"), iso(t0), t0],
        )
        .expect("session");
        for p in 1..=2 {
            tx.execute(
                &format!("INSERT INTO user_prompts({content}, prompt_number, prompt_text, created_at, created_at_epoch) VALUES (?1, ?2, ?3, ?4, ?5)"),
                params![format!("cs-{s}"), p, format!("prompt {p} of session {s}: retry the upload"), iso(t0 + p), t0 + p],
            )
            .expect("prompt");
        }
        for i in 0..per_session {
            obs_n += 1;
            let at = t0 + 1_000 + i as i64;
            let narrative = match obs_n {
                1 => Some(format!("The deploy key {SECRET} was committed by mistake")),
                2 => None,
                _ => Some(format!(
                    "Uploads to the bucket failed intermittently; added retries with backoff (obs {obs_n})"
                )),
            };
            let facts = if obs_n == 3 {
                "[broken".to_string()
            } else {
                format!("[\"fact {obs_n}\"]")
            };
            tx.execute(
                &format!(
                    "INSERT INTO observations({memory}, project, text, type, title, subtitle, facts, narrative, concepts, files_read,
                       files_modified, prompt_number, discovery_tokens, created_at, created_at_epoch)
                     VALUES (?1, 'acme', ?2, ?3, ?4, 'sub', ?5, ?6, '[\"gotcha\",\"bugfix\"]', '[\"/src/upload.rs\"]', '[]', 1, 10, ?7, ?8)"
                ),
                params![
                    format!("ms-{s}"),
                    (obs_n == 2).then_some("legacy text body about the flaky upload"),
                    if obs_n.is_multiple_of(2) { "Bugfix " } else { "discovery" },
                    format!("Upload retry observation {obs_n}"),
                    facts,
                    narrative,
                    iso(at),
                    at
                ],
            )
            .expect("observation");
        }
        let rows = if s == 1 { 2 } else { 1 };
        for r in 0..rows {
            tx.execute(
                &format!(
                    "INSERT INTO session_summaries({memory}, project, request, completed, files_read, files_edited, prompt_number, created_at, created_at_epoch)
                     VALUES (?1, 'acme', ?2, 'retries added', '[]', '[\"/src/upload.rs\"]', 1, ?3, ?4)"
                ),
                params![format!("ms-{s}"), format!("make uploads reliable (version {r})"), iso(t0 + 5_000 + r), t0 + 5_000 + r],
            )
            .expect("summary");
            summaries += 1;
        }
    }
    tx.commit().expect("commit");
    Fixture {
        sessions,
        prompts: sessions * 2,
        observations: obs_n,
        summaries_rows: summaries,
    }
}
