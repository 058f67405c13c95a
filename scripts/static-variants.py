#!/usr/bin/env python3
"""Offline variants of the static encoder (docs/decisions.md, "A static encoder beside the transformer").

Recomputes the vector half of `memd eval`'s raw path in numpy from the distilled table
(`memd-static-v1.bin`) and the model (a small numpy BERT for whole-word vectors), and fuses it with
the keyword lists a running worker gave (`scripts/fusion-grid.py <DATA> datasets/transcripts
lists.json` against a `memd serve` with `MEMD_EMBED_ENCODER=static` that holds the raw path).
Prints hybrid recall@1/@5/MRR over all questions and paraphrase recall@5 at the default fusion
(weight 0.7, k 5, floor 0.2), vector-only recall@5, and the range of paraphrase recall@5 over a
grid of fusion settings, for: the table as memd uses it ("piece"), whole-word vectors for words of
2-4 pieces ("word"), the table without its top 2 principal directions ("abtt2"), and vector
pseudo-relevance feedback (the query moved towards its top 3 fused results, "prf").

Needs numpy and tokenizers (`pip install numpy tokenizers`).
Usage: scripts/static-variants.py <DATA> <MODEL_DIR> <lists.json> [datasets/transcripts]
(scripts/static-fit.py loads this file for its definitions.)
"""
import glob, itertools, json, sqlite3, struct, sys

import numpy as np
from tokenizers import Tokenizer

data, model, lists_path = sys.argv[1:4]
dataset = sys.argv[4] if len(sys.argv) > 4 else "datasets/transcripts"
SIF, DIM = 1e-3, 384


def bert_weights(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    head = json.loads(raw[8 : 8 + n])
    out = {}
    for k, v in head.items():
        if k != "__metadata__" and v["dtype"] == "F32":
            a, b = v["data_offsets"]
            out[k] = np.frombuffer(raw[8 + n + a : 8 + n + b], dtype=np.float32).reshape(v["shape"])
    return out


W = bert_weights(f"{model}/model.safetensors")


def layer_norm(x, p):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + 1e-12) * W[p + ".weight"] + W[p + ".bias"]


def linear(x, p):
    return x @ W[p + ".weight"].T + W[p + ".bias"]


def gelu(x):  # erf by Abramowitz-Stegun 7.1.26 (|error| < 1.5e-7)
    z = x / np.sqrt(2)
    t = 1 / (1 + 0.3275911 * np.abs(z))
    y = 1 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * np.exp(-z * z)
    return 0.5 * x * (1 + np.sign(z) * y)


def hidden_means(batch):
    """Mean of the last hidden states of each id list (all-MiniLM-L6-v2: 6 layers, 12 heads)."""
    B, L = len(batch), max(len(b) for b in batch)
    ids, mask = np.zeros((B, L), dtype=np.int64), np.zeros((B, L), dtype=np.float32)
    for i, b in enumerate(batch):
        ids[i, : len(b)], mask[i, : len(b)] = b, 1
    x = W["embeddings.word_embeddings.weight"][ids] + W["embeddings.position_embeddings.weight"][:L][None]
    x = layer_norm(x + W["embeddings.token_type_embeddings.weight"][0], "embeddings.LayerNorm")
    neg = (1 - mask)[:, None, None, :] * -1e9
    for layer in range(6):
        p = f"encoder.layer.{layer}."
        q, k, v = (linear(x, p + f"attention.self.{n}").reshape(B, L, 12, 32).transpose(0, 2, 1, 3) for n in ("query", "key", "value"))
        s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(32) + neg
        s = np.exp(s - s.max(-1, keepdims=True))
        a = ((s / s.sum(-1, keepdims=True)) @ v).transpose(0, 2, 1, 3).reshape(B, L, DIM)
        x = layer_norm(linear(a, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
        x = layer_norm(linear(gelu(linear(x, p + "intermediate.dense")), p + "output.dense") + x, p + "output.LayerNorm")
    return (x * mask[..., None]).sum(1) / mask.sum(1)[:, None]


tok = Tokenizer.from_file(f"{model}/tokenizer.json")
tok.no_padding()
tok.no_truncation()
raw = open(f"{model}/memd-static-v1.bin", "rb").read()
V = struct.unpack("<I", raw[8:12])[0]
TABLE = np.frombuffer(raw[24:], dtype=np.float16).reshape(V, DIM).astype(np.float32)
zipf = sum(1 / (i + 2) for i in range(V))
WEIGHT = np.array([SIF / (SIF + (1 / (i + 2)) / zipf) for i in range(V)], dtype=np.float32)
CLS, SEP = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
# The table's centre, recovered from one token: row = (h - mean) * weight; checked on another.
MEAN = hidden_means([[SEP, 7592, CLS]])[0] - TABLE[7592] / WEIGHT[7592]
again = (hidden_means([[SEP, 2000, CLS]])[0] - MEAN) * WEIGHT[2000]
print(f"numpy BERT vs the table, token 2000: cosine {again @ TABLE[2000] / np.linalg.norm(again) / np.linalg.norm(TABLE[2000]):.8f}")

db = sqlite3.connect(f"file:{data}/memd.db?mode=ro", uri=True)
docs = []  # (row id, project, text): the title and narrative documents of vectors/documents.rs
for rid, proj, title, sub, narr in db.execute("SELECT id, project, title, subtitle, narrative FROM observations"):
    parts = [x for x in (title, sub, narr) if x and x.strip()]
    if len(parts) > 1 and title and title.strip():
        docs.append((rid, proj, title.strip()))
    docs.append((rid, proj, "\n".join(parts)[:8000]))
LISTS = json.load(open(lists_path))
questions = []
for f in sorted(glob.glob(f"{dataset}/questions*.jsonl")):
    questions += [json.loads(line) for line in open(f)]
assert len(questions) == len(LISTS), "lists.json is from another dataset"
encodings = tok.encode_batch([d[2] for d in docs] + [q["query"] for q in questions], add_special_tokens=False)

words = {}  # pieces of a 2-4 piece word -> its centred whole-word vector
for e in encodings:
    groups = {}
    for i, w in zip(e.ids[:2048], e.word_ids[:2048]):
        groups.setdefault(w, []).append(i)
    words.update({tuple(g): None for g in groups.values() if 1 < len(g) <= 4})
keys = sorted(words, key=len)
print(f"words of 2-4 pieces in the documents and questions: {len(keys)}")
for at in range(0, len(keys), 256):
    chunk = keys[at : at + 256]
    for key, h in zip(chunk, hidden_means([[SEP, *k, CLS] for k in chunk])):
        words[key] = h - MEAN


def embed(e, table, whole_words):
    v = np.zeros(DIM, np.float32)
    groups = {}
    for i, w in zip(e.ids[:2048], e.word_ids[:2048]):
        groups.setdefault(w, []).append(i)
    for g in groups.values():
        if whole_words and tuple(g) in words:
            v += words[tuple(g)] * max(WEIGHT[i] for i in g)
        else:
            v += table[g].sum(0)
    n = np.linalg.norm(v)
    return v / n if n > 1e-12 else v


def without_top(k):
    real = np.array([not (t.startswith("[") and t.endswith("]")) for t in (tok.id_to_token(i) or "" for i in range(V))])
    centred = TABLE / WEIGHT[:, None]
    top = np.linalg.svd(centred[real][::3], full_matrices=False)[2][:k]
    return (centred - (centred @ top.T) @ top) * WEIGHT[:, None]


ROW = np.array([d[0] for d in docs])
PROJECT = np.array([d[1] for d in docs])


def nearest(doc_vecs, qv, project):
    m = PROJECT == project
    best = {}
    for r, s in zip(ROW[m], doc_vecs[m] @ qv):
        best[r] = max(best.get(r, -9.0), s)
    return sorted(best.items(), key=lambda x: -x[1])[:40]


def fuse(keyword, vector, wv=0.7, k=5, floor=0.2):
    score, kw = {}, {}
    for i, (r, _) in enumerate(keyword):
        score[r], kw[r] = 1 / (k + i + 1), i
    for i, r in enumerate(r for r, s in vector if s >= floor):
        score[r] = score.get(r, 0) + wv / (k + i + 1)
    return sorted(score, key=lambda r: (-score[r], kw.get(r, 999)))


def measure(ranked_lists):
    acc = {"all": [0, 0, 0, 0], "paraphrase": [0, 0, 0, 0]}
    for q, ranked, entry in zip(questions, ranked_lists, LISTS):
        rel = set(entry["rel"])
        first = next((i + 1 for i, x in enumerate(ranked[:10]) if x in rel), None)
        for g in ("all", "paraphrase") if q["category"] == "paraphrase" else ("all",):
            a = acc[g]
            a[0] += first == 1
            a[1] += bool(first and first <= 5)
            a[2] += 1 / first if first else 0
            a[3] += 1
    return {g: tuple(round(x / a[3], 3) for x in a[:3]) for g, a in acc.items()}


keyword_only = measure([[r for r, _ in e["keyword"]] for e in LISTS])["all"]


def nearest_lists(table, whole=False):
    """Document and query vectors of `table`, and each question's nearest rows in its project."""
    E = np.array([embed(e, table, whole) for e in encodings])
    D, Q = E[: len(docs)], E[len(docs) :]
    return D, Q, [nearest(D, qv, q["project"]) for q, qv in zip(questions, Q)]


def report(name, vec):
    """Prints hybrid at the default fusion, vector-only, and the fusion grid, for one variant."""
    hybrid = measure([fuse(e["keyword"], v) for e, v in zip(LISTS, vec)])
    vector_only = measure([[r for r, _ in v] for v in vec])
    cells = []
    for wv, k in itertools.product([0.5, 0.7, 1.0, 1.2, 1.5], [2, 5, 10, 20]):
        r = measure([fuse(e["keyword"], v, wv, k) for e, v in zip(LISTS, vec)])
        if all(r["all"][i] >= keyword_only[i] for i in range(3)):
            cells.append(r["paraphrase"][1])
    margin = sum(c >= 0.464 for c in cells)  # keyword's 0.364 + 10 points
    print(f"{name:6} hybrid all r@1/r@5/MRR {hybrid['all']} paraphrase r@5 {hybrid['paraphrase'][1]} | "
          f"vector-only r@5 {vector_only['all'][1]} paraphrase {vector_only['paraphrase'][1]} | "
          f"grid cells beating keyword: {len(cells)}/20, paraphrase r@5 {min(cells, default=0)}-{max(cells, default=0)}, "
          f"{margin} of them >= 0.464", flush=True)


def variants():
    for name, table, whole, prf in [("piece", TABLE, False, False), ("word", TABLE, True, False),
                                    ("abtt2", without_top(2), False, False), ("prf", TABLE, False, True)]:
        D, Q, vec = nearest_lists(table, whole)
        if prf:  # the query moved towards the mean of its top 3 fused results' documents
            for i, (q, qv, entry) in enumerate(zip(questions, Q, LISTS)):
                top = set(fuse(entry["keyword"], vec[i])[:3])
                picked = D[[r in top for r in ROW] & (PROJECT == q["project"])]
                if len(picked):
                    moved = qv + 0.3 * picked.mean(0)
                    vec[i] = nearest(D, moved / np.linalg.norm(moved), q["project"])
        report(name, vec)


if __name__ == "__main__":  # scripts/static-fit.py loads the definitions above and runs its own
    variants()
