//! The viewer's corpus pages (issue 41) in a real headless Chromium: the list, a corpus's
//! observations (the quarantined memory absent), and a question asked from the page answered by the
//! knowledge agent (the fake Anthropic provider), its citations linked and an id from outside the
//! corpus flagged.

use std::time::Duration;

use serde_json::json;

use crate::corpus::seed;
use crate::support::TestWorker;
use crate::support::fake_llm::{FakeLlm, Reply};
use crate::support::webdriver::Browser;

#[test]
fn the_corpus_pages_list_show_and_ask_in_a_real_browser() {
    let Some(browser) = Browser::start() else { return };
    let fake = FakeLlm::start();
    let base = fake.base_url();
    let w = TestWorker::start(&[
        ("MEMD_EMBEDDINGS", "none"),
        ("MEMD_PROVIDER", "anthropic"),
        ("MEMD_ANTHROPIC_API_KEY", "sk-ant-test-key-not-real"),
        ("MEMD_ANTHROPIC_BASE_URL", base.as_str()),
    ]);
    let (kept, poisoned, _) = seed(&w);
    let r = w.post(
        "/api/corpus",
        &json!({"name": "shop-notes", "description": "the shop", "project": "shop"}),
    );
    assert_eq!(r.status, 200, "{}", r.text());

    let out = w.command().args(["open", "--print"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    browser.goto(String::from_utf8(out.stdout).unwrap().trim());
    browser.wait(
        "the feed",
        Duration::from_secs(20),
        "return document.getElementById('main') !== null",
    );
    browser.eval("location.hash = '#/corpora'; return 1");
    let row = browser.wait(
        "the corpus list",
        Duration::from_secs(10),
        "const l = document.querySelector('#corpora li.corpus'); return l && l.textContent",
    );
    assert!(
        row.as_str().unwrap().contains("shop-notes") && row.as_str().unwrap().contains("4 observations"),
        "{row}"
    );
    browser.click("#corpora li.corpus a");
    let ids = browser.wait(
        "the corpus's observations",
        Duration::from_secs(10),
        "const l = document.querySelectorAll('#corpus-observations li a'); return l.length ? [...l].map((a) => a.textContent) : null",
    );
    let shown: Vec<String> = serde_json::from_value(ids).unwrap();
    assert!(
        shown.contains(&format!("#{}", kept[0])) && !shown.contains(&format!("#{poisoned}")),
        "{shown:?}"
    );

    fake.push(Reply::text("Ready."));
    fake.push(Reply::text(&format!("They back off 1, 2, 4 s (#{}); see #424242.", kept[0])));
    browser.type_into("#question", "How do retries back off?");
    browser.click("#ask button");
    let answer = browser.wait(
        "the answer",
        Duration::from_secs(20),
        "const a = document.querySelector('#answer .answer-text'); return a && a.textContent",
    );
    assert!(answer.as_str().unwrap().contains("1, 2, 4 s"), "{answer}");
    let cited = browser.eval("return document.querySelector('#answer .meta a').getAttribute('href')");
    assert_eq!(cited, json!(format!("#/obs/{}", kept[0])));
    let flag = browser.eval("const f = document.getElementById('outside-corpus'); return f && f.textContent");
    assert!(flag.as_str().unwrap_or("").contains("#424242"), "{flag}");
    browser.screenshot(&crate::viewer_browser::shots_dir().join("corpus.png"));
}
