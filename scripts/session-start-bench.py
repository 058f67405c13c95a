#!/usr/bin/env python3
"""SessionStart on the recorded sessions (issue 38's bench): for each binary pair given, a fresh
`memd serve` (extractive observer, embeddings off) replays the recorded transcripts, then the
SessionStart hook (`memd-hook claude-code context`, a whole process) runs for four of their
projects, RUNS times each, round-robin; prints p50/p95 per pair. Pairs run back to back, so an
A/B of two builds shares the machine's state.

Usage: MEMD_TRANSCRIPTS_DIR=<dir> scripts/session-start-bench.py <memd> <memd-hook> [<memd> <memd-hook> …]
"""
import json, os, subprocess, sys, tempfile, time

RUNS = int(os.environ.get("RUNS", "50"))
PROJECTS = ["claude-code-log", "spotter-4te", "Demo", "JSSoundRecorder"]


def pct(ts):
    ts = sorted(ts)
    return ts[len(ts) // 2] * 1000, ts[int(len(ts) * 0.95)] * 1000


def bench(memd, hook):
    d = tempfile.mkdtemp(prefix="memd-ss-")
    env = {"PATH": os.environ["PATH"], "HOME": d, "MEMD_DATA_DIR": d, "MEMD_PORT": "0", "MEMD_PROVIDER": "extractive",
           "MEMD_EMBEDDINGS": "none", "MEMD_LOG": "warn", "MEMD_OBSERVER_BATCH_DEBOUNCE_MS": "50"}
    w = subprocess.Popen([memd, "serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(400):
            try:
                if json.load(open(os.path.join(d, "memd.pid")))["port"]:
                    break
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(0.05)
        subprocess.run([memd, "replay", os.environ["MEMD_TRANSCRIPTS_DIR"], "--data-dir", d, "--concurrency", "2"],
                       env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        time.sleep(2)
        ts = []
        for i in range(RUNS):
            for p in PROJECTS:
                body = json.dumps({"session_id": f"ss-{i}", "cwd": f"/home/dev/{p}", "hook_event_name": "SessionStart",
                                   "source": "startup"}).encode()
                t = time.perf_counter()
                subprocess.run([hook, "claude-code", "context"], input=body, env=env, stdout=subprocess.DEVNULL)
                ts.append(time.perf_counter() - t)
        return pct(ts)
    finally:
        w.terminate()
        w.wait()


def main():
    args = sys.argv[1:]
    for memd, hook in zip(args[0::2], args[1::2]):
        p50, p95 = bench(memd, hook)
        print(f"{memd}: SessionStart on the recorded sessions ({RUNS * len(PROJECTS)} runs) p50 {p50:.2f} ms p95 {p95:.2f} ms")


if __name__ == "__main__":
    main()
