//! The team server: connecting (rustls), its schema and migrations, and the three things a worker
//! does there — push (idempotent by global id and content hash, acknowledged only after the
//! commit), tombstone (an update row-level security allows only to the row's owner or a
//! `memd_admin`), and pull by the server's sequence. Pushes and tombstones take one transaction
//! advisory lock, so sequence numbers become visible in commit order and a pull never skips a row.

use std::time::Duration;

use tokio_postgres::{Client, Config};

use super::TeamError;
use super::plain_guard::Guarded;
use super::tls::RustlsConnector;
use crate::team::local::rows::{Incoming, Outgoing};

/// The server schema's migrations, in order (`memd.meta.schema_version` counts them).
pub const SERVER_MIGRATIONS: &[&str] = &[include_str!("server_v1.sql"), include_str!("server_v2.sql")];
/// The advisory lock every write takes (commit order = sequence order).
const WRITE_LOCK: i64 = 0x6d656d64; // "memd"
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Whether `host` is this machine (no network between memd and the server).
fn is_loopback(host: &str) -> bool {
    host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The URL's settings with memd's TLS rule (issue 51): `sslmode=require` unless the URL says
/// otherwise or the server is on this machine.
pub fn config_of(url: &str) -> Result<Config, TeamError> {
    let mut config: Config = url.parse().map_err(|e| TeamError::Config(format!("MEMD_TEAM_DATABASE_URL: {e}")))?;
    let local = config.get_hosts().iter().all(|h| match h {
        tokio_postgres::config::Host::Tcp(name) => is_loopback(name),
        #[cfg(unix)]
        tokio_postgres::config::Host::Unix(_) => true,
    });
    if !url.to_ascii_lowercase().contains("sslmode=") && !local {
        config.ssl_mode(tokio_postgres::config::SslMode::Require);
    }
    config.connect_timeout(CONNECT_TIMEOUT);
    config.application_name("memd");
    Ok(config)
}

/// Connects; the connection's driver runs on its own task until the client is dropped. Over TCP
/// the socket is watched ([`super::plain_guard`]): on a connection without TLS the password is
/// never sent in clear text or as an MD5 digest.
pub async fn connect(url: &str, ca_file: Option<&std::path::Path>) -> Result<Client, TeamError> {
    use tokio_postgres::tls::MakeTlsConnect;
    let config = config_of(url)?;
    let mut tls = RustlsConnector::new(ca_file)?;
    let host = config.get_hosts().first().cloned();
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let attempt = async {
        match host {
            Some(tokio_postgres::config::Host::Tcp(name)) => {
                let socket = tokio::net::TcpStream::connect((name.as_str(), port))
                    .await
                    .map_err(|e| TeamError::Unreachable(format!("{name}:{port}: {e}")))?;
                let _ = socket.set_nodelay(true);
                let connect = MakeTlsConnect::<Guarded<tokio::net::TcpStream>>::make_tls_connect(&mut tls, &name)
                    .map_err(|e| TeamError::Config(format!("tls: {e}")))?;
                let (client, connection) = config.connect_raw(Guarded::new(socket), connect).await?;
                tokio::spawn(async move {
                    if let Err(e) = connection.await {
                        tracing::debug!(error = %e, "team server connection closed");
                    }
                });
                Ok(client)
            }
            _ => {
                let (client, connection) = config.connect(tls).await?;
                tokio::spawn(async move {
                    if let Err(e) = connection.await {
                        tracing::debug!(error = %e, "team server connection closed");
                    }
                });
                Ok(client)
            }
        }
    };
    tokio::time::timeout(CONNECT_TIMEOUT * 2, attempt)
        .await
        .map_err(|_| TeamError::Unreachable("connection timed out".into()))?
}

/// The server's schema version; 0 when memd's schema is not there. A role that may not use the
/// schema (not granted `memd_member`) is told so rather than given the server's permission error.
pub async fn schema_version(client: &Client) -> Result<i64, TeamError> {
    let found = client
        .query_one(
            "SELECT current_user::text, n.oid IS NOT NULL, n.oid IS NOT NULL AND has_schema_privilege(n.oid, 'USAGE')
             FROM (SELECT 1) one LEFT JOIN pg_namespace n ON n.nspname = 'memd'",
            &[],
        )
        .await?;
    let (role, exists, usable): (String, bool, bool) = (found.get(0), found.get(1), found.get(2));
    if !exists {
        return Ok(0);
    }
    if !usable {
        return Err(TeamError::NotMember(role));
    }
    if !client
        .query_one("SELECT to_regclass('memd.meta') IS NOT NULL", &[])
        .await?
        .get::<_, bool>(0)
    {
        return Ok(0);
    }
    let row = client
        .query_opt("SELECT value FROM memd.meta WHERE key = 'schema_version'", &[])
        .await?;
    Ok(row.and_then(|r| r.get::<_, String>(0).parse().ok()).unwrap_or(0))
}

/// Refuses a server this memd cannot use (none, or newer).
pub async fn check_schema(client: &Client) -> Result<i64, TeamError> {
    let known = SERVER_MIGRATIONS.len() as i64;
    match schema_version(client).await? {
        0 => Err(TeamError::NoSchema),
        v if v > known => Err(TeamError::NewerSchema { found: v, known }),
        v if v < known => Err(TeamError::OlderSchema { found: v, known }),
        v => Ok(v),
    }
}

/// `memd team init`: creates or upgrades the schema, its policies and the roles (idempotent).
pub async fn init(client: &Client) -> Result<(i64, i64), TeamError> {
    let before = schema_version(client).await?;
    let known = SERVER_MIGRATIONS.len() as i64;
    if before > known {
        return Err(TeamError::NewerSchema { found: before, known });
    }
    for sql in &SERVER_MIGRATIONS[before.max(0) as usize..] {
        client.batch_execute(&format!("BEGIN; {sql} COMMIT;")).await?;
    }
    Ok((before, known))
}

/// Registers this install's `origin` to the connected role (issue 51): the first role to name an
/// origin or an install keeps it. Answers an error naming the holder when either is another's.
pub async fn register(client: &Client, origin: &str, install: &str) -> Result<(), TeamError> {
    client
        .execute(
            "INSERT INTO memd.members (origin, install) VALUES ($1, $2) ON CONFLICT DO NOTHING",
            &[&origin, &install],
        )
        .await?;
    let me: String = client.query_one("SELECT current_user::text", &[]).await?.get(0);
    let rows = client
        .query(
            "SELECT origin, install, role::text AS role FROM memd.members WHERE origin = $1 OR install = $2",
            &[&origin, &install],
        )
        .await?;
    for r in &rows {
        let (o, i, role): (String, String, String) = (r.get("origin"), r.get("install"), r.get("role"));
        if role != me || o != origin || i != install {
            return Err(TeamError::OriginTaken {
                origin: origin.to_string(),
                holder: role,
            });
        }
    }
    if rows.is_empty() {
        return Err(TeamError::Server("the members table did not take this origin".into()));
    }
    Ok(())
}

/// `memd team grant`: keeps `project` to the roles granted it (an admin's or the owner's right).
pub async fn grant(client: &Client, project: &str, role: &str, revoke: bool) -> Result<u64, TeamError> {
    let sql = match revoke {
        false => "INSERT INTO memd.grants (project, role) VALUES ($1, $2::text::name) ON CONFLICT DO NOTHING",
        true => "DELETE FROM memd.grants WHERE project = $1 AND role = $2::text::name",
    };
    Ok(client.execute(sql, &[&project, &role]).await?)
}

/// Pushes rows; returns how many the server did not have as they are (new, or a changed work
/// state: re-sequenced so every worker pulls it again). The same row pushed twice changes nothing.
/// Nothing is acknowledged before COMMIT.
pub async fn push(client: &mut Client, origin: &str, rows: &[Outgoing]) -> Result<usize, TeamError> {
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&WRITE_LOCK]).await?;
    let stmt = tx
        .prepare(
            "INSERT INTO memd.rows (gid, kind, project, origin, provenance, content_hash, body, created_at_epoch)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
             ON CONFLICT (gid) DO UPDATE SET body = excluded.body, content_hash = excluded.content_hash,
               seq = nextval('memd.row_seq')
             WHERE memd.rows.content_hash <> excluded.content_hash AND NOT memd.rows.deleted",
        )
        .await?;
    let mut added = 0;
    for r in rows {
        added += tx
            .execute(
                &stmt,
                &[
                    &r.gid,
                    &r.kind,
                    &r.project,
                    &origin,
                    &r.provenance,
                    &r.content_hash,
                    &r.body,
                    &r.created_at_epoch,
                ],
            )
            .await? as usize;
    }
    tx.commit().await?;
    Ok(added)
}

/// What a tombstone or an edit came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Changed {
    /// Done now (a tombstone: or the row was already gone).
    Done,
    /// The row is another member's: the server refused (row-level security).
    Refused,
}

/// Replaces a live row's body (its origin edited it) and gives it a new sequence number, so every
/// worker pulls it again.
pub async fn edit(client: &mut Client, gid: &str, body: &serde_json::Value, content_hash: &str) -> Result<Changed, TeamError> {
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&WRITE_LOCK]).await?;
    let changed = tx
        .execute(
            "UPDATE memd.rows SET body = $2, content_hash = $3, seq = nextval('memd.row_seq')
             WHERE gid = $1 AND NOT deleted",
            &[&gid, body, &content_hash],
        )
        .await?;
    tx.commit().await?;
    Ok(if changed == 1 { Changed::Done } else { Changed::Refused })
}

pub async fn tombstone(client: &mut Client, gid: &str) -> Result<Changed, TeamError> {
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&WRITE_LOCK]).await?;
    let changed = tx
        .execute(
            "UPDATE memd.rows SET deleted = true, body = '{}'::jsonb, seq = nextval('memd.row_seq')
             WHERE gid = $1 AND NOT deleted",
            &[&gid],
        )
        .await?;
    let outcome = match changed {
        1 => Changed::Done,
        _ => match tx.query_opt("SELECT deleted FROM memd.rows WHERE gid = $1", &[&gid]).await? {
            Some(row) if !row.get::<_, bool>(0) => Changed::Refused,
            _ => Changed::Done,
        },
    };
    tx.commit().await?;
    Ok(outcome)
}

/// Rows of `projects` after `seq`, in sequence order, at most `limit` (issue 51: a worker takes
/// only the projects it shares). A row's date is at most the server's clock when it was pushed:
/// a member cannot date a row in the future to keep it newest.
pub async fn pull(client: &Client, after: i64, limit: i64, projects: &[String]) -> Result<Vec<Incoming>, TeamError> {
    let rows = client
        .query(
            "SELECT gid, seq, kind, project, origin, provenance, content_hash, body, deleted,
                    LEAST(created_at_epoch, (extract(epoch FROM pushed_at) * 1000)::bigint) AS created_at_epoch
             FROM memd.rows WHERE seq > $1 AND project = ANY($3) ORDER BY seq LIMIT $2",
            &[&after, &limit, &projects],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| Incoming {
            gid: r.get("gid"),
            seq: r.get("seq"),
            kind: r.get("kind"),
            project: r.get("project"),
            origin: r.get("origin"),
            provenance: r.get("provenance"),
            content_hash: r.get("content_hash"),
            body: r.get("body"),
            created_at_epoch: r.get("created_at_epoch"),
            deleted: r.get("deleted"),
        })
        .collect())
}

/// The server's newest sequence number (for the lag shown in status).
pub async fn head(client: &Client) -> Result<i64, TeamError> {
    Ok(client.query_one("SELECT coalesce(max(seq), 0) FROM memd.rows", &[]).await?.get(0))
}
