//! The viewer's Team card (issue 40) in a real headless Chromium: a worker sharing a project with
//! a throwaway PostgreSQL server shows its origin, state, pushes and queue on the status page, and
//! the last error once the server is stopped.

use std::time::Duration;

use serde_json::json;

use crate::support::TestWorker;
use crate::support::postgres::Postgres;
use crate::support::webdriver::Browser;

#[test]
fn the_status_page_shows_the_team_sync() {
    let Some(pg) = Postgres::start() else { return };
    let Some(browser) = Browser::start() else { return };
    pg.sql("memd", "CREATE ROLE alice LOGIN;");
    let url = pg.url("alice");
    let w = TestWorker::start(&[
        ("MEMD_TEAM_DATABASE_URL", url.as_str()),
        ("MEMD_TEAM_PROJECTS", "shop"),
        ("MEMD_TEAM_ORIGIN", "alice@laptop"),
        ("MEMD_TEAM_SYNC_MS", "300"),
        ("MEMD_EMBEDDINGS", "none"),
    ]);
    let out = w.command().args(["team", "init", &pg.url("postgres")]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    pg.sql("memd", "GRANT memd_member TO alice;");
    let r = w.post(
        "/api/memory/save",
        &json!({"text": "Refunds go to the original card.", "project": "shop"}),
    );
    assert_eq!(r.status, 200);
    assert_eq!(w.post("/api/team/sync", &json!({})).status, 200);

    let out = w.command().args(["open", "--print"]).output().unwrap();
    browser.goto(String::from_utf8(out.stdout).unwrap().trim());
    browser.wait(
        "the feed",
        Duration::from_secs(20),
        "return document.getElementById('main') !== null",
    );
    browser.eval("location.hash = '#/status'; return 1");
    let card = browser.wait(
        "the Team card",
        Duration::from_secs(10),
        "const c = document.querySelector('.card.team'); return c && c.textContent",
    );
    let text = card.as_str().unwrap();
    assert!(
        text.contains("alice@laptop") && text.contains("ok") && text.contains("shop"),
        "{text}"
    );

    pg.stop();
    let error = browser.wait(
        "the sync's last error",
        Duration::from_secs(30),
        "const e = document.querySelector('.card.team .error'); return e && e.textContent",
    );
    assert!(error.as_str().unwrap().starts_with("last error:"), "{error}");
}
