//! Team memory on PostgreSQL (issue 40, `docs/spec/team.md`): the server's schema and its
//! migrations (`server_v1.sql`, `server.rs`), TLS through rustls (`tls.rs`); what a shared row
//! holds is `local/rows.rs` (a local observation as pushed, redacted again; a pulled row as
//! stored). The local side's tables are `local/`, its storage trait `storage.rs`; the push and
//! pull loops are the `TeamSync` actor.

pub mod check;
pub mod local;
pub mod plain_guard;
pub mod server;
pub mod storage;
pub mod tls;

/// What the team layer reports (Clone: one pass's answer goes to every caller waiting on it).
#[derive(Debug, Clone, thiserror::Error)]
pub enum TeamError {
    #[error("team settings: {0}")]
    Config(String),
    #[error("team server unreachable: {0}")]
    Unreachable(String),
    #[error("team server: {0}")]
    Server(String),
    #[error("the team server's schema is version {found}; this memd knows up to {known} — upgrade memd (nothing was pushed or pulled)")]
    NewerSchema { found: i64, known: i64 },
    #[error(
        "the team server's schema is version {found}; this memd needs {known} — the owner runs `memd team init <owner URL>` again to upgrade it"
    )]
    OlderSchema { found: i64, known: i64 },
    #[error("origin {origin} is registered to role {holder} on the team server; set MEMD_TEAM_ORIGIN to a name of your own")]
    OriginTaken { origin: String, holder: String },
    #[error("the team server has no memd schema; run `memd team init <owner URL>` once")]
    NoSchema,
    #[error("role {0} is not a member of the team: the team's admin runs `GRANT memd_member TO {0}`")]
    NotMember(String),
}

impl From<tokio_postgres::Error> for TeamError {
    fn from(e: tokio_postgres::Error) -> Self {
        match e.as_db_error() {
            Some(db) => TeamError::Server(format!("{} ({})", db.message(), db.code().code())),
            // The cause too: "error communicating with the server" alone names nothing.
            None => match std::error::Error::source(&e) {
                Some(cause) => TeamError::Unreachable(format!("{e}: {cause}")),
                None => TeamError::Unreachable(e.to_string()),
            },
        }
    }
}
