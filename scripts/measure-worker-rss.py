#!/usr/bin/env python3
"""Worker RSS with the embedding model loaded (docs/measurements.md, docs/decisions.md).

Starts the release `memd serve` in a temp data dir, posts 2,000 tool events from 8 clients, waits
until everything is stored and embedded, and prints VmRSS / RssAnon / RssFile (kB) when idle, after
ingest and after the backfill. Extra arguments are environment settings for the worker, e.g.
`MALLOC_ARENA_MAX=2`.

Run: `cargo build --release && MEMD_TEST_MODEL_DIR=<dir> python3 scripts/measure-worker-rss.py`
"""
import json, os, subprocess, sys, tempfile, time, urllib.request, threading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = os.environ.get("MEMD_TEST_MODEL_DIR")
if not MODEL:
    sys.exit("set MEMD_TEST_MODEL_DIR to the all-MiniLM-L6-v2 files")
env_extra = dict(a.split('=',1) for a in sys.argv[1:])
d = tempfile.mkdtemp()
env = dict(os.environ, MEMD_DATA_DIR=d, MEMD_PORT="0", MEMD_EMBED_MODEL_DIR=MODEL, MEMD_PROVIDER="extractive", MEMD_OBSERVER_BATCH_DEBOUNCE_MS="50", **env_extra)
p = subprocess.Popen([os.path.join(ROOT, "target/release/memd"), "serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for _ in range(100):
    try:
        pid = json.load(open(d + "/memd.pid")); port = pid["port"]; break
    except Exception: time.sleep(0.1)
tok = open(d + "/token").read().strip() if os.path.exists(d + "/token") else ""
def call(m, path, body=None):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=m, data=body and json.dumps(body).encode(), headers={"Content-Type": "application/json", "Authorization": f"Bearer {tok}"})
    return json.load(urllib.request.urlopen(req, timeout=30))
def status(): return call("GET", "/api/status")
for _ in range(100):
    try: status(); break
    except Exception: time.sleep(0.1)
def rss():
    s = open(f"/proc/{p.pid}/status").read()
    return {k: v.split()[0] for k, v in (l.split(":",1) for l in s.splitlines()) if k in ("VmRSS","RssAnon","RssFile","VmHWM")}
print("idle", rss())
def client(c):
    for i in range(250):
        call("POST", "/api/sessions/observations", {"contentSessionId": f"b-{c}", "tool_name": "Bash", "tool_input": {"command": f"cargo test case_{i}", "description": f"run test case {i} of suite {c}"}, "tool_response": {"stdout": f"test case_{i} ... ok", "stderr": ""}, "tool_use_id": f"t_{c}_{i}", "cwd": "/home/dev/shop"})
ts = [threading.Thread(target=client, args=(c,)) for c in range(8)]
[t.start() for t in ts]; [t.join() for t in ts]
print("after ingest", rss())
t0 = time.time()
while time.time() - t0 < 600:
    st = status(); b = st["vectors"]["backfill"]
    if st["vectors"]["state"] == "ok" and b["done"] == b["total"] and b["total"] > 0 and st["pending"]["pending"] == 0: break
    time.sleep(0.5)
print("after backfill", b, f"{time.time()-t0:.0f}s", rss())
os.system(f"grep -E 'Rss|Anon' /proc/{p.pid}/smaps_rollup | head -5")
p.terminate(); p.wait()
