"""Reference sentence embeddings for all-MiniLM-L6-v2 in plain numpy (no torch).

Reads model.safetensors / tokenizer.json / config.json from the directory given as argv[1], runs the
BERT encoder, mean-pools over the attention mask and L2-normalises (what sentence-transformers does),
then prints the cosine of each pair of the sentences below. The figures are hardcoded in
src/vectors/embedder.rs's test; rerun by hand when the test's sentences change:
    python3 .ci/embed_reference.py <model dir>      (needs numpy and tokenizers)
"""
import json
import struct
import sys

import numpy as np
from tokenizers import Tokenizer

TEXTS = [
    "A man is playing a guitar.",
    "Someone is strumming a guitar.",
    "The stock market fell sharply today.",
    "graceful shutdown on SIGTERM: drain requests, flush the store",
    "how do we stop the daemon cleanly",
]


def load_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        a, b = meta["data_offsets"]
        if meta["dtype"] != "F32":
            continue
        out[name] = np.frombuffer(data[a:b], dtype=np.float32).reshape(meta["shape"])
    return out


def layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def gelu(x):
    from math import erf, sqrt

    verf = np.vectorize(erf)
    return 0.5 * x * (1.0 + verf(x / sqrt(2.0)))


def embed(model_dir, text):
    cfg = json.load(open(f"{model_dir}/config.json"))
    w = load_safetensors(f"{model_dir}/model.safetensors")
    p = "" if "embeddings.word_embeddings.weight" in w else "bert."
    tok = Tokenizer.from_file(f"{model_dir}/tokenizer.json")
    tok.no_padding()
    ids = tok.encode(text).ids[:256]
    eps = cfg["layer_norm_eps"]
    heads = cfg["num_attention_heads"]
    x = w[p + "embeddings.word_embeddings.weight"][ids]
    x = x + w[p + "embeddings.position_embeddings.weight"][: len(ids)]
    x = x + w[p + "embeddings.token_type_embeddings.weight"][0]
    x = layer_norm(x, w[p + "embeddings.LayerNorm.weight"], w[p + "embeddings.LayerNorm.bias"], eps)
    lin = lambda t, name: t @ w[name + ".weight"].T + w[name + ".bias"]
    for i in range(cfg["num_hidden_layers"]):
        L = f"{p}encoder.layer.{i}."
        q, k, v = (lin(x, L + "attention.self." + n) for n in ("query", "key", "value"))
        d = q.shape[-1] // heads
        split = lambda t: t.reshape(len(ids), heads, d).transpose(1, 0, 2)
        q, k, v = split(q), split(k), split(v)
        s = q @ k.transpose(0, 2, 1) / np.sqrt(d)
        s = np.exp(s - s.max(-1, keepdims=True))
        s = s / s.sum(-1, keepdims=True)
        ctx = (s @ v).transpose(1, 0, 2).reshape(len(ids), heads * d)
        a = lin(ctx, L + "attention.output.dense")
        x = layer_norm(a + x, w[L + "attention.output.LayerNorm.weight"], w[L + "attention.output.LayerNorm.bias"], eps)
        h = gelu(lin(x, L + "intermediate.dense"))
        o = lin(h, L + "output.dense")
        x = layer_norm(o + x, w[L + "output.LayerNorm.weight"], w[L + "output.LayerNorm.bias"], eps)
    m = x.mean(0)
    return m / np.linalg.norm(m)


if __name__ == "__main__":
    vecs = [embed(sys.argv[1], t) for t in TEXTS]
    for a in range(len(TEXTS)):
        for b in range(a + 1, len(TEXTS)):
            print(f"({a}, {b}, {float(vecs[a] @ vecs[b]):.4f}),")
