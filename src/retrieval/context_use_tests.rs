//! SessionStart's index and what the agent used (issue 53): a used record older than the index's
//! window comes back into it; a record injected often and never used leaves it.

use rusqlite::{Connection, params};

use super::*;
use crate::config::ContextSettings;
use crate::retrieval::zone::Zone;

fn database(n: i64) -> Connection {
    let mut conn = Connection::open_in_memory().expect("open");
    crate::store::migrations::migrate(&mut conn, 0).expect("migrate");
    conn.execute(
        "INSERT INTO sdk_sessions (content_session_id, memory_session_id, platform_source, project, started_at, started_at_epoch, last_event_epoch)
         VALUES ('c', 'm', 'claude', 'p', '', 0, 0)",
        [],
    )
    .expect("session");
    for i in 1..=n {
        conn.execute(
            "INSERT INTO observations (id, memory_session_id, project, platform_source, type, title, narrative, content_hash, origin, created_at, created_at_epoch)
             VALUES (?1, 'm', 'p', 'claude', 'bugfix', ?2, 'n', ?3, 'observer', '', ?4)",
            params![i, format!("row {i}"), format!("h{i}"), i * 1_000],
        )
        .expect("observation");
    }
    conn
}

fn shown(conn: &Connection, cfg: &ContextSettings) -> Vec<i64> {
    let req = ContextRequest {
        chain: vec!["p".into()],
        platform: "claude".into(),
        full: false,
        max_chars: None,
        memory_lines: Vec::new(),
    };
    let mode = crate::modes::load_mode("code", &[]).0;
    let mut ids = context_inject(conn, &req, cfg, &mode, &Zone::Utc, 100_000).unwrap().observation_ids;
    ids.sort_unstable();
    ids
}

#[test]
fn a_used_record_returns_to_the_index_and_one_never_used_leaves_it() {
    let conn = database(30);
    let cfg = ContextSettings {
        observations: 10,
        reinforce_alpha: 0.0,
        drop_unused_after: 5,
        ..ContextSettings::default()
    };
    assert_eq!(shown(&conn, &cfg), (21..=30).collect::<Vec<_>>());
    // Row 3 was used; row 30 was delivered 5 times and never used; row 29 was injected 5 times
    // into sessions whose transcripts memd could not read (delivered 0): it stays.
    conn.execute(
        "INSERT INTO record_use(observation_id, injected, used, last_used_epoch) VALUES (3, 1, 1, 50)",
        [],
    )
    .unwrap();
    conn.execute(
        "INSERT INTO record_use(observation_id, injected, delivered, used) VALUES (30, 5, 5, 0)",
        [],
    )
    .unwrap();
    conn.execute(
        "INSERT INTO record_use(observation_id, injected, delivered, used) VALUES (29, 5, 0, 0)",
        [],
    )
    .unwrap();
    let ids = shown(&conn, &cfg);
    assert!(ids.contains(&3), "{ids:?}");
    assert!(!ids.contains(&30), "{ids:?}");
    assert!(ids.contains(&29), "{ids:?}");
    assert_eq!(ids.len(), 10, "{ids:?}");
    // Off: the newest ten again.
    let off = ContextSettings {
        drop_unused_after: 0,
        ..cfg
    };
    assert!(shown(&conn, &off).contains(&30));
}
