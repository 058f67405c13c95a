#!/usr/bin/env python3
"""The fusion grid of docs/decisions.md ("Memory quality", hybrid fusion).

Asks a running worker that holds the raw path of the benchmark (load it once with
`memd eval datasets/transcripts --model-dir <dir> --data-dir <DATA> --paths raw` against a
`memd serve` on <DATA>) for each question's keyword list and vector list (depth 40, with the
vector similarities), then replays weighted RRF  sum w/(k + rank)  over a grid of vector weight,
k and similarity floor, and prints recall@1/@5/MRR over all questions and paraphrase recall@5.

Usage: scripts/fusion-grid.py <DATA> [datasets/transcripts [lists.json]]
"""
import glob, itertools, json, sys, urllib.parse, urllib.request

data = sys.argv[1]
dataset = sys.argv[2] if len(sys.argv) > 2 else "datasets/transcripts"
port = json.load(open(f"{data}/memd.pid"))["port"]
token = open(f"{data}/token").read().strip()


def call(method, path, body=None):
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}",
        data=None if body is None else json.dumps(body).encode(),
        method=method,
        headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"},
    )
    return json.load(urllib.request.urlopen(req, timeout=60))


# Saving a memory again reinforces its row and returns its id: the dataset id -> row map.
rows = {}
for line in open(f"{dataset}/memories.jsonl"):
    m = json.loads(line)
    r = call("POST", "/api/memory/save", {"text": m["text"], "title": m["title"], "project": m["project"], "type": m["type"]})
    rows[m["id"]] = r["id"]
questions = []
for f in sorted(glob.glob(f"{dataset}/questions*.jsonl")):
    questions += [json.loads(l) for l in open(f)]
lists = []
for q in questions:
    entry = {"cat": q["category"], "rel": {rows[e] for e in q["evidence"]}}
    for mode in ["keyword", "vector"]:
        params = {"format": "json", "limit": 40, "mode": mode, "project": q["project"], "query": q["query"]}
        r = call("GET", "/api/search?" + urllib.parse.urlencode(params))
        entry[mode] = [(x["id"], x.get("similarity")) for x in r["ranked"]]
    lists.append(entry)


if len(sys.argv) > 3:
    # A third argument: the lists are also written there (for offline analysis of other fusions).
    json.dump([dict(q, rel=sorted(q["rel"])) for q in lists], open(sys.argv[3], "w"))


def scores(ranked, rel):
    first = next((i + 1 for i, x in enumerate(ranked[:10]) if x in rel), None)
    return (first == 1, bool(first and first <= 5), 1 / first if first else 0.0)


def fuse(q, wv, k, floor):
    score, kw_rank = {}, {}
    for i, (row, _) in enumerate(q["keyword"]):
        score[row], kw_rank[row] = 1 / (k + i + 1), i
    near = [row for row, s in q["vector"] if s is not None and s >= floor]
    for i, row in enumerate(near):
        score[row] = score.get(row, 0) + wv / (k + i + 1)
    return sorted(score, key=lambda r: (-score[r], kw_rank.get(r, 999)))


def evaluate(rank_of):
    out = {}
    for q in lists:
        s = scores(rank_of(q), q["rel"])
        for group in ("all", "paraphrase") if q["cat"] == "paraphrase" else ("all",):
            acc = out.setdefault(group, [0, 0, 0, 0])
            acc[0] += s[0]; acc[1] += s[1]; acc[2] += s[2]; acc[3] += 1
    return {g: tuple(round(v / a[3], 3) for v in a[:3]) for g, a in out.items()}


keyword = evaluate(lambda q: [r for r, _ in q["keyword"]])
print("keyword only", keyword)
print("vector only", evaluate(lambda q: [r for r, _ in q["vector"]]))
for floor in [-1, 0.2, 0.3]:
    for wv, k in itertools.product([0.5, 0.7, 1.0, 1.2], [2, 5, 10, 20, 60]):
        r = evaluate(lambda q: fuse(q, wv, k, floor))
        wins = all(r["all"][i] >= keyword["all"][i] for i in range(3))
        print(f"floor {floor:>4} wv {wv:<3} k {k:<2}  all r@1/r@5/MRR {r['all']}  paraphrase r@5 {r['paraphrase'][1]}  {'beats keyword' if wins else ''}")
