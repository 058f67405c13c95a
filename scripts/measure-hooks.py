#!/usr/bin/env python3
"""Times the hook as whole processes (the issue-4 targets): `memd-hook claude-code <handler>`, what
`memd install` registers, or `memd hook claude-code <handler>` with `--via-memd`.

Run after `cargo build --release`: `python3 scripts/measure-hooks.py [--via-memd]`. Prints the
p50/p95 of PostToolUse with the worker up, with the worker down (spool path), and SessionStart with
50 observations in the project. Temporary data dirs only; workers are stopped at the end.
"""
import json, os, subprocess, sys, tempfile, time, urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(REPO, "target"))
B = os.path.join(TARGET, "release", "memd")
HOOK = [B, "hook"] if "--via-memd" in sys.argv else [os.path.join(TARGET, "release", "memd-hook")]
TMP = tempfile.mkdtemp(prefix="memd-hooks-")
BASE = {"PATH": os.environ["PATH"], "HOME": TMP}
POST = json.dumps({"session_id": "s1", "cwd": "/tmp/proj", "hook_event_name": "PostToolUse", "tool_name": "Bash",
                   "tool_input": {"command": "ls"}, "tool_response": {"stdout": "a"}})
START = json.dumps({"session_id": "s9", "cwd": "/tmp/proj", "hook_event_name": "SessionStart", "source": "startup"})


def pct(ts):
    ts = sorted(ts)
    return ts[len(ts) // 2] * 1000, ts[int(len(ts) * 0.95)] * 1000


def run(env, handler, stdin, n):
    ts = []
    for i in range(n):
        body = stdin.replace('"ls"', '"ls %d"' % i)
        t = time.perf_counter()
        subprocess.run(HOOK + ["claude-code", handler], input=body.encode(), stdout=subprocess.DEVNULL, env=env)
        ts.append(time.perf_counter() - t)
    return pct(ts)


def serve(name):
    d = os.path.join(TMP, name)
    os.makedirs(d)
    env = dict(BASE, MEMD_DATA_DIR=d, MEMD_PORT="0", MEMD_PROVIDER="extractive", MEMD_LOG="warn")
    w = subprocess.Popen([B, "serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(400):
        try:
            port = json.load(open(os.path.join(d, "memd.pid")))["port"]
            if port:
                break
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.05)
    time.sleep(0.5)
    return w, d, port


def main():
    ts = []
    for _ in range(200):
        t = time.perf_counter()
        subprocess.run(["/bin/true"])
        ts.append(time.perf_counter() - t)
    print("hook: %s" % " ".join(HOOK))
    print("baseline /bin/true p50 %.2f ms" % pct(ts)[0])
    down = dict(BASE, MEMD_DATA_DIR=os.path.join(TMP, "down"), MEMD_PORT="1", MEMD_AUTOSTART="false")
    print("worker down (spool) p50 %.2f ms p95 %.2f ms" % run(down, "observation", POST, 200))
    w, d, port = serve("up")
    try:
        env = dict(BASE, MEMD_DATA_DIR=d)
        print("worker up PostToolUse p50 %.2f ms p95 %.2f ms" % run(env, "observation", POST, 200))
        token = open(os.path.join(d, "token")).read().strip()
        for i in range(50):
            body = json.dumps({"text": f"Decision {i}: the upload retries use exponential backoff number {i}",
                               "title": f"Upload retry decision {i}", "project": "proj"}).encode()
            req = urllib.request.Request(f"http://127.0.0.1:{port}/api/memory/save", data=body,
                                         headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
            urllib.request.urlopen(req).read()
        print("SessionStart with 50 observations p50 %.2f ms p95 %.2f ms" % run(env, "context", START, 100))
    finally:
        w.terminate()
        w.wait()


if __name__ == "__main__":
    main()
