#!/usr/bin/env python3
"""The two ways of ranking the rows of two query words or more (retrieval/search_prune.rs), timed
on the hybrid bench's database with Python's sqlite3: the OR's rows tested against the pairs'
(`+rowid IN`) and the disjoint cases, for the bench's sentence (3 groups with hits) and a
5-group query of its planted words; then one row of each expression alone, which is mostly the
idf scans FTS5 makes for every phrase. Medians of 20 runs. Also checks that the disjoint cases
give every row the OR's bm25.

Usage: scripts/prune-probe.py target/tmp/hybrid-bench-100000.db
"""
import itertools, sqlite3, statistics, sys, time

db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
FTS, W = "observations_fts", "10.0, 5.0, 3.0, 3.0, 1.0"  # search_sql::spec(Kind::Observation)


def exprs(groups):
    g = ["(" + " OR ".join(forms) + ")" for forms in groups]
    flat = " OR ".join(f for forms in groups for f in forms)
    pairs = " OR ".join(f"({a} AND {b})" for a, b in itertools.combinations(g, 2))
    cases = []
    for i in range(len(g) - 1):
        case = f"({g[i]} AND ({' OR '.join(g[i + 1:])}))"
        cases.append(case if i == 0 else f"({case} NOT ({' OR '.join(g[:i])}))")
    return flat, pairs, " OR ".join(cases)


def median_ms(sql, args):
    runs = []
    for _ in range(20):
        t = time.perf_counter()
        db.execute(sql, args).fetchall()
        runs.append(time.perf_counter() - t)
    return statistics.median(runs) * 1000


pruned = f"SELECT rowid, bm25({FTS},{W}) FROM {FTS} WHERE {FTS} MATCH ?1 AND +rowid IN (SELECT rowid FROM {FTS} WHERE {FTS} MATCH ?2) ORDER BY 2 LIMIT 100"
ranked = f"SELECT rowid, bm25({FTS},{W}) FROM {FTS} WHERE {FTS} MATCH ?1 ORDER BY 2 LIMIT 100"
one = f"SELECT bm25({FTS},{W}) FROM {FTS} WHERE {FTS} MATCH ?1 AND rowid = ?2"
for groups in ([['"retry"*', '"retri"*'], ['"upload"*'], ['"flaky"*']],
               [['"cach"*'], ['"invalid"*'], ['"timeout"*'], ['"token"*'], ['"bucket"*']]):
    flat, pairs, cases = exprs(groups)
    full = dict(db.execute(f"SELECT rowid, bm25({FTS},{W}) FROM {FTS} WHERE {FTS} MATCH ?", (flat,)))
    case_rows = db.execute(f"SELECT rowid, bm25({FTS},{W}) FROM {FTS} WHERE {FTS} MATCH ?", (cases,)).fetchall()
    wrong = sum(score != full[row] for row, score in case_rows)
    row = case_rows[0][0]
    print(f"{len(groups)} groups: {len(case_rows)} rows of two words or more, {wrong} scored unlike the OR | "
          f"top 100: OR IN pairs {median_ms(pruned, (flat, pairs)):.1f} ms, disjoint cases {median_ms(ranked, (cases,)):.1f} ms | "
          f"one row: OR {median_ms(one, (flat, row)):.1f} ms, disjoint cases {median_ms(one, (cases, row)):.1f} ms", flush=True)
