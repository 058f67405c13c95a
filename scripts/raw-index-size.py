#!/usr/bin/env python3
"""The raw archive's index size against the archive (docs/measurements.md, issue 35): the stored
input and response text of every tool call, and the bytes of the FTS5 shadow tables of
`tool_uses_fts`. Usage: scripts/raw-index-size.py <memd.db>"""
import sqlite3, sys

c = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
calls, text = c.execute("SELECT count(*), coalesce(sum(length(tool_input) + length(tool_response)), 0) FROM tool_uses").fetchone()
index = sum(c.execute(q).fetchone()[0] or 0 for q in [
    "SELECT sum(length(block)) + 8 * count(*) FROM tool_uses_fts_data",
    "SELECT sum(length(term)) + 16 * count(*) FROM tool_uses_fts_idx",
    "SELECT sum(length(sz)) + 8 * count(*) FROM tool_uses_fts_docsize",
    "SELECT sum(length(k) + length(v)) FROM tool_uses_fts_config",
])
print(f"calls {calls}, archive text {text / 1e6:.2f} MB, index {index / 1e6:.2f} MB ({100 * index / max(text, 1):.1f} %)")
