#!/bin/bash
# The SessionStart index a user without an LLM gets: a fresh `memd serve` (extractive observer,
# embeddings off), `memd replay` of the recorded sessions, then the context of a few projects,
# the quarantine list and the row counts.
# Usage: MEMD_TRANSCRIPTS_DIR=<dir> scripts/session-start-index.sh <memd binary> <out dir>
set -euo pipefail
BIN=$1; OUT=$2; D=$(mktemp -d); mkdir -p "$OUT"
MEMD_DATA_DIR=$D HOME=$D MEMD_PORT=0 MEMD_PROVIDER=extractive MEMD_EMBEDDINGS=none MEMD_LOG=warn \
  MEMD_OBSERVER_BATCH_DEBOUNCE_MS=50 "$BIN" serve >/dev/null 2>&1 &
PID=$!
for _ in $(seq 1 100); do [ -s "$D/memd.pid" ] && break; sleep 0.1; done; sleep 1
MEMD_DATA_DIR=$D HOME=$D "$BIN" replay "${MEMD_TRANSCRIPTS_DIR:?set MEMD_TRANSCRIPTS_DIR}" --data-dir "$D" --concurrency 2 >"$OUT/replay.txt" 2>&1
PORT=$(python3 -c "import json;print(json.load(open('$D/memd.pid'))['port'])"); TOK=$(cat "$D/token")
for p in claude-code-log spotter-4te Demo JSSoundRecorder; do
  curl -s -H "Authorization: Bearer $TOK" "http://127.0.0.1:$PORT/api/context/inject?project=$p" >"$OUT/$p.txt"
done
# What the screen quarantined (issue 36: the false positives on real sessions) and of how many rows.
curl -s -H "Authorization: Bearer $TOK" "http://127.0.0.1:$PORT/api/quarantine?limit=500" >"$OUT/quarantine.json"
python3 -c "import sqlite3; c=sqlite3.connect('$D/memd.db'); print('observations', c.execute('select count(*) from observations').fetchone()[0], 'summaries', c.execute('select count(*) from session_summaries').fetchone()[0])" >"$OUT/counts.txt"
kill "$PID"; wait "$PID" 2>/dev/null || true; rm -rf "$D"
