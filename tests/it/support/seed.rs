//! Seeding for the retrieval tests: rows written straight into `<data>/memd.db` while the worker
//! is stopped (the schema exists after one start), plus URL encoding of query strings.
#![allow(dead_code)]

use rusqlite::{Connection, params};

/// Percent-encodes a query-string value (the client's own encoder).
pub use memd::client::http::query_value as enc;

/// 2026-08-18T00:00Z.
pub const T0: i64 = 1_787_011_200_000;
pub const HOUR: i64 = 3_600_000;

pub struct Seed {
    pub conn: Connection,
}

/// One observation to insert.
pub struct Obs<'a> {
    pub session: &'a str,
    pub project: &'a str,
    pub platform: &'a str,
    pub ty: &'a str,
    pub title: &'a str,
    pub narrative: &'a str,
    pub concepts: &'a [&'a str],
    pub files_read: &'a [&'a str],
    pub files_modified: &'a [&'a str],
    pub at: i64,
}

impl Default for Obs<'_> {
    fn default() -> Self {
        Self {
            session: "s1",
            project: "acme",
            platform: "claude",
            ty: "discovery",
            title: "",
            narrative: "",
            concepts: &[],
            files_read: &[],
            files_modified: &[],
            at: T0,
        }
    }
}

fn list(items: &[&str]) -> String {
    serde_json::to_string(items).unwrap_or_else(|_| "[]".into())
}

impl Seed {
    pub fn open(path: &std::path::Path) -> Self {
        Self {
            conn: Connection::open(path).expect("open db"),
        }
    }

    /// The session row (created once); returns (session_db_id, memory_session_id).
    pub fn session(&self, content: &str, project: &str, platform: &str) -> (i64, String) {
        let mem = format!("memd-{platform}-{content}");
        self.conn
            .execute(
                "INSERT OR IGNORE INTO sdk_sessions (content_session_id, memory_session_id, platform_source, project, started_at, started_at_epoch, last_event_epoch)
                 VALUES (?1, ?2, ?3, ?4, '2026-08-18T00:00:00.000Z', ?5, ?5)",
                params![content, mem, platform, project, T0],
            )
            .expect("session");
        let id = self
            .conn
            .query_row("SELECT id FROM sdk_sessions WHERE memory_session_id = ?1", [&mem], |r| r.get(0))
            .expect("session id");
        (id, mem)
    }

    pub fn obs(&self, o: Obs) -> i64 {
        let (_, mem) = self.session(o.session, o.project, o.platform);
        let hash = format!("{}-{}-{}", o.title, o.narrative, o.at);
        self.conn
            .execute(
                "INSERT INTO observations (memory_session_id, project, platform_source, type, title, subtitle, narrative, facts, concepts,
                   files_read, files_modified, discovery_tokens, content_hash, origin, created_at, created_at_epoch)
                 VALUES (?1, ?2, ?3, ?4, ?5, NULL, ?6, '[]', ?7, ?8, ?9, 0, ?10, 'observer', ?11, ?12)",
                params![
                    mem,
                    o.project,
                    o.platform,
                    o.ty,
                    o.title,
                    o.narrative,
                    list(o.concepts),
                    list(o.files_read),
                    list(o.files_modified),
                    hash,
                    memd::clock::iso(o.at),
                    o.at
                ],
            )
            .expect("observation");
        self.conn.last_insert_rowid()
    }

    pub fn summary(&self, session: &str, project: &str, request: &str, learned: &str, at: i64) -> i64 {
        let (_, mem) = self.session(session, project, "claude");
        self.conn
            .execute(
                "INSERT INTO session_summaries (memory_session_id, project, platform_source, request, learned, prompt_number, created_at, created_at_epoch)
                 VALUES (?1, ?2, 'claude', ?3, ?4, (SELECT count(*) + 1 FROM session_summaries), ?5, ?6)",
                params![mem, project, request, learned, memd::clock::iso(at), at],
            )
            .expect("summary");
        self.conn.last_insert_rowid()
    }

    pub fn prompt(&self, session: &str, project: &str, text: &str, at: i64) -> i64 {
        let (sid, _) = self.session(session, project, "claude");
        self.conn
            .execute(
                "INSERT INTO user_prompts (session_db_id, content_session_id, platform_source, project, prompt_number, prompt_text, created_at, created_at_epoch)
                 VALUES (?1, ?2, 'claude', ?3, (SELECT count(*) + 1 FROM user_prompts), ?4, ?5, ?6)",
                params![sid, session, project, text, memd::clock::iso(at), at],
            )
            .expect("prompt");
        self.conn.last_insert_rowid()
    }
}
