#!/usr/bin/env python3
"""Worker RSS after a flood of sessions (issue 34, docs/measurements.md).

Starts `memd serve` (embeddings off, extractive observer, sessions idle after 300 ms, reaper every
100 ms) in a temp data dir, posts a prompt and a tool call for each of N sessions from 8 clients,
waits until every session is processed and reaped, then samples VmRSS for 30 s without further
requests. Prints the idle, peak and after figures, the largest mappings, and the worker's memory
status.

Run: `cargo build --release && python3 scripts/flood_rss.py 20000 target/release/memd`
"""
import subprocess, json, os, sys, time, threading, http.client, tempfile
N=int(sys.argv[1]) if len(sys.argv)>1 else 20000
exe=sys.argv[2] if len(sys.argv)>2 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "target", "debug", "memd")
d=tempfile.mkdtemp()
port=39000+os.getpid()%1000
env={"PATH":os.environ["PATH"],"HOME":d,"MEMD_DATA_DIR":d,"MEMD_PORT":str(port),"MEMD_EMBEDDINGS":"none","MEMD_SESSION_IDLE_MS":"300",
     "MEMD_REAPER_INTERVAL_MS":"100","MEMD_OBSERVER_BATCH_DEBOUNCE_MS":"10","MEMD_PROVIDER":"extractive","MEMD_LOG":"warn"}
p=subprocess.Popen([exe,"serve"],env=env,stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL)
def rss():
    for l in open(f"/proc/{p.pid}/status"):
        if l.startswith("VmRSS"): return int(l.split()[1])
tok=None
for _ in range(200):
    try:
        tok=open(d+"/token").read().strip()
        c=http.client.HTTPConnection("127.0.0.1",port); c.request("GET","/api/readiness"); r=c.getresponse(); r.read()
        if r.status==200: break
    except Exception: pass
    time.sleep(0.1)
time.sleep(1)
idle=rss()
def maps_now():
    maps={}; cur=None
    for l in open(f"/proc/{p.pid}/smaps"):
        parts=l.split()
        if len(parts)>=5 and '-' in parts[0] and ':' not in parts[0]:
            cur=parts[5] if len(parts)>5 else '[anon]'
        elif l.startswith('Rss:') and cur is not None:
            maps[cur]=maps.get(cur,0)+int(parts[1])
    return sorted(maps.items(), key=lambda kv:-kv[1])[:4]
print("idle maps", maps_now())
H={"Authorization":"Bearer "+tok,"Content-Type":"application/json","Host":f"127.0.0.1:{port}"}
def post(c,path,body):
    c.request("POST",path,json.dumps(body),H); r=c.getresponse(); r.read(); assert r.status==200,(r.status)
def worker(t):
    c=http.client.HTTPConnection("127.0.0.1",port)
    for i in range(t,N,8):
        sid=f"mem-{i}"
        post(c,"/api/sessions/init",{"contentSessionId":sid,"prompt":"fix the build","cwd":"/tmp/proj"})
        post(c,"/api/sessions/observations",{"contentSessionId":sid,"tool_name":"Bash","tool_input":{"command":f"echo step {i}"},"tool_response":{"stdout":f"step {i} done","stderr":""},"tool_use_id":f"toolu_{i}","cwd":"/tmp/proj"})
t0=time.time()
ts=[threading.Thread(target=worker,args=(t,)) for t in range(8)]
[t.start() for t in ts]; [t.join() for t in ts]
peak=rss()
def status():
    c=http.client.HTTPConnection("127.0.0.1",port); c.request("GET","/api/status",headers=H); r=c.getresponse(); return json.loads(r.read())
while True:
    s=status(); peak=max(peak,rss())
    if s["sessions"]["live"]==0 and s["pending"]["pending"]==0 and s["pending"]["processing"]==0: break
    time.sleep(0.5)
done=time.time()-t0
after=[]
for _ in range(30):
    time.sleep(1); after.append(rss())
print("rss over 30 s:", after[::5])
det={}
for l in open(f"/proc/{p.pid}/status"):
    if l.startswith(("RssAnon","RssFile","RssShmem")): det[l.split(":")[0]]=l.split()[1]
print(det)
maps={}; cur=None
for l in open(f"/proc/{p.pid}/smaps"):
    parts=l.split()
    if len(parts)>=5 and '-' in parts[0] and not l.startswith(('Rss','Pss','Size')) and ':' not in parts[0]:
        cur=parts[5] if len(parts)>5 else '[anon]'
    elif l.startswith('Rss:') and cur is not None:
        maps[cur]=maps.get(cur,0)+int(parts[1])
print(sorted(maps.items(), key=lambda kv:-kv[1])[:6])
print(f"N={N} idle={idle} KiB peak={peak} KiB after-reap={after[0]} KiB after-30s={after[-1]} KiB ratio={after[-1]/idle:.2f} ingest+process {done:.0f}s")
print(json.dumps(status().get("memory")))
p.terminate(); p.wait()
