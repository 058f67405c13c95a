//! The Chroma mirror against a real `chroma run` server (`.ci/run` starts one and exports
//! `MEMD_TEST_CHROMA_URL`, plus `MEMD_TEST_CHROMA_CMD`/`_PATH` so a test can run its own server to
//! stop and restart). Needs the model too (`MEMD_TEST_MODEL_DIR`). Each test skips with a message
//! when what it needs is absent (fails under `MEMD_REQUIRE_FIXTURES=1`).

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::support::{TestWorker, model_dir, observation_body, wait_until};
use serde_json::{Value, json};

fn env_of(key: &str) -> Option<String> {
    crate::support::fixture_env(key, "`.ci/run` starts `chroma run` (pip install chromadb) and exports it")
}

/// Blocking JSON call to Chroma.
fn chroma(url: &str, method: &str, path: &str, body: Option<Value>) -> Option<Value> {
    let addr: std::net::SocketAddr = url.trim_start_matches("http://").parse().ok()?;
    let text = body.map(|b| b.to_string());
    let req = memd::client::http::Request {
        method,
        path,
        body: text.as_deref().map(str::as_bytes),
        ..Default::default()
    };
    let r = memd::client::http::send(addr, &req, Duration::from_secs(10)).ok()?;
    (r.status == 200).then(|| r.json()).flatten()
}

/// Every id in the worker's collection (None while Chroma or the collection is missing).
fn collection_ids(url: &str, name: &str) -> Option<Vec<String>> {
    let base = "/api/v2/tenants/default_tenant/databases/default_database/collections";
    let got = chroma(url, "GET", &format!("{base}/{name}"), None)?;
    let id = got["id"].as_str()?.to_string();
    let mut out = Vec::new();
    loop {
        let page = chroma(
            url,
            "POST",
            &format!("{base}/{id}/get"),
            Some(json!({"limit": 1000, "offset": out.len(), "include": []})),
        )?;
        let ids: Vec<String> = page["ids"]
            .as_array()?
            .iter()
            .filter_map(|v| v.as_str().map(String::from))
            .collect();
        let n = ids.len();
        out.extend(ids);
        if n < 1000 {
            return Some(out);
        }
    }
}

fn collection_name(w: &TestWorker) -> String {
    let db_id: String = w
        .db()
        .query_row("SELECT value FROM meta WHERE key = 'db_id'", [], |r| r.get(0))
        .unwrap();
    memd::vectors::chroma::collection_name(&db_id)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A Chroma server this test owns (stopped by its pid on drop).
struct OwnChroma {
    cmd: String,
    path: std::path::PathBuf,
    port: u16,
    child: Option<Child>,
}

impl OwnChroma {
    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
    fn start(&mut self) {
        let child = Command::new(&self.cmd)
            .args(["run", "--host", "127.0.0.1", "--port", &self.port.to_string(), "--path"])
            .arg(&self.path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chroma run");
        self.child = Some(child);
        let url = self.url();
        assert!(wait_until(Duration::from_secs(60), || chroma(
            &url,
            "GET",
            "/api/v2/heartbeat",
            None
        )
        .is_some()));
    }
    fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for OwnChroma {
    fn drop(&mut self) {
        self.stop();
    }
}

#[test]
fn documents_mirror_into_chroma_and_forget_removes_them() {
    let (Some(model), Some(url)) = (model_dir(), env_of("MEMD_TEST_CHROMA_URL")) else {
        return;
    };
    let w = TestWorker::start(&[
        ("MEMD_EMBED_MODEL_DIR", &model),
        ("MEMD_CHROMA_URL", &url),
        ("MEMD_CHROMA_RETRY_MS", "200"),
    ]);
    for i in 0..6 {
        assert_eq!(w.post("/api/sessions/observations", &observation_body("c1", i)).status, 200);
    }
    assert!(wait_until(Duration::from_secs(60), || w.count("SELECT count(*) FROM observations") > 0));
    let name = collection_name(&w);
    let expected = || w.count("SELECT count(*) FROM vectors");
    assert!(
        wait_until(Duration::from_secs(180), || {
            let n = expected();
            n > 0 && w.status()["chroma"]["lag"] == 0 && collection_ids(&url, &name).is_some_and(|ids| ids.len() as i64 == n)
        }),
        "chroma did not catch up: {}",
        w.status()["chroma"]
    );
    let first: i64 = w.db().query_row("SELECT min(id) FROM observations", [], |r| r.get(0)).unwrap();
    let c = rusqlite::Connection::open(w.db_path()).unwrap();
    c.busy_timeout(Duration::from_secs(10)).unwrap();
    c.execute("DELETE FROM observations WHERE id = ?1", [first]).unwrap();
    let prefix = format!("obs_{first}_");
    assert!(
        wait_until(Duration::from_secs(60), || collection_ids(&url, &name)
            .is_some_and(|ids| !ids.iter().any(|i| i.starts_with(&prefix)))),
        "forgotten documents still in chroma"
    );
    assert_eq!(w.count(&format!("SELECT count(*) FROM vectors WHERE doc_id LIKE '{prefix}%'")), 0);
}

#[test]
fn chroma_down_during_ingest_of_500_observations_then_back_holds_each_exactly_once() {
    let (Some(model), Some(cmd), Some(path)) = (model_dir(), env_of("MEMD_TEST_CHROMA_CMD"), env_of("MEMD_TEST_CHROMA_PATH")) else {
        return;
    };
    let data = std::path::PathBuf::from(path).with_extension(format!("own-{}", std::process::id()));
    let mut server = OwnChroma {
        cmd,
        path: data,
        port: free_port(),
        child: None,
    };
    server.start();
    let url = server.url();
    let w = TestWorker::start(&[
        ("MEMD_EMBED_MODEL_DIR", &model),
        ("MEMD_CHROMA_URL", &url),
        ("MEMD_CHROMA_RETRY_MS", "200"),
        ("MEMD_OBSERVER_BATCH_MAX_EVENTS", "1"),
        ("MEMD_OBSERVER_BATCH_DEBOUNCE_MS", "0"),
    ]);
    let name = collection_name(&w);
    assert!(wait_until(Duration::from_secs(30), || collection_ids(&url, &name).is_some()));
    server.stop();
    for i in 0..500 {
        let r = w.post("/api/sessions/observations", &observation_body("outage", i));
        assert_eq!(r.status, 200, "ingest answered {} while chroma was down", r.status);
    }
    assert!(
        wait_until(Duration::from_secs(300), || w.count("SELECT count(*) FROM observations") >= 500),
        "observations stored: {}",
        w.count("SELECT count(*) FROM observations")
    );
    // The mirror notices the outage once the embedded store has documents to push.
    assert!(
        wait_until(Duration::from_secs(300), || w.status()["chroma"]["state"] == "degraded"),
        "{}",
        w.status()["chroma"]
    );
    server.start();
    let observations = w.count("SELECT count(*) FROM observations");
    assert!(
        wait_until(Duration::from_secs(600), || {
            let Some(ids) = collection_ids(&url, &name) else { return false };
            let narratives = ids.iter().filter(|i| i.ends_with("_narrative")).count() as i64;
            narratives == observations && w.status()["chroma"]["lag"] == 0
        }),
        "chroma did not catch up: {}",
        w.status()["chroma"]
    );
    let ids = collection_ids(&url, &name).unwrap();
    let unique: std::collections::HashSet<&String> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len(), "a document twice");
    assert_eq!(
        ids.len() as i64,
        w.count("SELECT count(*) FROM vectors"),
        "chroma holds exactly the embedded documents"
    );
}
