#!/usr/bin/env python3
"""A static table fitted to the transformer on a corpus (model2vec's tokenlearn, as a ridge
regression), measured like scripts/static-variants.py (docs/decisions.md, "A static encoder beside
the transformer": tried and not kept).

Corpus: sentences of the doc comments (`///`, `//!`) of the crates in the local cargo registry
(code-domain English, none of it from the benchmark's transcripts), de-duplicated, ordered by
their MD5 and cut to N. Targets: the transformer's normalised mean-pooled embedding of each
sentence (the numpy BERT of static-variants.py). Fit: each token seen in the corpus gets the row
W minimising Σ_s |Σ_t a_st W_t − u_s|² + λ |W − h|² over the sentences (a_st: the token's SIF
weight over the sentence's total, h: the token's own transformer output), every other token keeps
h; rows are then SIF-weighted as memd's table is. Prints the same line as static-variants.py per
λ. Targets are cached in <CACHE>.

Needs numpy, scipy and tokenizers.
Usage: scripts/static-fit.py <DATA> <MODEL_DIR> <lists.json> <CACHE> [N=30000] [λ,λ,...]
"""
import glob, hashlib, os, re, sys, time
import importlib.util

data, model, lists_path, cache = sys.argv[1:5]
N = int(sys.argv[5]) if len(sys.argv) > 5 else 30000
LAMBDAS = [float(x) for x in (sys.argv[6] if len(sys.argv) > 6 else "0.0003,0.001,0.003").split(",")]
sys.argv = [sys.argv[0], data, model, lists_path]
spec = importlib.util.spec_from_file_location("variants", os.path.join(os.path.dirname(__file__), "static-variants.py"))
v = importlib.util.module_from_spec(spec)
spec.loader.exec_module(v)
np = v.np
import scipy.sparse as sp


def corpus(n):
    sents = set()
    for f in sorted(glob.glob(os.path.expanduser("~/.cargo/registry/src/*/*/src/**/*.rs"), recursive=True)):
        try:
            lines = open(f, encoding="utf-8").read().splitlines()
        except (UnicodeDecodeError, OSError):
            continue
        para = []
        for line in lines + [""]:
            m = re.match(r"\s*//[/!]\s?(.*)$", line)
            if m and not m.group(1).startswith(("```", "#", "|", "[", "-", "*", "<")):
                para.append(m.group(1).strip())
                continue
            for s in re.split(r"(?<=[.!?])\s+", " ".join(para)):
                s = s.strip()
                if 5 <= len(s.split()) <= 40 and not re.search(r"https?:|\bSAFETY\b|TODO|FIXME|[{};]", s):
                    sents.add(s)
            para = []
    return sorted(sents, key=lambda s: hashlib.md5(s.encode()).hexdigest())[:n]


def targets(ids, lo, hi):
    path = os.path.join(cache, f"targets-{lo}-{hi}.npy")
    if os.path.exists(path):
        return np.load(path)
    out = np.zeros((hi - lo, v.DIM), np.float32)
    order = sorted(range(lo, hi), key=lambda i: len(ids[i]))
    for at in range(0, hi - lo, 64):
        idx = order[at : at + 64]
        out[[i - lo for i in idx]] = v.hidden_means([[v.CLS, *ids[i], v.SEP] for i in idx])
    np.save(path, out)
    return out


os.makedirs(cache, exist_ok=True)
sentences = corpus(N)
ids = [e.ids[:126] for e in v.tok.encode_batch(sentences, add_special_tokens=False)]
t0 = time.time()
T = np.concatenate([targets(ids, lo, min(lo + 30000, len(ids))) for lo in range(0, len(ids), 30000)])
U = T / np.linalg.norm(T, axis=1, keepdims=True)
seen = sorted({t for s in ids for t in s})
col = {t: j for j, t in enumerate(seen)}
print(f"corpus: {len(sentences)} sentences, {len(seen)} distinct tokens, targets in {time.time() - t0:.0f} s", flush=True)
rows, cols, vals = [], [], []
for i, s in enumerate(ids):
    total = sum(v.WEIGHT[t] for t in s)
    for t in s:
        rows.append(i)
        cols.append(col[t])
        vals.append(v.WEIGHT[t] / total)
A = sp.csr_matrix((vals, (rows, cols)), shape=(len(ids), len(seen)), dtype=np.float64)
gram, rhs = (A.T @ A).toarray(), A.T @ U
H = v.TABLE / v.WEIGHT[:, None] + v.MEAN  # each token's own transformer output
v.report("piece", v.nearest_lists(v.TABLE)[2])
for lam in LAMBDAS:
    W = H.copy()
    W[seen] = np.linalg.solve(gram + lam * np.eye(len(seen)), rhs + lam * H[seen])
    v.report(f"fit λ={lam}", v.nearest_lists((W * v.WEIGHT[:, None]).astype(np.float32))[2])
