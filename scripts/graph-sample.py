"""Prints every `fixes` edge and a seeded random sample of 30 `modified_with` edges of a memd
database, each with its evidence observation's title and modified files, for a hand check of the
graph's precision (issue 41). Usage: python3 scripts/graph-sample.py <data>/memd.db"""
import sqlite3, random, sys, json
db = sqlite3.connect(sys.argv[1])
random.seed(41)
def edges(kind):
    return db.execute("""SELECT r.id, a.project, a.name, b.name FROM relations r JOIN entities a ON a.id=r.src JOIN entities b ON b.id=r.dst
                         WHERE r.kind=? ORDER BY r.id""", (kind,)).fetchall()
for kind, n in (("fixes", 100), ("modified_with", 30)):
    es = edges(kind)
    print(f"== {kind}: {len(es)} edges")
    sample = es if len(es) <= n else random.sample(es, n)
    for rid, project, a, b in sample:
        ev = [r[0] for r in db.execute("SELECT observation_id FROM relation_evidence WHERE relation_id=?", (rid,))]
        o = ev[0]
        title, mem = db.execute("SELECT title, memory_session_id FROM observations WHERE id=?", (o,)).fetchone()
        fm = db.execute("SELECT files_modified FROM observations WHERE id=?", (o,)).fetchone()[0]
        print(f"- #{rid} [{project}] {a}  --{kind}-->  {b}   evidence {ev[:3]} ({len(ev)}) title: {title!r} files_modified: {fm}")
