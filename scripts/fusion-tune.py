#!/usr/bin/env python3
"""The tuning of MEMD_SEARCH_VECTOR_CONFIDENT (docs/decisions.md, issue 35), on the tune half only.

  scripts/fusion-tune.py collect <DATA> raw|ext <lists.json> [datasets/transcripts]
      asks a running worker on <DATA> — loaded with `memd eval <dataset> --data-dir <DATA>
      --paths raw` (or `extractive`) against a `memd serve` on <DATA> — for every question's keyword,
      vector and hybrid lists (depth 40, with similarities); `ext` maps evidence through the
      database's observation_sources, `raw` by saving the memories again (they reinforce).
  scripts/fusion-tune.py replay <lists.json> [tune|held-out]
      replays weighted RRF over those lists with and without keeping the keyword list's first row
      first unless the nearest vector's similarity reaches a threshold, and prints recall@1/@5/MRR.
The half of a question is the eval's own: FNV-1a of its id, even = tune (src/eval/dataset.rs).
"""
import glob, json, sqlite3, sys, urllib.parse, urllib.request


def fnv_half(s):
    h = 0xcbf29ce484222325
    for b in s.encode():
        h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
    return "tune" if h % 2 == 0 else "held-out"


def collect(data, path, out, dataset):
    port = json.load(open(f"{data}/memd.pid"))["port"]
    token = open(f"{data}/token").read().strip()

    def call(method, p, body=None):
        req = urllib.request.Request(f"http://127.0.0.1:{port}{p}", data=None if body is None else json.dumps(body).encode(),
                                     method=method, headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
        return json.load(urllib.request.urlopen(req, timeout=60))

    rows = {}
    if path == "raw":
        for line in open(f"{dataset}/memories.jsonl"):
            m = json.loads(line)
            r = call("POST", "/api/memory/save", {"text": m["text"], "title": m["title"], "project": m["project"], "type": m["type"]})
            rows.setdefault(m["id"], set()).add(("observation", r["id"]))
    else:
        db = sqlite3.connect(f"{data}/memd.db")
        for tid, oid in db.execute("SELECT t.tool_use_id, s.observation_id FROM observation_sources s JOIN tool_uses t ON t.id = s.tool_use_row_id WHERE t.tool_use_id IS NOT NULL"):
            rows.setdefault("tool:" + tid, set()).add(("observation", oid))
        for sess, n, i in db.execute("SELECT content_session_id, prompt_number, id FROM user_prompts"):
            rows.setdefault(f"prompt:{sess}:{n}", set()).add(("prompt", i))
    questions = []
    for f in sorted(glob.glob(f"{dataset}/questions*.jsonl")):
        questions += [json.loads(l) for l in open(f)]
    lists = []
    for q in questions:
        rel = set()
        for e in q["evidence"]:
            rel |= rows.get(e, set())
        entry = {"id": q["id"], "split": fnv_half(q["id"]), "cat": q["category"], "rel": sorted(list(x) for x in rel)}
        for mode in ["keyword", "vector", "hybrid"]:
            params = {"format": "json", "limit": 40, "mode": mode, "project": q["project"], "query": q["query"]}
            r = call("GET", "/api/search?" + urllib.parse.urlencode(params))
            entry[mode] = [[x["kind"], x["id"], x.get("similarity")] for x in r["ranked"]]
        lists.append(entry)
    json.dump(lists, open(out, "w"))


def metrics(qs, ranker):
    r1 = r5 = mrr = 0.0
    for q in qs:
        rel = {tuple(x) for x in q["rel"]}
        ranked = ranker(q)
        first = next((i + 1 for i, x in enumerate(ranked[:10]) if x in rel), None)
        r1 += first == 1
        r5 += bool(first and first <= 5)
        mrr += 1 / first if first else 0
    n = len(qs)
    return (round(r1 / n, 3), round(r5 / n, 3), round(mrr / n, 3))


def keyword(q):
    return [(k, i) for k, i, *_ in q["keyword"]]


def rrf(q, wk=1.0, wv=0.7, k=5, floor=0.2, keep_top=False, top_sim=None):
    score, krank = {}, {}
    kw = keyword(q)
    for i, r in enumerate(kw):
        score[r] = wk / (k + i + 1)
        krank[r] = i + 1
    vec = [(kk, ii, s) for kk, ii, s, *_ in q["vector"] if s is not None and s >= floor]
    for j, (kk, ii, _) in enumerate(vec):
        score[(kk, ii)] = score.get((kk, ii), 0) + wv / (k + j + 1)
    order = sorted(score, key=lambda r: (-score[r], krank.get(r, 1e9)))
    if keep_top and kw and not (top_sim is not None and vec and vec[0][2] >= top_sim):
        order = [kw[0]] + [r for r in order if r != kw[0]]
    return order


def replay(path, half):
    qs = [q for q in json.load(open(path)) if q["split"] == half]
    print("keyword", metrics(qs, keyword))
    print("rrf (wv 0.7, k 5)", metrics(qs, rrf))
    for wv in [0.5, 0.7, 1.0]:
        for k in [5, 10, 20]:
            for ts in [0.6, 0.7, 0.8]:
                print("keep keyword first", "wv", wv, "k", k, "threshold", ts,
                      metrics(qs, lambda q: rrf(q, wv=wv, k=k, keep_top=True, top_sim=ts)))


if __name__ == "__main__":
    if sys.argv[1] == "collect":
        collect(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5] if len(sys.argv) > 5 else "datasets/transcripts")
    else:
        replay(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "tune")
